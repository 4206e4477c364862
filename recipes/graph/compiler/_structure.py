"""Checks of the graph: edges, entry, reachability, conditions, loops and fan-outs."""

from __future__ import annotations

from recipes.graph import ir
from recipes.graph.compiler._analysis import Plan, reachable
from recipes.graph.compiler._references import input_fields
from recipes.graph.language import Diagnostic, diag, did_you_mean

__all__ = ["check_structure"]


def _exhaustive(edges: list[ir.Edge]) -> bool:
    """Whether the edges' conditions cover every outcome without a fallback."""
    if any(e.unconditional or e.otherwise for e in edges):
        return True
    fields = {(e.when.field, e.when.negated) for e in edges if e.when and e.when.field}
    return any((f, not neg) in fields for f, neg in fields)


def _check_source(plan: Plan, src: str, edges: tuple[ir.Edge, ...]) -> list[Diagnostic]:
    graph = plan.graph
    node = graph.node(src)
    out: list[Diagnostic] = []
    if isinstance(node, ir.RouterNode) and node.mode == "fan_out_all":
        for edge in edges:
            if edge.when is not None or edge.otherwise:
                out.append(
                    diag(
                        "P006",
                        f"edge {src} -> {edge.dst} of fan-out `{src}` has a condition",
                        edge.pos,
                    )
                )
        targets = [e.dst for e in edges]
        for dst in sorted({t for t in targets if targets.count(t) > 1}):
            out.append(diag("C249", f"fan-out `{src}` has two edges to `{dst}`", node.pos))
        return out
    plain = [e for e in edges if e.unconditional and e.loop is None]
    if len(plain) > 1:
        out.append(diag("C010", f"`{src}` has {len(plain)} unconditional edges", plain[1].pos))
    elses = [e for e in edges if e.otherwise]
    if len(elses) > 1:
        out.append(diag("C123", f"`{src}` has {len(elses)} else edges", elses[1].pos))
    guarded = [e for e in edges if e.when is not None]
    if elses and not guarded:
        out.append(
            diag("C015", f"`{src} -> {elses[0].dst} else` has no `when` sibling", elses[0].pos)
        )
    if elses and plain:
        out.append(
            diag("C124", f"`{src}` has both an else edge and an unconditional one", elses[0].pos)
        )
    seen: set[tuple[str | None, bool, str | None]] = set()
    schema = graph.schema(node.output) if node is not None else None
    for edge in guarded:
        assert edge.when is not None
        key = (edge.when.field, edge.when.negated, edge.when.expr)
        if key in seen:
            out.append(diag("C011", f"`{src}` repeats the condition of an edge", edge.pos))
        seen.add(key)
        name = edge.when.field
        if name is None:
            continue
        if isinstance(node, ir.RouterNode):  # its output is its input, of any type
            carried = input_fields(plan, src)
            if carried is not None and name not in carried:
                message = (
                    f"`when {name}`: the input of router `{src}` has no field `{name}` "
                    f"(the edges into it carry: {', '.join(sorted(carried)) or 'nothing'})"
                )
                out.append(diag("C014", message, edge.pos))
            continue
        field = schema.field(name) if schema is not None else None
        if field is None:
            where = f"schema `{schema.name}`" if schema else "no output schema"
            message = f"`when {name}`: the output of `{src}` ({where}) has no field `{name}`"
            out.append(diag("C014", message, edge.pos))
        elif field.type != "bool":
            out.append(
                diag(
                    "C013",
                    f"`when {name}`: field `{name}` of `{src}` is a {field.type}, not a bool",
                    edge.pos,
                )
            )
    if guarded and not _exhaustive(list(edges)):
        out.append(diag("C012", f"`{src}` has conditional edges and no fallback", guarded[0].pos))
    loop_edges = [e for e in edges if e.loop is not None]
    for edge in loop_edges:
        rest = [e for e in edges if e is not edge and e.loop is None]
        if not _exhaustive(rest):
            assert edge.loop is not None
            out.append(
                diag(
                    "C145", f"loop `{edge.loop.name}` from `{src}` has no exit once spent", edge.pos
                )
            )
    return out


def _cycle(plan: Plan) -> list[ir.Edge] | None:
    """A cycle with no loop edge on it, as its edges, or ``None``. A depth-first walk with a
    stack of its own: a chain of any length is checked (Python's would run out)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for root in [n.name for n in plan.graph.nodes]:
        if root in state:
            continue
        state[root] = 1
        path: list[ir.Edge] = []  # the edges from the root to the node on top
        frames = [iter(plan.outgoing.get(root, ()))]
        nodes = [root]
        while frames:
            for edge in frames[-1]:
                if edge.loop is not None:
                    continue
                if state.get(edge.dst) == 1:
                    start = next((i for i, e in enumerate(path) if e.src == edge.dst), len(path))
                    return [*path[start:], edge]
                if edge.dst not in state:
                    state[edge.dst] = 1
                    path.append(edge)
                    frames.append(iter(plan.outgoing.get(edge.dst, ())))
                    nodes.append(edge.dst)
                    break
            else:  # every edge out of the node on top is walked
                state[nodes.pop()] = 2
                frames.pop()
                del path[max(len(frames) - 1, 0) :]  # the edge that led to it
    return None


def _check_fanouts(plan: Plan) -> list[Diagnostic]:
    out = []
    for fanout in plan.fanouts.values():
        pos = plan.graph.node(fanout.router).pos  # type: ignore[union-attr]
        if fanout.join is None:
            out.append(
                diag(
                    "P004",
                    f"the branches of `{fanout.router}` never meet (not even at `done`)",
                    pos,
                )
            )
            continue
        if fanout.shared:
            out.append(
                diag(
                    "P004",
                    f"the branches of `{fanout.router}` share "
                    f"{', '.join(fanout.shared)} before meeting at `{fanout.join}`",
                    pos,
                )
            )
        for body in fanout.bodies.values():
            for inner in sorted(body & set(plan.fanouts)):
                where = getattr(plan.graph.node(inner), "pos", None)
                message = f"fan-out `{inner}` runs inside a branch of `{fanout.router}`"
                out.append(diag("P005", message, where))
    return out


def check_structure(plan: Plan) -> list[Diagnostic]:
    """Edges name declared nodes; the entry exists; every node is reachable and has a way on;
    conditions and loops are well formed; fan-outs converge."""
    graph = plan.graph
    if not graph.workflows:
        return []
    workflow = graph.workflow
    out: list[Diagnostic] = []
    known = {n.name for n in graph.nodes}
    for edge in workflow.edges:
        for end in (edge.src, edge.dst):
            if end not in known and end not in ir.TERMINALS:
                hint = did_you_mean(end, known)
                message = f"edge {edge.src} -> {edge.dst}: no node `{end}`{hint}"
                out.append(diag("C001", message, edge.pos))
        if edge.src in ir.TERMINALS:
            out.append(diag("C001", f"`{edge.src}` is a terminal: nothing leaves it", edge.pos))
    if workflow.entry is None:
        out.append(diag("C008", f"workflow `{workflow.name}` has no `entry:`", workflow.pos))
    elif workflow.entry not in known:
        hint = did_you_mean(workflow.entry, known)
        message = f"entry `{workflow.entry}` is not a declared node{hint}"
        out.append(diag("C008", message, workflow.pos))
    else:
        reached = reachable(plan.outgoing, [workflow.entry])
        for node in graph.nodes:
            if node.name not in reached:
                out.append(
                    diag(
                        "C016",
                        f"node `{node.name}` cannot be reached from `{workflow.entry}`",
                        node.pos,
                    )
                )
            elif node.name not in plan.outgoing:
                out.append(
                    diag(
                        "P012",
                        f"node `{node.name}` has no outgoing edge: a run would fail after it "
                        "(NO_OUTGOING_EDGE)",
                        node.pos,
                        fix=f"Add an edge from `{node.name}`: to the next node, or "
                        f"`{node.name} -> done` to end the run there.",
                    )
                )
    caps: dict[str, int] = {}
    for edge in workflow.edges:
        if edge.loop is not None:
            first = caps.setdefault(edge.loop.name, edge.loop.max)
            if first != edge.loop.max:
                out.append(
                    diag(
                        "C005",
                        f"loop `{edge.loop.name}` is declared with {first} and "
                        f"{edge.loop.max} iterations",
                        edge.pos,
                    )
                )
    for src, edges in plan.outgoing.items():
        out += _check_source(plan, src, edges)
    cycle = _cycle(plan)
    if cycle is not None:
        path = " -> ".join([cycle[0].src, *(e.dst for e in cycle)])
        out.append(diag("C019", f"the cycle {path} declares no loop", cycle[-1].pos))
    return out + _check_fanouts(plan)
