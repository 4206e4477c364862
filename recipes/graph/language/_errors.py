"""The expression language's one error."""

from __future__ import annotations

__all__ = ["ExpressionError"]


class ExpressionError(Exception):
    """An expression that does not parse, or fails while evaluating. ``code`` is the failure a
    compute node records: ``EXPRESSION_FAILED``, or ``VALUE_TOO_LARGE`` for a value that grew
    past the language's bounds (:data:`~recipes.graph.language._sizes.MAX_SIZE`)."""

    def __init__(self, message: str, col: int = 1, *, code: str = "EXPRESSION_FAILED") -> None:
        super().__init__(message)
        self.col = col
        self.code = code
