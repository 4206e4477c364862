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

from recipes.graph import ir
from recipes.graph.language._blocks import Block, read_blocks
from recipes.graph.language._diagnostics import Diagnostic
from recipes.graph.language._fields import fields, var_fields, workflow
from recipes.graph.language._nodes import build_node
from recipes.graph.language._props import TOP_LEVEL, UNSUPPORTED_TOP_LEVEL
from recipes.graph.language._reader import Reader

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


class _Parser(Reader):
    """A :class:`Reader` that also collects the file's declarations, in order."""

    def __init__(self, file: str, diagnostics: list[Diagnostic]) -> None:
        super().__init__(file, diagnostics)
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

    def declaration(self, block: Block) -> None:
        match = _HEADER.match(block.line.text)
        if match is None:  # a header without its colon (`agent draft`): said, then read
            match = _HEADER.match(block.line.text.split(" #")[0].rstrip() + ":")
            if match is not None and match["kw"] in TOP_LEVEL:
                header = block.line.text.split(" #")[0].strip()
                self.report("E005", f"missing `:` at the end of `{header}`: write `{header}:`",
                            self.pos(block, len(header) + 1))  # fmt: skip
            else:
                match = None
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
