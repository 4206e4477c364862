"""The bounded expression language: what a workflow's ``compute`` and ``when "…"`` evaluate,
and what an approval policy's rules test (``args.env == 'prod'``).

- :func:`compile_expr` parses an expression once (:class:`ExpressionError` when it does not);
  :meth:`Expr.evaluate` evaluates it over named values (``vars``, ``outputs``, ``args``...),
  bounded in steps and in the size of every value it builds; no I/O, no names but the ones
  given and the built-ins (:data:`ARITY`). :func:`truthy` and :func:`same` are its truth and
  its JSON equality.
- :func:`references` / :func:`render`: ``{{…}}`` templates; :func:`duration_seconds`:
  ``"30m"``-style durations.

It depends on nothing of pi-recipes: the workflow language (:mod:`recipes.graph.language`)
and the approval policies build on it.
"""

from recipes.expressions._builtins import same
from recipes.expressions._evaluate import ARITY, ExpressionError, truthy
from recipes.expressions._expr import Expr, compile_expr
from recipes.expressions._templates import (
    MISSING,
    OUTSIDE_SUBSET,
    Ref,
    as_text,
    duration_seconds,
    references,
    render,
)

__all__ = [
    "ARITY",
    "MISSING",
    "OUTSIDE_SUBSET",
    "Expr",
    "ExpressionError",
    "Ref",
    "as_text",
    "compile_expr",
    "duration_seconds",
    "references",
    "render",
    "same",
    "truthy",
]
