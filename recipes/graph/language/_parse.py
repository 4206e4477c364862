"""From a workflow file's text to the IR: declarations, properties, fields and edges.

The indentation layer gives the block tree; each line is read by the line grammar; this module
checks what each block may hold and builds :mod:`recipes.graph.ir`. It never stops at the
first problem: everything it can read is in the IR, and every problem is a diagnostic.
Cross-references (unknown nodes, schemas, prompts; cycles; types) are the validator's
(:mod:`recipes.graph.compiler`).
"""

from __future__ import annotations

import difflib
import re
from typing import Any

from recipes.graph import ir
from recipes.graph.language._blocks import Block, read_blocks
from recipes.graph.language._diagnostics import Diagnostic, Pos, diag
from recipes.graph.language._fields import fields, var_fields, workflow
from recipes.graph.language._lines import (
    BLOCK,
    LineError,
    PropSyntax,
    Value,
    parse_line,
)
from recipes.graph.language._nodes import build_node
from recipes.graph.language._props import ITERION_ONLY, SUPPORTED, TOP_LEVEL, UNSUPPORTED_TOP_LEVEL

__all__ = ["parse"]

_HEADER = re.compile(
    r"^(?P<kw>[A-Za-z_][A-Za-z0-9_]*)(?:\s+(?P<name>[A-Za-z_][A-Za-z0-9_]*))?\s*"
    r"(?P<params>\([^)]*\))?\s*:\s*(?P<rest>.*)$"
)


def parse(text: str, file: str = "<string>") -> tuple[ir.Graph, list[Diagnostic]]:
    """Read a workflow file's ``text`` (``file`` names it in positions).

    Returns the IR of everything that could be read and the diagnostics (parse errors and
    constructs outside the subset); the IR is only meaningful when no diagnostic is an error.
    A byte-order mark some editors write first is not part of the text.
    """
    blocks, diagnostics = read_blocks(text.removeprefix("\ufeff"), file)
    parser = _Parser(file, diagnostics)
    for block in blocks:
        parser.declaration(block)
    return parser.graph(), parser.diagnostics


class _Parser:
    def __init__(self, file: str, diagnostics: list[Diagnostic]) -> None:
        self.file = file
        self.diagnostics = diagnostics
        self.vars: list[ir.Var] = []
        self.schemas: list[ir.Schema] = []
        self.prompts: list[ir.Prompt] = []
        self.nodes: list[ir.Node] = []
        self.workflows: list[ir.Workflow] = []

    def graph(self) -> ir.Graph:
        return ir.Graph(
            vars=tuple(self.vars),
            schemas=tuple(self.schemas),
            prompts=tuple(self.prompts),
            nodes=tuple(self.nodes),
            workflows=tuple(self.workflows),
            file=self.file,
        )

    # ------------------------------------------------------------------ helpers

    def pos(self, block: Block, col: int = 1) -> Pos:
        return Pos(self.file, block.line.no, block.line.indent + max(col, 1))

    def report(self, code: str, message: str, pos: Pos, **kw: Any) -> None:
        self.diagnostics.append(diag(code, message, pos, **kw))

    def line(self, block: Block, rule: str) -> Any:
        try:
            return parse_line(block.line.text, rule)
        except LineError as exc:
            code = "E004" if exc.unterminated else "E001"
            self.report(code, str(exc), self.pos(block, exc.col))
            return None

    def no_children(self, block: Block) -> None:
        if block.children:
            self.report("E001", "unexpected indented block", self.pos(block.children[0]))

    # ------------------------------------------------------------------ declarations

    def declaration(self, block: Block) -> None:
        match = _HEADER.match(block.line.text)
        keyword = match["kw"] if match else block.line.text.split()[0].rstrip(":")
        if keyword in UNSUPPORTED_TOP_LEVEL:
            what = UNSUPPORTED_TOP_LEVEL[keyword]
            self.report("S001", f"{what}: outside the subset this engine runs", self.pos(block))
            return
        if match is None or keyword not in TOP_LEVEL or match["params"]:
            close = difflib.get_close_matches(keyword, sorted(TOP_LEVEL), n=1)
            hint = f"; did you mean `{close[0]}`?" if close else ""
            self.report("E001", f"unknown declaration `{keyword}`{hint}", self.pos(block))
            return
        rest = match["rest"].strip()
        if rest and not rest.startswith("#"):
            self.report("E001", f"unexpected {rest!r} after the header", self.pos(block))
        name = match["name"]
        if keyword == "vars":
            self.vars.extend(var_fields(self, block))
            return
        if not name:
            self.report("E002", f"`{keyword}` needs a name: `{keyword} NAME:`", self.pos(block))
            return
        pos = self.pos(block, match.start("name") + 1)
        if keyword == "prompt":
            self.prompts.append(ir.Prompt(name=name, text="\n".join(block.raw or []), pos=pos))
        elif keyword == "schema":
            self.schemas.append(ir.Schema(name=name, fields=fields(self, block), pos=pos))
        elif keyword == "workflow":
            self.workflows.append(workflow(self, block, name, pos))
        else:
            node = build_node(self, block, keyword, name, pos)
            if node is not None:
                self.nodes.append(node)

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
