"""What every reader of a block uses: positions, diagnostics, and a property's value read as
a name, a text, a list of words, a choice or a count (each problem reported, never raised).

The readers of fields, edges, nodes and fallbacks take a :class:`Reader`; the parser
(:mod:`recipes.graph.language._parse`) is one, and calls them.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

from recipes.graph import ir
from recipes.graph.language._blocks import Block
from recipes.graph.language._diagnostics import Diagnostic, diag
from recipes.graph.language._lines import BLOCK, LineError, PropSyntax, Value, parse_line
from recipes.graph.language._props import ITERION_ONLY, SUPPORTED

__all__ = ["Reader"]

_MISSING_COLON = re.compile(r"^(?P<key>[A-Za-z_][A-Za-z0-9_]*)\s+\S")


class Reader:
    """Reads the blocks of the file ``file``, appending what it finds wrong to
    ``diagnostics``."""

    def __init__(self, file: str, diagnostics: list[Diagnostic]) -> None:
        self.file = file
        self.diagnostics = diagnostics

    def pos(self, block: Block, col: int = 1) -> ir.Pos:
        return ir.Pos(self.file, block.line.no, block.line.indent + max(col, 1))

    def report(self, code: str, message: str, pos: ir.Pos, **kw: Any) -> None:
        self.diagnostics.append(diag(code, message, pos, **kw))

    def line(self, block: Block, rule: str) -> Any:
        try:
            return parse_line(block.line.text, rule)
        except LineError as exc:
            read = self._without_colon(block, rule)
            if read is not None:
                return read
            code = "E004" if exc.unterminated else "E001"
            self.report(code, str(exc), self.pos(block, exc.col))
            return None

    def _without_colon(self, block: Block, rule: str) -> Any:
        """A property written without its colon (``model "openai:gpt-4.1"``): said so (E001),
        and read as if the colon were there, so that the rest of the file is checked as
        meant; ``None`` when the line is not that."""
        missing = _MISSING_COLON.match(block.line.text) if rule == "prop" else None
        if missing is None:
            return None
        key = missing["key"]
        try:
            read = parse_line(f"{key}:{block.line.text[missing.end('key'):]}", rule)
        except LineError:
            return None
        self.report("E005", f"missing `:` after `{key}`: write `{key}: …`", self.pos(block))
        return read

    def no_children(self, block: Block) -> None:
        if block.children:
            self.report("E001", "unexpected indented block", self.pos(block.children[0]))

    def props(self, block: Block, kind: str) -> dict[str, tuple[PropSyntax, Block]]:
        """The properties of ``block`` (a ``kind`` block), checked against what it accepts."""
        found: dict[str, tuple[PropSyntax, Block]] = {}
        for child in block.children:
            prop = self.line(child, "prop")
            if prop is None:
                continue
            where = self.pos(child, prop.col)
            if prop.key in ITERION_ONLY.get(kind, ()):
                self.report("S001", f"`{prop.key}:` on a {kind} is outside the subset", where)
                continue
            if prop.key not in SUPPORTED[kind]:
                known = sorted(SUPPORTED[kind] | ITERION_ONLY.get(kind, frozenset()))
                close = difflib.get_close_matches(prop.key, known, n=1)
                hint = f"; did you mean `{close[0]}`?" if close else ""
                self.report(
                    "E012", f"unknown property `{prop.key}` in this {kind} block{hint}", where
                )
                continue
            if prop.key in found:
                self.report("E010", f"property `{prop.key}` is given twice", where)
                continue
            found[prop.key] = (prop, child)
        return found

    def nested(self, entry: tuple[PropSyntax, Block] | None) -> Block | None:
        """A property that opens an indented block (``expr:``, ``budget:``, ``vars:``)."""
        if entry is None:
            return None
        prop, block = entry
        if prop.value is not None:
            self.report("E002", f"`{prop.key}:` takes an indented block, not a value",
                        self.pos(block, prop.col))  # fmt: skip
            return None
        return block

    def text(self, entry: tuple[PropSyntax, Block] | None) -> str | None:
        """A scalar property's text (quoted, raw, bare or a block scalar)."""
        if entry is None:
            return None
        prop, block = entry
        if prop.value is BLOCK:
            return "\n".join(block.raw or [])
        if isinstance(prop.value, Value):
            self.no_children(block)
            return prop.value.text
        what = "a list" if isinstance(prop.value, list) else "nothing"
        self.report("E002", f"`{prop.key}:` takes one value, got {what}", self.pos(block))
        return None

    def words(self, entry: tuple[PropSyntax, Block] | None, example: str) -> tuple[str, ...] | None:
        """A list property's items (``key: [a, b]``); ``example`` is such a list, shown in the
        error when the value is not one."""
        if entry is None:
            return None
        prop, block = entry
        self.no_children(block)
        if isinstance(prop.value, list):
            return tuple(v.text for v in prop.value)
        self.report("E002", f"`{prop.key}:` takes a list: `{prop.key}: {example}`", self.pos(block))
        return None

    def name_ref(self, entry: tuple[PropSyntax, Block] | None) -> str | None:
        """A property naming a declaration: one bare name."""
        text = self.text(entry)
        if entry is None or text is None:
            return None
        prop, block = entry
        if (
            not isinstance(prop.value, Value)
            or prop.value.form != "bare"
            or not text.isidentifier()
        ):
            self.report(
                "E002",
                f"`{prop.key}:` takes a bare name (a declared schema, node...), not {text!r}",
                self.pos(block, prop.value.col if isinstance(prop.value, Value) else 1),
            )
            return None
        return text

    def text_ref(self, entry: tuple[PropSyntax, Block] | None) -> ir.Text | None:
        """A prompt: a bare name refers to a declared one; any other text is the prompt."""
        if entry is None:
            return None
        text = self.text(entry)
        prop, block = entry
        if text is None:
            return None
        pos = self.pos(block, prop.value.col if isinstance(prop.value, Value) else 1)
        if isinstance(prop.value, Value) and prop.value.form == "bare" and text.isidentifier():
            return ir.Text(ref=text, pos=pos)
        return ir.Text(text=text, pos=pos)

    def choice(
        self, entry: tuple[PropSyntax, Block] | None, accepted: tuple[str, ...]
    ) -> str | None:
        text = self.text(entry)
        if entry is not None and text is not None and text not in accepted:
            self.report(
                "E020",
                f"`{entry[0].key}: {text}` is not one of {', '.join(accepted)}",
                self.pos(entry[1]),
            )
            return None
        return text

    def count(self, entry: tuple[PropSyntax, Block] | None) -> int | None:
        text = self.text(entry)
        if entry is None or text is None:
            return None
        if not text.isdigit() or int(text) < 1:
            self.report(
                "P008", f"`{entry[0].key}: {text}` is not an integer >= 1", self.pos(entry[1])
            )
            return None
        return int(text)
