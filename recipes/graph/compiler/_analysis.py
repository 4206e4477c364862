"""The shape of a workflow's graph, computed once: edges by source, loops and their bodies,
and each ``fan_out_all`` router's branches and the node where they meet.

Pure functions of the IR, shared by the validator (which reports what does not fit) and the
runtime (which walks it).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from recipes.graph import ir

__all__ = ["FanOut", "Plan", "analyse", "reachable"]


@dataclass(frozen=True)
class FanOut:
    """A ``fan_out_all`` router: its branch heads, where they meet (``join``: a node, or
    ``done`` when they only end), and the nodes each branch runs before the join."""

    router: str
    heads: tuple[str, ...]
    join: str | None
    bodies: dict[str, frozenset[str]] = field(default_factory=dict)
    shared: tuple[str, ...] = ()


@dataclass(frozen=True)
class Plan:
    """What the runtime walks: a workflow's edges and structure."""

    graph: ir.Graph
    outgoing: dict[str, tuple[ir.Edge, ...]]
    loops: dict[str, int]
    loop_bodies: dict[str, frozenset[str]]
    fanouts: dict[str, FanOut]

    @property
    def workflow(self) -> ir.Workflow:
        return self.graph.workflow

    def branch_router(self, node: str) -> str | None:
        """The fan-out router whose branch runs ``node``, if any."""
        for fanout in self.fanouts.values():
            if any(node in body for body in fanout.bodies.values()):
                return fanout.router
        return None


def _successors(outgoing: dict[str, tuple[ir.Edge, ...]], node: str) -> list[str]:
    return [e.dst for e in outgoing.get(node, ())]


def reachable(
    outgoing: dict[str, tuple[ir.Edge, ...]], starts: Iterable[str], stop: str | None = None
) -> dict[str, int]:
    """Every node reachable from ``starts`` with its distance (not walking past ``stop``)."""
    dist: dict[str, int] = {}
    queue = deque((s, 0) for s in starts)
    while queue:
        node, d = queue.popleft()
        if node in dist:
            continue
        dist[node] = d
        if node == stop:
            continue
        queue.extend((n, d + 1) for n in _successors(outgoing, node) if n not in dist)
    return dist


def _loop_bodies(
    outgoing: dict[str, tuple[ir.Edge, ...]], edges: tuple[ir.Edge, ...]
) -> dict[str, frozenset[str]]:
    """Each loop's body: the natural loop of each of its edges ``src -> header``, the header
    and every node that reaches ``src`` without passing through the header (and that the
    header reaches). A loop nested in another then has a smaller body than the outer one, even
    when both share nodes or a header, so that crossing the outer loop starts the inner one
    over (:func:`recipes.graph.runtime` resets the counters of the loops a crossed loop's body
    holds)."""
    incoming: dict[str, list[str]] = {}
    for edge in edges:
        incoming.setdefault(edge.dst, []).append(edge.src)
    bodies: dict[str, frozenset[str]] = {}
    for edge in edges:
        if edge.loop is None:
            continue
        forward = reachable(outgoing, [edge.dst])
        body = {edge.dst, edge.src}
        stack = [p for p in incoming.get(edge.src, ()) if edge.src != edge.dst]
        while stack:
            node = stack.pop()
            if node in body or node not in forward:
                continue
            body.add(node)
            stack.extend(incoming.get(node, ()))
        bodies[edge.loop.name] = bodies.get(edge.loop.name, frozenset()) | body
    return bodies


def _fanout(outgoing: dict[str, tuple[ir.Edge, ...]], router: str, order: list[str]) -> FanOut:
    heads = tuple(dict.fromkeys(e.dst for e in outgoing.get(router, ())))
    reach = [reachable(outgoing, [h]) for h in heads]
    common = set(reach[0]) if reach else set()
    for r in reach[1:]:
        common &= set(r)
    common.discard("fail")
    common.discard(router)
    if not common:
        return FanOut(router, heads, None)
    rank = {name: i for i, name in enumerate([*order, "done"])}
    join = min(
        common,
        key=lambda n: (max(r[n] for r in reach), sum(r[n] for r in reach), rank.get(n, 0)),
    )
    bodies = {
        h: frozenset(reachable(outgoing, [h], stop=join)) - {join, "done", "fail"} for h in heads
    }
    seen: dict[str, int] = {}
    for body in bodies.values():
        for node in body:
            seen[node] = seen.get(node, 0) + 1
    shared = tuple(sorted(n for n, count in seen.items() if count > 1 or n == router))
    return FanOut(router, heads, join, bodies, shared)


def analyse(graph: ir.Graph) -> Plan:
    """The plan of ``graph``'s (first) workflow; tolerant of a graph that does not validate."""
    workflow = graph.workflows[0] if graph.workflows else ir.Workflow(name="")
    outgoing: dict[str, tuple[ir.Edge, ...]] = {}
    for edge in workflow.edges:
        outgoing[edge.src] = (*outgoing.get(edge.src, ()), edge)
    loops: dict[str, int] = {}
    for edge in workflow.edges:
        if edge.loop is not None:
            loops.setdefault(edge.loop.name, edge.loop.max)
    order = [n.name for n in graph.nodes]
    fanouts = {
        node.name: _fanout(outgoing, node.name, order)
        for node in graph.nodes
        if isinstance(node, ir.RouterNode) and node.mode == "fan_out_all"
    }
    return Plan(graph, outgoing, loops, _loop_bodies(outgoing, workflow.edges), fanouts)
