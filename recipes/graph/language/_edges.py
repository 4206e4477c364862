"""Edge lines: ``a -> b -> c`` chains and the clauses of their last segment."""

from __future__ import annotations

from typing import Any

from recipes.graph import ir
from recipes.graph.language._blocks import Block
from recipes.graph.language._lines import EdgeSyntax
from recipes.graph.language._reader import Reader

__all__ = ["read_edges"]

_SLOT = {"when_not": "when", "when_field": "when", "when_expr": "when", "else": "when",
         "loop": "as", "foreach": "as", "with": "with"}  # fmt: skip


def read_edges(p: Reader, block: Block, syntax: EdgeSyntax) -> list[ir.Edge]:
    """The edges of one chain line; a clause before a further arrow is E032."""
    edges = []
    last = len(syntax.clauses) - 1
    for index, clauses in enumerate(syntax.clauses):
        (src, _), (dst, dst_col) = syntax.refs[index], syntax.refs[index + 1]
        if clauses and index < last:
            p.report(
                "E032", "a clause before a further `->` in a chain", p.pos(block, clauses[0][2])
            )
            clauses = []
        edge = _edge(p, block, src, dst, dst_col, clauses)
        if edge is not None:
            edges.append(edge)
    return edges


def _edge(
    p: Reader, block: Block, src: str, dst: str, dst_col: int, clauses: list[Any]
) -> ir.Edge | None:
    seen: dict[str, str] = {}
    when: ir.Condition | None = None
    otherwise = False
    loop: ir.Loop | None = None
    mapping: list[tuple[str, str]] = []
    for kind, data, col in clauses:
        where = p.pos(block, col)
        slot = _SLOT[kind]
        if slot in seen:
            both = {seen[slot], kind}
            if "else" in both and len(both) > 1:
                p.report("E031", "an edge cannot carry both `when` and `else`", where)
            else:
                p.report("E030", f"`{slot}` appears twice on this edge", where)
            continue
        seen[slot] = kind
        if kind == "when_field":
            when = ir.Condition(field=data)
        elif kind == "when_not":
            when = ir.Condition(field=data, negated=True)
        elif kind == "when_expr":
            when = ir.Condition(expr=data)
        elif kind == "else":
            otherwise = True
        elif kind == "foreach":
            p.report("S001", "`as foreach` iteration is outside the subset", where)
        elif kind == "loop":
            name, cap = data
            if not isinstance(cap, int):
                what = "unbounded loops" if cap[0] == "unbounded" else "expression loop caps"
                p.report("S001", f"{what} are outside the subset; write `as {name}(N)`", where)
            elif cap < 1:
                p.report("C026", f"loop `{name}` allows {cap} iterations", where)
            else:
                loop = ir.Loop(name=name, max=cap)
        else:
            keys = [key for key, _, _ in data]
            for key, value, _ in data:
                if keys.count(key) > 1 and (key, value) not in mapping:
                    p.report("E030", f"`with` maps `{key}` twice", where)
                mapping.append((key, value))
    return ir.Edge(
        src=src,
        dst=dst,
        when=when,
        otherwise=otherwise,
        loop=loop,
        with_=tuple(dict(mapping).items()),
        pos=p.pos(block, dst_col),
    )
