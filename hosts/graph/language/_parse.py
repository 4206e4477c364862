"""From a workflow file's text to the IR: declarations, properties, fields and edges.

The indentation layer gives the block tree; each line is read by the line grammar; this module
checks what each block may hold and builds :mod:`hosts.graph.ir`. It never stops at the first
problem: everything it can read is in the IR, and every problem is a diagnostic. Cross-references
(unknown nodes, schemas, prompts; cycles; types) are the validator's (:mod:`hosts.graph.compiler`).
"""

from __future__ import annotations

import difflib
import re
from typing import Any

from hosts.graph import ir
from hosts.graph.language._blocks import Block, read_blocks
from hosts.graph.language._diagnostics import Diagnostic, Pos, diag
from hosts.graph.language._lines import (
    BLOCK,
    EdgeSyntax,
    FieldSyntax,
    LineError,
    PropSyntax,
    Value,
    parse_line,
)
from hosts.graph.language._props import ITERION_ONLY, SUPPORTED, TOP_LEVEL, UNSUPPORTED_TOP_LEVEL

__all__ = ["parse"]

_HEADER = re.compile(
    r"^(?P<kw>[A-Za-z_][A-Za-z0-9_]*)(?:\s+(?P<name>[A-Za-z_][A-Za-z0-9_]*))?\s*"
    r"(?P<params>\([^)]*\))?\s*:\s*(?P<rest>.*)$"
)


def parse(text: str, file: str = "<string>") -> tuple[ir.Graph, list[Diagnostic]]:
    """Read a workflow file's ``text`` (``file`` names it in positions).

    Returns the IR of everything that could be read and the diagnostics (parse errors and
    constructs outside the subset); the IR is only meaningful when no diagnostic is an error.
    """
    blocks, diagnostics = read_blocks(text, file)
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
            self.vars.extend(self.var_fields(block))
            return
        if not name:
            self.report("E002", f"`{keyword}` needs a name: `{keyword} NAME:`", self.pos(block))
            return
        pos = self.pos(block, match.start("name") + 1)
        if keyword == "prompt":
            self.prompts.append(ir.Prompt(name=name, text="\n".join(block.raw or []), pos=pos))
        elif keyword == "schema":
            self.schemas.append(ir.Schema(name=name, fields=self.fields(block), pos=pos))
        elif keyword == "workflow":
            self.workflows.append(self.workflow(block, name, pos))
        else:
            from hosts.graph.language._nodes import build_node

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

    # ------------------------------------------------------------------ vars and schemas

    def field_line(self, block: Block) -> FieldSyntax | None:
        self.no_children(block)
        found: FieldSyntax | None = self.line(block, "field")
        if found is None:
            return None
        where = self.pos(block, found.type_col)
        if found.type == "file":
            self.report("S001", "`file` fields are outside the subset", where)
            return None
        if found.type not in ir.TYPES:
            self.report("E021", f"unknown type `{found.type}`", where)
            return None
        return found

    def fields(self, block: Block) -> tuple[ir.Field, ...]:
        out = []
        for child in block.children:
            found = self.field_line(child)
            if found is None:
                continue
            if found.default is not None:
                self.report("E001", "a schema field takes no default", self.pos(child))
            out.append(
                ir.Field(
                    name=found.name,
                    type=found.type,  # type: ignore[arg-type]
                    enum=found.enum,
                    pos=self.pos(child),
                )
            )
        return tuple(out)

    def var_fields(self, block: Block) -> list[ir.Var]:
        out = []
        for child in block.children:
            found = self.field_line(child)
            if found is None:
                continue
            default = _literal(found.type, found.default) if found.default else None
            if found.default is not None and default is None:
                self.report(
                    "C109",
                    f"default {found.default.text!r} of var `{found.name}` is not of type "
                    f"{found.type}",
                    self.pos(child, found.default.col),
                )
            out.append(
                ir.Var(
                    name=found.name,
                    type=found.type,  # type: ignore[arg-type]
                    enum=found.enum,
                    default=default,
                    pos=self.pos(child),
                )
            )
        return out

    # ------------------------------------------------------------------ workflow

    def workflow(self, block: Block, name: str, pos: Pos) -> ir.Workflow:
        from hosts.graph.language._edges import read_edges

        props: list[Block] = []
        edges: list[ir.Edge] = []
        for child in block.children:
            if "->" in _outside_strings(child.line.text):
                syntax: EdgeSyntax | None = self.line(child, "edge")
                if syntax is not None:
                    self.no_children(child)
                    edges.extend(read_edges(self, child, syntax))
            else:
                props.append(child)
        found = self.props(ir_block(block, props), "workflow")
        budget = None
        if "budget" in found:
            _, budget_block = found["budget"]
            items = self.props(budget_block, "budget")
            budget = ir.Budget(
                max_parallel_branches=self.count(items.get("max_parallel_branches")),
                max_duration=self.text(items.get("max_duration")),
                max_iterations=self.count(items.get("max_iterations")),
            )
        wf_vars = tuple(self.var_fields(found["vars"][1])) if "vars" in found else ()
        return ir.Workflow(
            name=name,
            entry=self.name_ref(found.get("entry")),
            edges=tuple(edges),
            budget=budget,
            vars=wf_vars,
            pos=pos,
        )


def ir_block(block: Block, children: list[Block]) -> Block:
    """``block`` holding only ``children``."""
    return Block(block.line, children, block.raw)


def _outside_strings(text: str) -> str:
    return re.sub(r'"(\\.|[^"\\])*"|`[^`]*`', "", text)


def _literal(type_: str, value: Value) -> str | int | float | bool | None:
    """A var default as its declared type reads it (``None``: it does not)."""
    text = value.text
    if type_ in ("string", "json", "string[]"):
        return text if value.form != "int" or type_ == "string" else None
    if value.form not in ("bare", "int"):
        return None
    if type_ == "bool":
        return {"true": True, "false": False}.get(text)
    if type_ == "int":
        return int(text) if re.fullmatch(r"-?[0-9]+", text) else None
    if re.fullmatch(r"-?[0-9]+(\.[0-9]+)?", text):
        return float(text)
    return None
