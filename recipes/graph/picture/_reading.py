"""What the picture says of a workflow's nodes and edges, read from the IR: each node's kind and
texts, each edge's label and kind, and which edges go back (a walk from the entry)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import assert_never

from recipes.graph import ir
from recipes.graph.picture._model import EdgeKind, NodeKind

__all__ = ["back_edges", "edge_kind", "edge_label", "node_detail", "node_kind", "node_routes"]

_MAX_DETAIL = 38


def _short(text: str, limit: int = _MAX_DETAIL) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def node_kind(node: ir.Node) -> NodeKind:
    match node:
        case ir.LLMNode():
            return "judge" if node.judge else "agent"
        case ir.HumanNode():
            return "human"
        case ir.AwaitAnswersNode():
            return "await_answers"
        case ir.ComputeNode():
            return "compute"
        case ir.ToolNode():
            return "tool"
        case ir.RouterNode():
            return "fan_out" if node.mode == "fan_out_all" else "router"
        case _:
            assert_never(node)


def node_detail(node: ir.Node) -> str:
    match node:
        case ir.LLMNode():
            return _short(f"{node.keyword} · {node.model}" if node.model else node.keyword)
        case ir.AwaitAnswersNode():
            parts = ["await_answers", f"from {node.from_}" if node.from_ else "", node.timeout]
            return _short(" · ".join(p for p in parts if p))
        case ir.ToolNode():
            return _short(f"tool · {node.command}" if node.command else "tool")
        case ir.RouterNode():
            return "router · fan_out_all" if node.mode == "fan_out_all" else "router"
        case ir.HumanNode() | ir.ComputeNode():
            return node.kind
        case _:
            assert_never(node)


def node_routes(node: ir.Node) -> str:
    if not isinstance(node, ir.LLMNode) or not node.fallbacks:
        return ""
    names = [f"{r.name} (skip)" if r.skip else r.name for r in node.fallbacks]
    return _short("fallbacks: " + " → ".join(names), 44)


def edge_label(edge: ir.Edge) -> str:
    """An edge's label: its condition (``approved``, ``not approved``, the expression, or
    ``else``), then its loop (``↻ retry ≤2``)."""
    parts = []
    if edge.otherwise:
        parts.append("else")
    elif edge.when is not None:
        if edge.when.expr is not None:
            parts.append(_short(edge.when.expr, 40))
        else:
            parts.append(f"not {edge.when.field}" if edge.when.negated else str(edge.when.field))
    if edge.loop is not None:
        parts.append(f"↻ {edge.loop.name} ≤{edge.loop.max}")
    return " · ".join(parts)


def edge_kind(edge: ir.Edge) -> EdgeKind:
    if edge.loop is not None:
        return "loop"
    if edge.otherwise:
        return "else"
    return "always" if edge.when is None else "when"


def back_edges(workflow: ir.Workflow, names: list[str]) -> set[int]:
    """The positions of the edges that go back to a node on the way to them: a depth-first
    walk from the entry (then from each node not reached, in ``names``' order), following
    each node's edges in the order written. Removing them leaves no cycle."""
    outgoing: dict[str, list[int]] = {}
    for index, edge in enumerate(workflow.edges):
        outgoing.setdefault(edge.src, []).append(index)
    back: set[int] = set()
    seen: set[str] = set()
    starts = ([workflow.entry] if workflow.entry else []) + names
    for start in starts:
        if start in seen:
            continue
        seen.add(start)
        on_way = {start}
        stack: list[tuple[str, Iterator[int]]] = [(start, iter(outgoing.get(start, [])))]
        while stack:
            node, left = stack[-1]
            taken = next(left, None)
            if taken is None:
                stack.pop()
                on_way.discard(node)
                continue
            dst = workflow.edges[taken].dst
            if dst in on_way:
                back.add(taken)
            elif dst not in seen:
                seen.add(dst)
                on_way.add(dst)
                stack.append((dst, iter(outgoing.get(dst, []))))
    return back
