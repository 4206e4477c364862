"""Fields (of a schema or ``vars:``) and the ``workflow`` block: its properties, budget,
vars and edges."""

from __future__ import annotations

import re

from recipes.graph import ir
from recipes.graph.language._blocks import Block
from recipes.graph.language._edges import read_edges
from recipes.graph.language._lines import EdgeSyntax, FieldSyntax, Value
from recipes.graph.language._reader import Reader

__all__ = ["field_line", "fields", "var_fields", "workflow"]


def ir_block(block: Block, children: list[Block]) -> Block:
    """``block`` holding only ``children``."""
    return Block(block.line, children, block.raw)


def _outside_strings(text: str) -> str:
    return re.sub(r'"(\\.|[^"\\])*"|`[^`]*`', "", text)


def field_line(p: Reader, block: Block) -> FieldSyntax | None:
    p.no_children(block)
    found: FieldSyntax | None = p.line(block, "field")
    if found is None:
        return None
    where = p.pos(block, found.type_col)
    if found.type == "file":
        p.report("S001", "`file` fields are outside the subset", where)
        return None
    if found.type not in ir.TYPES:
        p.report("E021", f"unknown type `{found.type}`", where)
        return None
    return found


def fields(p: Reader, block: Block) -> tuple[ir.Field, ...]:
    out = []
    for child in block.children:
        found = field_line(p, child)
        if found is None:
            continue
        if found.default is not None:
            p.report("E001", "a schema field takes no default", p.pos(child))
        out.append(
            ir.Field(
                name=found.name,
                type=found.type,  # type: ignore[arg-type]
                enum=found.enum,
                pos=p.pos(child),
            )
        )
    return tuple(out)


def var_fields(p: Reader, block: Block) -> list[ir.Var]:
    out = []
    for child in block.children:
        found = field_line(p, child)
        if found is None:
            continue
        default = _literal(found.type, found.default) if found.default else None
        if found.default is not None and default is None:
            p.report(
                "C109",
                f"default {found.default.text!r} of var `{found.name}` is not of type {found.type}",
                p.pos(child, found.default.col),
            )
        out.append(
            ir.Var(
                name=found.name,
                type=found.type,  # type: ignore[arg-type]
                enum=found.enum,
                default=default,
                pos=p.pos(child),
            )
        )
    return out


def workflow(p: Reader, block: Block, name: str, pos: ir.Pos) -> ir.Workflow:
    props: list[Block] = []
    edges: list[ir.Edge] = []
    for child in block.children:
        if "->" in _outside_strings(child.line.text):
            syntax: EdgeSyntax | None = p.line(child, "edge")
            if syntax is not None:
                p.no_children(child)
                edges.extend(read_edges(p, child, syntax))
        else:
            props.append(child)
    found = p.props(ir_block(block, props), "workflow")
    budget = None
    budget_block = p.nested(found.get("budget"))
    if budget_block is not None:
        items = p.props(budget_block, "budget")
        budget = ir.Budget(
            max_parallel_branches=p.count(items.get("max_parallel_branches")),
            max_duration=p.text(items.get("max_duration")),
            max_iterations=p.count(items.get("max_iterations")),
        )
    vars_block = p.nested(found.get("vars"))
    wf_vars = tuple(var_fields(p, vars_block)) if vars_block is not None else ()
    return ir.Workflow(
        name=name,
        entry=p.name_ref(found.get("entry")),
        edges=tuple(edges),
        budget=budget,
        vars=wf_vars,
        pos=pos,
    )


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
