"""The expression language's one error."""

from __future__ import annotations

__all__ = ["ExpressionError"]


class ExpressionError(Exception):
    """An expression that does not parse, or fails while evaluating (``EXPRESSION_FAILED``)."""

    def __init__(self, message: str, col: int = 1) -> None:
        super().__init__(message)
        self.col = col
