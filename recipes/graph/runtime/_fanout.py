"""``fan_out_all``: one branch per edge of the router, run at once (at most
``max_parallel_branches``); the trunk goes on at the join once every branch has arrived. A
branch that parks on a question or fails ends the leg once its siblings have settled. A branch
starts with the trunk's loop counters (it reads ``loop.<name>.iteration`` as the trunk does, and
a loop it crosses keeps the limit the run has spent), and the join keeps the highest count of
each loop. The join node's input is what the branches brought merged, in the router's edge
order: a field two branches bring with different values keeps the last one's, and the
``join_ready`` event names it (``conflicts``), as does a warning in the log."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import anyio

from interactions.store import utc_now
from recipes.graph import ir
from recipes.graph.language import same
from recipes.graph.runtime._context import Moved
from recipes.graph.runtime._finish import End
from recipes.graph.runtime._flow import edge_input, scope_for
from recipes.graph.runtime._state import Cursor, FanOutState

if TYPE_CHECKING:
    from recipes.graph.runtime._engine import Engine

__all__ = ["run_fan_out", "start_fan_out"]

logger = logging.getLogger("recipes.graph")


async def start_fan_out(engine: Engine, trunk: Cursor, node: ir.RouterNode) -> None:
    """Run the router (its output is its input) and open one branch per edge."""
    run = engine.begin(trunk, node)
    if run is None:
        return
    output = dict(trunk.input)
    run.status, run.output, run.finished_at = "finished", output, utc_now().isoformat()
    engine.cp.outputs[node.name] = output
    engine.events.graph("node_finished", {"node_id": node.name, "visit": run.visit,
                                        "branch": "main", "output": output})  # fmt: skip
    fanout = engine.plan.fanouts[node.name]
    scope = scope_for(engine.cp, engine.plan, trunk, engine.run.id, engine.elapsed())
    branches: list[Cursor] = []
    for edge in engine.plan.outgoing.get(node.name, ()):
        if any(b.branch == f"{node.name}>{edge.dst}" for b in branches):
            continue
        arrived = edge.dst in (fanout.join, "done")
        branches.append(Cursor(branch=f"{node.name}>{edge.dst}", at=edge.dst,
                               input=edge_input(edge, output, scope), loops=dict(trunk.loops),
                               state="arrived" if arrived else "ready"))  # fmt: skip
    engine.cp.fanout = FanOutState(router=node.name, join=fanout.join or "done",
                                 branches=branches)  # fmt: skip
    trunk.state, trunk.current = "waiting", None
    await engine.write()


async def run_fan_out(engine: Engine) -> End | None:
    """Run the branches until each has arrived, parked or failed; then join, or say how the
    leg ends."""
    fanout = engine.cp.fanout
    assert fanout is not None
    limiter = anyio.CapacityLimiter(engine.parallel)

    async def branch(cursor: Cursor) -> None:
        async with limiter:
            while cursor.state in ("ready", "active"):
                await engine.step(cursor, limiter)

    try:
        async with anyio.create_task_group() as group:
            for cursor in fanout.branches:
                if cursor.state in ("ready", "active"):
                    group.start_soon(branch, cursor)
    except BaseExceptionGroup as group_error:
        moved = group_error.subgroup(Moved)
        if moved is not None:
            raise Moved from None
        raise
    failures = [c for c in fanout.branches if c.state == "failed"]
    if failures:
        said = "; ".join(f"branch {c.branch}: {c.error}" for c in failures)
        if len(failures) > 1:  # each is retried: the run's error names them all
            said = f"{len(failures)} branches failed: {said}"
        resumable = all(c.resumable for c in failures)
        return End("failed", said, failures[0].code, resumable)
    if any(c.state == "parked" for c in fanout.branches):
        return End("paused")
    trunk = engine.cp.trunk
    for cursor in fanout.branches:
        engine.cp.outputs.update(cursor.outputs)
        engine.cp.artifacts.update(cursor.artifacts)
        for name, count in cursor.loops.items():  # a loop crossed in a branch stays crossed
            trunk.loops[name] = max(trunk.loops.get(name, 0), count)
    joined, conflicts = _merged(fanout.branches)
    ready: dict[str, Any] = {
        "router": fanout.router,
        "join": fanout.join,
        "branches": [c.branch for c in fanout.branches],
    }
    if conflicts:
        ready["conflicts"] = conflicts
        logger.warning(
            "run %s: the branches of %s bring different values of %s to %s; its input keeps "
            "the last branch's. Read each branch's own as outputs.<node>.<field>, or give the "
            "edges into %s `with` mappings to names of their own",
            engine.run.id, fanout.router, ", ".join(f"`{k}`" for k in conflicts),
            fanout.join, fanout.join,
        )  # fmt: skip
    engine.events.graph("join_ready", ready)
    if fanout.join == "done":
        trunk.state, trunk.at = "done", None
    else:
        trunk.state, trunk.at, trunk.input = "ready", fanout.join, joined
    engine.cp.fanout = None
    await engine.write()
    return None


def _merged(branches: list[Cursor]) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """The branches' inputs merged in order, and each field that branches bring with
    different values: the branches that bring it."""
    joined: dict[str, Any] = {}
    brought: dict[str, list[str]] = {}
    conflicts: dict[str, list[str]] = {}
    for cursor in branches:
        for key, value in cursor.input.items():
            if key in joined and not same(joined[key], value):
                conflicts[key] = brought[key] + [cursor.branch]
            joined[key] = value
            brought.setdefault(key, []).append(cursor.branch)
    return joined, conflicts
