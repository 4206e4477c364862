"""Where a cursor goes next, and what a node reads: pure functions of the plan and the state.

A node reads ``vars``, its ``input`` (the ``with`` mapping of the edge that led to it),
``outputs`` (every output produced so far on its line: the trunk's, plus its branch's own),
``artifacts``, ``loop.<name>.iteration|max`` and ``run.id|elapsed_seconds|iterations``.

After a node, its edges are tried in this order: guarded edges (``when``) whose condition holds,
the ``else`` edge, unconditional loop back-edges, then the plain edge. A loop edge is taken only
while its loop has crossings left, so the plain edge is the loop's exhaustion exit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from recipes.graph import ir
from recipes.graph.compiler import Plan
from recipes.graph.language import MISSING, compile_expr, render, truthy
from recipes.graph.runtime._state import Cursor, GraphCheckpoint

__all__ = ["Scope", "choose_edge", "cross", "edge_input", "scope_for"]


@dataclass(frozen=True)
class Scope:
    """What a node's texts and expressions read, by namespace."""

    namespaces: dict[str, Any]

    def lookup(self, path: tuple[str, ...]) -> Any:
        """The value at ``path`` (:data:`MISSING` when there is none)."""
        value: Any = self.namespaces
        for part in path:
            if not isinstance(value, Mapping) or part not in value:
                return MISSING
            value = value[part]
        return value

    def render(self, text: str, quote: Any = None) -> str:
        """``text`` with its references filled in (a missing one stays as written)."""
        return render(text, self.lookup, quote)

    def with_input(self, value: dict[str, Any]) -> Scope:
        return Scope({**self.namespaces, "input": value})


def scope_for(
    cp: GraphCheckpoint, plan: Plan, cursor: Cursor, run_id: str, elapsed: float
) -> Scope:
    """The scope of the node ``cursor`` runs next."""
    loops = {name: {"iteration": cursor.loops.get(name, 0), "max": cap}
             for name, cap in plan.loops.items()}  # fmt: skip
    return Scope({
        "vars": cp.vars,
        "input": cursor.input,
        "outputs": {**cp.outputs, **cursor.outputs},
        "artifacts": {**cp.artifacts, **cursor.artifacts},
        "loop": loops,
        "run": {"id": run_id, "elapsed_seconds": round(elapsed, 3),
                "iterations": cp.iterations},
    })  # fmt: skip


def _holds(edge: ir.Edge, output: Mapping[str, Any], scope: Scope) -> bool:
    condition = edge.when
    assert condition is not None
    if condition.expr is not None:
        value = compile_expr(condition.expr).evaluate(scope.namespaces, output.get)
        return truthy(value)
    return truthy(output.get(condition.field or "")) != condition.negated


def choose_edge(
    plan: Plan, node: str, output: Mapping[str, Any], scope: Scope, loops: Mapping[str, int]
) -> ir.Edge | None:
    """The edge taken after ``node`` produced ``output`` (``None``: no edge can be taken).

    Raises ``ExpressionError`` when a quoted condition fails to evaluate.
    """
    edges = plan.outgoing.get(node, ())

    def open_(edge: ir.Edge) -> bool:
        return edge.loop is None or loops.get(edge.loop.name, 0) < edge.loop.max

    for edge in edges:
        if edge.when is not None and open_(edge) and _holds(edge, output, scope):
            return edge
    candidates = [e for e in edges if e.otherwise]
    candidates += [e for e in edges if e.unconditional and e.loop is not None]
    candidates += [e for e in edges if e.unconditional and e.loop is None]
    return next((e for e in candidates if open_(e)), None)


def cross(plan: Plan, edge: ir.Edge, loops: dict[str, int]) -> None:
    """Count a crossing of ``edge``'s loop; loops nested inside it start over."""
    if edge.loop is None:
        return
    name = edge.loop.name
    loops[name] = loops.get(name, 0) + 1
    body = plan.loop_bodies.get(name, frozenset())
    for other, inner in plan.loop_bodies.items():
        if other != name and inner < body:
            loops.pop(other, None)


def edge_input(edge: ir.Edge, output: dict[str, Any], scope: Scope) -> dict[str, Any]:
    """The input of ``edge.dst``: its ``with`` mapping rendered, ``input`` being the source's
    output (without a mapping: the source's output itself)."""
    if not edge.with_:
        return dict(output)
    inner = scope.with_input(output)
    return {key: inner.render(value) for key, value in edge.with_}
