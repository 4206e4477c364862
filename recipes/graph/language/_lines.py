"""The syntax of one line of a workflow file, read with lark.

The indentation layer (:mod:`._blocks`) hands each line here with the rule its context expects:
a property ``key: value``, a schema or var field ``name: type [enum: …] = default``, or an edge
``a -> b when … as loop(N) with { … }``. Values are quoted strings (kept verbatim: Iterion's
profile 1), backtick raw strings, one plain bare word, inline lists, or ``|`` (a block scalar,
whose text is the block's raw body).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from lark import Lark, Token, Transformer, UnexpectedInput, v_args

__all__ = ["BLOCK", "EdgeSyntax", "FieldSyntax", "LineError", "PropSyntax", "Value", "parse_line"]

GRAMMAR = r"""
start_prop: NAME ":" value?
start_field: NAME ":" type_expr enum? default?
start_edge: ref segment+

segment: ARROW ref clause*
ref: NAME ("." NAME)*
default: "=" item
type_expr: TYPE
enum: "[" "enum" ":" STRING ("," STRING)* "]"

?clause: "when" "not" NAME          -> when_not
       | "when" NAME                -> when_field
       | "when" STRING              -> when_expr
       | "else"                     -> otherwise
       | "as" "foreach" NAME "(" NAME "in" STRING ")" -> foreach
       | "as" NAME "(" cap ")"      -> loop
       | "with" "{" [mapping ("," mapping)* ","?] "}" -> with_map
cap: INT | STRING | UNBOUNDED INT?
mapping: NAME ":" item

value: item | list | PIPE
list: "[" [item ("," item)*] "]"
item: STRING | RAW | BARE | INT

ARROW: "->"
PIPE: "|"
UNBOUNDED: "unbounded"
NAME: /[A-Za-z_][A-Za-z0-9_]*/
TYPE: /[A-Za-z_][A-Za-z0-9_]*(\[\])?/
INT.2: /[0-9]+(?![^\s\[\]{}(),#])/
STRING: /"(\\.|[^"\\\n])*"/
RAW: /`[^`]*`/
BARE: /[^\s"`'\[\]{}(),#|=][^\s\[\]{}(),#]*/
COMMENT: /#[^\n]*/
%ignore /[ \t\r\n]+/
%ignore COMMENT
"""

BLOCK = object()
"""The value of ``key: |``: the text is the block's raw body."""


@dataclass(frozen=True)
class Value:
    """A scalar as written: ``form`` is ``string`` (quoted), ``raw``, ``bare`` or ``int``."""

    text: str
    form: str
    col: int


@dataclass(frozen=True)
class PropSyntax:
    """``key: value``; ``value`` is a :class:`Value`, a list of them, :data:`BLOCK` or ``None``
    (a nested block follows)."""

    key: str
    value: Any
    col: int


@dataclass(frozen=True)
class FieldSyntax:
    """``name: type [enum: …] = default``."""

    name: str
    type: str
    type_col: int
    enum: tuple[str, ...]
    default: Value | None


@dataclass
class EdgeSyntax:
    """A chain ``a -> b -> c`` and its clauses (by segment, in order, as ``(kind, data, col)``)."""

    refs: list[tuple[str, int]]
    clauses: list[list[tuple[str, Any, int]]] = field(default_factory=list)


class LineError(Exception):
    """A line that does not parse: ``col`` (1-based in the line) and what was expected."""

    def __init__(self, message: str, col: int, unterminated: bool = False) -> None:
        super().__init__(message)
        self.col = col
        self.unterminated = unterminated


def _unquote(token: Token) -> Value:
    text = str(token)
    col = token.column or 1
    if token.type == "STRING":
        return Value(text[1:-1], "string", col)
    if token.type == "RAW":
        return Value(text[1:-1], "raw", col)
    return Value(text, "int" if token.type == "INT" else "bare", col)


@v_args(inline=True)
class _ToSyntax(Transformer[Token, Any]):
    def item(self, token: Token) -> Value:
        return _unquote(token)

    def list(self, *items: Value | None) -> list[Value]:
        return [i for i in items if i is not None]

    def value(self, inner: Any) -> Any:
        if isinstance(inner, Token):  # the block scalar's pipe
            return BLOCK
        return inner

    def start_prop(self, key: Token, value: Any = None) -> PropSyntax:
        return PropSyntax(str(key), value, key.column or 1)

    def type_expr(self, name: Token) -> tuple[str, int]:
        return str(name), name.column or 1

    def enum(self, *values: Token) -> tuple[str, ...]:
        return tuple(str(v)[1:-1] for v in values)

    def default(self, item: Value) -> Value:
        return item

    def start_field(self, name: Token, type_: tuple[str, int], *rest: Any) -> FieldSyntax:
        enum = next((r for r in rest if isinstance(r, tuple)), ())
        default = next((r for r in rest if isinstance(r, Value)), None)
        return FieldSyntax(str(name), type_[0], type_[1], enum, default)

    def ref(self, *names: Token) -> tuple[str, int]:
        return ".".join(str(n) for n in names), names[0].column or 1

    def when_not(self, name: Token) -> tuple[str, Any, int]:
        return ("when_not", str(name), name.column or 1)

    def when_field(self, name: Token) -> tuple[str, Any, int]:
        return ("when_field", str(name), name.column or 1)

    def when_expr(self, text: Token) -> tuple[str, Any, int]:
        return ("when_expr", str(text)[1:-1], text.column or 1)

    def otherwise(self) -> tuple[str, Any, int]:
        return ("else", None, 0)

    def foreach(self, name: Token, *_: Any) -> tuple[str, Any, int]:
        return ("foreach", str(name), name.column or 1)

    def cap(self, *tokens: Token) -> Any:
        first = tokens[0]
        if first.type == "INT":
            return int(first)
        if first.type == "STRING":
            return ("expression", str(first)[1:-1])
        return ("unbounded", None)

    def loop(self, name: Token, cap: Any) -> tuple[str, Any, int]:
        return ("loop", (str(name), cap), name.column or 1)

    def mapping(self, key: Token, value: Value) -> tuple[str, str, int]:
        return (str(key), value.text, key.column or 1)

    def with_map(self, *mappings: Any) -> tuple[str, Any, int]:
        kept = [m for m in mappings if m is not None]
        return ("with", kept, kept[0][2] if kept else 0)

    def segment(self, _arrow: Token, ref: tuple[str, int], *clauses: Any) -> Any:
        return ref, list(clauses)

    def start_edge(self, first: tuple[str, int], *segments: Any) -> EdgeSyntax:
        edge = EdgeSyntax([first])
        for ref, clauses in segments:
            edge.refs.append(ref)
            edge.clauses.append(clauses)
        return edge


_READABLE = {
    "COLON": "':'", "LSQB": "'['", "RSQB": "']'", "LBRACE": "'{'", "RBRACE": "'}'",
    "LPAR": "'('", "RPAR": "')'", "COMMA": "','", "EQUAL": "'='", "ARROW": "'->'",
    "NAME": "a name", "TYPE": "a type", "STRING": "a quoted string", "RAW": "a raw string",
    "BARE": "a word", "INT": "an integer", "PIPE": "'|'", "UNBOUNDED": "'unbounded'",
}  # fmt: skip

@functools.cache
def _parser() -> Lark:
    """The line parser, built on first use (a process that reads no workflow does not pay for
    building it)."""
    return Lark(
        GRAMMAR,
        start=["start_prop", "start_field", "start_edge"],
        parser="lalr",
        lexer="contextual",
        maybe_placeholders=False,
    )


def parse_line(text: str, rule: str) -> Any:
    """Parse one line with ``rule`` (``prop``, ``field`` or ``edge``).

    Returns a :class:`PropSyntax`, :class:`FieldSyntax` or :class:`EdgeSyntax`; raises
    :class:`LineError` with the column of the first thing that does not fit.
    """
    try:
        tree = _parser().parse(text, start=f"start_{rule}")
    except UnexpectedInput as exc:
        token = getattr(exc, "token", None)
        at_end = token is not None and token.type == "$END"
        where = exc.pos_in_stream if exc.pos_in_stream is not None else len(text)
        char = "" if at_end or where >= len(text) else text[where]
        col = (len(text) + 1) if at_end else (getattr(exc, "column", 1) or 1)
        unterminated = char in ('"', "`")
        expected = getattr(exc, "expected", None) or getattr(exc, "allowed", None) or set()
        shown = sorted({_READABLE.get(name, name.lower()) for name in expected})
        got = repr(char) if char else "the end of the line"
        want = ", ".join(shown[:6]) if shown else "something else"
        message = (
            f"unterminated string starting at {got}"
            if unterminated
            else (f"unexpected {got}; expected {want}")
        )
        raise LineError(message, col, unterminated) from None
    return _ToSyntax().transform(tree)
