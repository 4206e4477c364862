"""The workflow language: a subset of Iterion's ``.iter``, read into :mod:`recipes.graph.ir`.

- :func:`parse` reads a file's text into the IR and the diagnostics of what could not be read
  (parse errors, constructs outside the subset); :func:`unparse` writes the IR back.
- :class:`Diagnostic`: a code, a position, a message and a fix line; :data:`CATALOG` holds
  every code's default severity and fix.
- :func:`compile_expr`: the bounded expression language of ``compute`` and ``when "…"``;
  :func:`references` / :func:`render`: ``{{…}}`` templates;
  :func:`bind_command`: a tool's command that reads each reference from the environment
  (:func:`unsafe_references`: those standing where the shell would evaluate a value);
  :func:`duration_seconds`: ``"30m"``-style durations; :func:`same`: the language's JSON equality.

Errors: nothing here raises on a bad file (problems are diagnostics); :func:`unparse` raises
``UsageError`` for a text no form can carry; an expression raises :class:`ExpressionError`.
"""

from recipes.expressions import (
    ARITY,
    MISSING,
    OUTSIDE_SUBSET,
    Expr,
    ExpressionError,
    Ref,
    as_text,
    compile_expr,
    duration_seconds,
    references,
    render,
    same,
    truthy,
)
from recipes.graph.ir import Pos
from recipes.graph.language._diagnostics import (
    CATALOG,
    CatalogEntry,
    Diagnostic,
    Severity,
    diag,
    did_you_mean,
)
from recipes.graph.language._json import VALUE_DEPTH, nests_deeper, read_json
from recipes.graph.language._parse import parse
from recipes.graph.language._shell import Bound, bind_command, unsafe_references
from recipes.graph.language._unparse import unparse

__all__ = [
    "ARITY",
    "CATALOG",
    "MISSING",
    "OUTSIDE_SUBSET",
    "VALUE_DEPTH",
    "Bound",
    "CatalogEntry",
    "Diagnostic",
    "Expr",
    "ExpressionError",
    "Pos",
    "Ref",
    "Severity",
    "as_text",
    "bind_command",
    "compile_expr",
    "diag",
    "did_you_mean",
    "duration_seconds",
    "nests_deeper",
    "parse",
    "read_json",
    "references",
    "render",
    "same",
    "truthy",
    "unparse",
    "unsafe_references",
]
