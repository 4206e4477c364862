"""The bounded expression language of ``compute`` nodes and quoted ``when`` conditions.

No I/O and no unbounded loop: ``map``/``filter``/``reduce`` walk a finite list, every step of an
evaluation is counted (at most :data:`MAX_STEPS`), no value holds more than :data:`MAX_SIZE`
elements and characters (shared parts counted each time they appear), and one evaluation
builds no more than :data:`MAX_BUILT` in all.
Literals: numbers, ``'strings'``/``"strings"``, ``true``/``false``/``null`` and ``[lists]``.
Namespaces: ``vars``, ``input``, ``outputs``, ``artifacts``, ``loop``, ``run``; in a ``when``
condition a bare name is a field of the edge's source output. Built-ins: Iterion's (``length``,
``concat``, ``unique``, ``contains``, ``join``, ``tail``, ``if``, ``sort``, ``keys``, ``values``,
``slice``, ``sum``, ``min``, ``max``, ``flatten``, ``floor``, ``round``) plus ``upper``,
``lower`` and ``trim``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from lark import Lark, Token, Transformer, UnexpectedInput, v_args

from recipes.expressions._evaluate import (
    ARITY,
    MAX_BUILT,
    MAX_SIZE,
    MAX_STEPS,
    Evaluator,
    ExpressionError,
    truthy,
)

__all__ = [
    "ARITY",
    "MAX_BUILT",
    "MAX_SIZE",
    "MAX_STEPS",
    "NAMESPACES",
    "Expr",
    "ExpressionError",
    "compile_expr",
    "truthy",
]

GRAMMAR = r"""
?start: expr
?expr: or_
?or_: and_ | or_ OR and_                 -> logic
?and_: not_ | and_ AND not_              -> logic
?not_: NOT not_                          -> negate | compare
?compare: sum | sum COMP sum             -> cmp
?sum: product | sum ADDOP product        -> binop
?product: unary | product MULOP unary    -> binop
?unary: "-" unary                        -> neg | postfix
?postfix: atom | postfix "[" expr "]"    -> index
?atom: NUMBER                            -> number
     | STRING                            -> string
     | "true"                            -> true
     | "false"                           -> false
     | "null"                            -> null
     | NAME ("." NAME)*                  -> path
     | NAME "(" [expr ("," expr)*] ")"   -> call
     | MAPFILTER "(" expr "," fn ")"     -> mapfilter
     | "reduce" "(" expr "," expr "," fn ")" -> reduce
     | "[" [expr ("," expr)*] "]"        -> list
     | "(" expr ")"
fn: (NAME | "(" NAME ("," NAME)* ")") "=>" expr
OR.2: /\|\||or\b/
AND.2: /&&|and\b/
NOT.2: /!(?!=)|not\b/
COMP: "==" | "!=" | "<=" | ">=" | "<" | ">"
ADDOP: "+" | "-"
MULOP: "*" | "/" | "%"
MAPFILTER.2: /(map|filter)\b/
NUMBER: /[0-9]+(\.[0-9]+)?/
STRING: /"[^"]*"/ | /'[^']*'/
NAME: /[A-Za-z_][A-Za-z0-9_]*/
%ignore /[ \t\r\n]+/
"""

NAMESPACES = frozenset({"vars", "input", "outputs", "artifacts", "loop", "run"})


@v_args(inline=True)
class _ToAst(Transformer[Token, Any]):
    def number(self, tok: Token) -> Any:
        return ("const", float(tok) if "." in tok else int(tok))

    def string(self, tok: Token) -> Any:
        return ("const", str(tok)[1:-1])

    def true(self) -> Any:
        return ("const", True)

    def false(self) -> Any:
        return ("const", False)

    def null(self) -> Any:
        return ("const", None)

    def path(self, *names: Token) -> Any:
        return ("path", tuple(str(n) for n in names), names[0].column or 1)

    def call(self, name: Token, *args: Any) -> Any:
        return ("call", str(name), tuple(a for a in args if a is not None), name.column or 1)

    def fn(self, *parts: Any) -> Any:
        return (tuple(str(p) for p in parts[:-1]), parts[-1])

    def mapfilter(self, kind: Token, coll: Any, fn: Any) -> Any:
        return (str(kind), coll, fn)

    def reduce(self, coll: Any, init: Any, fn: Any) -> Any:
        return ("reduce", coll, init, fn)

    def logic(self, a: Any, op: Token, b: Any) -> Any:
        return ("or" if op in ("||", "or") else "and", a, b)

    def negate(self, _op: Token, a: Any) -> Any:
        return ("not", a)

    def neg(self, a: Any) -> Any:
        return ("neg", a)

    def cmp(self, a: Any, op: Token, b: Any) -> Any:
        return ("cmp", str(op), a, b)

    def binop(self, a: Any, op: Token, b: Any) -> Any:
        return ("bin", str(op), a, b)

    def list(self, *items: Any) -> Any:
        return ("list", tuple(i for i in items if i is not None))

    def index(self, target: Any, key: Any) -> Any:
        return ("index", target, key)


@functools.cache
def _parser() -> Lark:
    """The expression parser, built on first use (building it takes a fresh process's tens of
    milliseconds, which a process that compiles no expression should not pay)."""
    return Lark(GRAMMAR, parser="lalr", lexer="contextual")


class Expr:
    """A parsed expression: its text, its calls and references, and :meth:`evaluate`."""

    def __init__(self, text: str, ast: Any) -> None:
        self.text = text
        self.ast = ast

    def calls(self) -> list[tuple[str, int, int]]:
        """Every built-in call: ``(name, number of arguments, column)``."""
        found: list[tuple[str, int, int]] = []
        _walk(self.ast, lambda n: found.append((n[1], len(n[2]), n[3])) if n[0] == "call" else None)
        return found

    def paths(self) -> list[tuple[tuple[str, ...], int]]:
        """Every name path read (lambda parameters included): ``(names, column)``."""
        found: list[tuple[tuple[str, ...], int]] = []
        _walk(self.ast, lambda n: found.append((n[1], n[2])) if n[0] == "path" else None)
        return found

    def parameters(self) -> set[str]:
        """The names the expression's functions bind (``x`` in ``map(list, x => …)``)."""
        found: set[str] = set()

        def visit(node: Any) -> None:
            if node[0] in ("map", "filter"):
                found.update(node[2][0])
            elif node[0] == "reduce":
                found.update(node[3][0])

        _walk(self.ast, visit)
        return found

    def evaluate(self, scope: Mapping[str, Any], bare: Callable[[str], Any] | None = None) -> Any:
        """The value of the expression over ``scope`` (namespace -> value); a bare name is
        ``bare(name)`` (``None`` when not given). Raises :class:`ExpressionError`, and only
        that: a value a built-in cannot take is the expression's failure, not a crash."""
        try:
            return Evaluator(scope, bare).run(self.ast)
        except RecursionError:  # a value nested too deep to write (``join`` of it, say)
            raise ExpressionError(
                "a value nests too deeply to be written; make it flatter"
            ) from None
        except (ArithmeticError, TypeError, ValueError) as exc:
            raise ExpressionError(f"the expression failed: {exc}") from None


def _children(node: Any) -> list[Any]:
    kind = node[0]
    if kind in ("const", "path"):
        return []
    if kind in ("call", "list"):
        return list(node[2] if kind == "call" else node[1])
    if kind in ("neg", "not"):
        return [node[1]]
    if kind in ("cmp", "bin"):
        return [node[2], node[3]]
    if kind in ("map", "filter"):
        return [node[1], node[2][1]]
    if kind == "reduce":
        return [node[1], node[2], node[3][1]]
    return [node[1], node[2]]  # and, or, index


def _walk(node: Any, visit: Callable[[Any], object]) -> None:
    visit(node)
    for child in _children(node):
        _walk(child, visit)


MAX_DEPTH = 100
"""How deeply an expression may nest (``1+1+…`` nests one level a term): what its checks and
its evaluation walk, recursively, stays well inside Python's stack."""


def compile_expr(text: str) -> Expr:
    """Parse ``text``; raises :class:`ExpressionError` (with the column) when it does not, or
    nests deeper than :data:`MAX_DEPTH`."""
    try:
        tree = _parser().parse(text)
        ast = _ToAst().transform(tree)
    except UnexpectedInput as exc:
        col = getattr(exc, "column", 1) or 1
        raise ExpressionError(f"the expression does not parse at column {col}", col) from None
    except RecursionError:  # the parse tree's own walk ran out of stack
        ast = None
    if ast is None or _deeper(ast, MAX_DEPTH):
        raise ExpressionError(
            f"the expression nests deeper than {MAX_DEPTH} levels; split it (a compute node "
            "per part)"
        )
    return Expr(text, ast)


def _deeper(ast: Any, limit: int) -> bool:
    """Whether ``ast`` nests deeper than ``limit``, walked one level at a time."""
    level = [ast]
    for _ in range(limit):
        level = [child for node in level for child in _children(node)]
        if not level:
            return False
    return True
