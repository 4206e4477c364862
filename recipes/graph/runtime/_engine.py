"""The scheduler: walk the graph from the checkpoint until the run finishes, fails or pauses.

Each node's execution is written down when it ends (its output, the edge taken, the node's
events: one ``update_run``), so a process killed at any point leaves a checkpoint from which a
retry continues without re-running a finished node (the node that was running runs again).
A pause is written in one transaction with its status and its interactions. A ``fan_out_all``
runs its branches concurrently (at most ``max_parallel_branches`` at once); a branch that asks
a human parks, the others go on, and the run pauses once every branch has arrived or parked.
The walk is watched (``recipes.runs.drivers.watch_run``): when another writer moves the run out of
``running`` (a cancel, ``runs recover``), every node still working is cancelled (its agent and
tools, its command, every branch) and the leg raises ``ConflictError`` without writing.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, assert_never

import anyio

from interactions import AskUserInterrupt, ConflictError
from interactions.store import InteractionRecord, NewInteraction, RunRecord, RunStatus, utc_now
from recipes import tracing
from recipes.graph import ir
from recipes.graph.compiler import Compiled
from recipes.graph.language import VALUE_DEPTH, ExpressionError, duration_seconds, nests_deeper
from recipes.graph.runtime._agent import Agents
from recipes.graph.runtime._asyncq import binder_for, run_await
from recipes.graph.runtime._context import Mode, Moved, NodeContext, NodeOutcome, failed
from recipes.graph.runtime._events import LegEvents
from recipes.graph.runtime._fanout import run_fan_out, start_fan_out
from recipes.graph.runtime._finish import End, finish_leg
from recipes.graph.runtime._flow import choose_edge, cross, edge_input, scope_for
from recipes.graph.runtime._human import run_human
from recipes.graph.runtime._routes import run_llm
from recipes.graph.runtime._simple import run_compute, run_router, run_tool
from recipes.graph.runtime._state import Cursor, GraphCheckpoint, NodeRun
from recipes.graph.runtime._ui import serial_surface
from recipes.runs import Runner, RunResult, Surface
from recipes.runs.agui import run_started
from recipes.runs.drivers import (
    close_leg,
    continuing_policy,
    moved_error,
    record_interrupted,
    watch_run,
)
from recipes.runs.planning import describe_error

__all__ = ["DEFAULT_TIMEOUTS", "Engine", "kind_of"]

DEFAULT_TIMEOUTS = {"agent": 1800.0, "tool": 600.0}
"""A node's time bound (seconds) when it declares no ``timeout:``: no silent infinity."""
DEFAULT_PARALLEL = 4
WAITED_OUT = ("TIMEOUT", "AWAIT_FROM_INVALID")
"""A node's failures that mean it ran out its time bound: when that bound was what is left of
the run's ``max_duration`` (the run is spent), the budget is the cause (``BUDGET_EXCEEDED``)."""


def _budget_failure(outcome: NodeOutcome, spent: str) -> NodeOutcome:
    """``outcome`` (a node that waited out a bound the run's ``max_duration`` set) as the
    budget's failure; a gate whose ``from:`` posts no questions still says so (C242), since a
    new run with a larger budget would only wait longer."""
    error = f"budget exceeded: {spent}"
    if outcome.code == "AWAIT_FROM_INVALID":
        error += (" (besides, this gate could never pass: its `from:` posts no async "
                  "questions, C242; fix the workflow before a new run)")  # fmt: skip
    return NodeOutcome("failed", error=error, code="BUDGET_EXCEEDED")


async def _execute(ctx: NodeContext, node: ir.Node, run: NodeRun, mode: Mode) -> NodeOutcome:
    """Do ``node``'s work with the executor of its kind."""
    match node:
        case ir.LLMNode():
            return await run_llm(ctx, node, run, mode)
        case ir.HumanNode():
            return await run_human(ctx, node, run, mode)
        case ir.ComputeNode():
            return await run_compute(ctx, node, run, mode)
        case ir.ToolNode():
            return await run_tool(ctx, node, run, mode)
        case ir.RouterNode():
            return await run_router(ctx, node, run, mode)
        case ir.AwaitAnswersNode():
            return await run_await(ctx, node, run, mode)
        case _:
            assert_never(node)


def _own_bound(node: ir.Node) -> float | None:
    """A node's own time bound in seconds: its ``timeout:``, else its kind's default
    (:data:`DEFAULT_TIMEOUTS`; ``None``: it has none of its own)."""
    match node:
        case ir.LLMNode():
            return duration_seconds(node.timeout) or DEFAULT_TIMEOUTS["agent"]
        case ir.ToolNode():
            return duration_seconds(node.timeout) or DEFAULT_TIMEOUTS["tool"]
        case ir.AwaitAnswersNode():
            return duration_seconds(node.timeout)
        case ir.HumanNode() | ir.ComputeNode() | ir.RouterNode():
            return None
        case _:
            assert_never(node)


logger = logging.getLogger("recipes.graph")


class Engine:
    """One leg of a graph run: from the checkpoint to the next stop."""

    def __init__(self, runner: Runner, run: RunRecord, compiled: Compiled,
                 cp: GraphCheckpoint, surface: Surface,
                 interactions: Sequence[InteractionRecord] | None = None,
                 agents: Agents | None = None) -> None:  # fmt: skip
        self.runner, self.store, self.run = runner, runner.store, run
        self.agents = agents or Agents(runner, compiled.graph, compiled.base)
        self.interactions = None if interactions is None else list(interactions)
        """The run's interactions as the leg found them (read by :meth:`prepare` unless the
        claim that started the leg knew them)."""
        self.plan, self.graph, self.cp = compiled.plan, compiled.graph, cp
        self.base = compiled.base
        self.surface = serial_surface(surface)
        self.events = LegEvents(surface.on_event)
        self.working: dict[str, str] = {}
        """The node each branch is running (by branch) until its end is written."""
        self.lock = anyio.Lock()
        self.started = time.monotonic()
        self.before = cp.elapsed
        budget = self.graph.workflow.budget or ir.Budget()
        self.max_duration = duration_seconds(budget.max_duration)
        self.max_iterations = budget.max_iterations
        self.parallel = budget.max_parallel_branches or DEFAULT_PARALLEL
        self.leg = cp.next_leg(run.id, surface.agui_run_id)
        self.agui_id, self.parent_agui_id = self.leg.run, self.leg.parent
        cp.leg, cp.agui_run_id = self.leg.number, self.leg.run  # the node writes carry it
        self.traced = tracing.Leg(None, None, cp.trace)
        """The leg's span (:meth:`drive` opens it)."""

    # ------------------------------------------------------------------ writing

    def elapsed(self) -> float:
        return self.before + (time.monotonic() - self.started)

    async def write(self, **change: Any) -> None:
        """Write the checkpoint (and the queued events, and ``change``) in one transaction."""
        async with self.lock:
            self.cp.elapsed = self.elapsed()
            try:
                self.run = await self.store.update_run(
                    self.run.id, expected_version=self.run.version,
                    checkpoint=self.cp.dump(), events=self.events.take(), **change,
                )  # fmt: skip
            except ConflictError:
                raise Moved from None

    async def close(
        self, *, status: RunStatus, error: str | None, new_interactions: list[NewInteraction]
    ) -> None:
        """Write the leg's end (the checkpoint, the queued events, the pause's questions) in
        one transaction, through the kernel's leg closer. Raises ``ConflictError`` when another
        writer moved the run first (nothing more is written)."""
        async with self.lock:
            self.cp.elapsed = self.elapsed()
            self.run = await close_leg(
                self.store, self.run, status=status, checkpoint=self.cp.dump(), error=error,
                new_interactions=new_interactions, events=self.events.take(),
                may_leave_open=True,  # parked branches' questions, its agents' async ones
                stopped="what this leg did after its last recorded node was not recorded",
            )  # fmt: skip

    async def flush(self) -> None:
        """Append the queued events without touching the run."""
        async with self.lock:
            events = self.events.take()
            if events:
                await self.store.append_events(self.run.id, events)

    # ------------------------------------------------------------------ the walk

    async def drive(self, resumed_from: str | None = None) -> RunResult:
        """Run this leg to its end; return the run as it stands. Raises ``ConflictError``
        (reason ``run_cancelled``, or ``version``) when another writer moved the run meanwhile:
        the nodes still working were stopped and nothing more of the leg is written."""
        stored = self.cp.trace
        async with tracing.leg(self.store, self.run, number=self.leg.number, stored=stored,
                               interactions=self.interactions) as self.traced:  # fmt: skip
            return await self._drive(resumed_from)

    async def _drive(self, resumed_from: str | None) -> RunResult:
        self.events.agui(run_started(self.run.thread_id, self.agui_id, self.parent_agui_id))
        if resumed_from is not None:
            self.events.graph("run_resumed", {"from": resumed_from})
        try:
            try:
                end = await self._watched_walk()
            except Moved:
                raise await self._moved() from None
            except Exception as exc:  # a bug (a model's, a tool's, ours): recorded, raised on
                await self._record_crash(exc)
                raise
            try:
                return await finish_leg(self, end)
            except Moved:
                raise await self._moved() from None
        except Exception:
            raise
        except BaseException:  # Ctrl-C, SIGTERM, a host stopping: the leg did not finish
            await record_interrupted(self.store, self.run)
            raise

    async def _watched_walk(self) -> End:
        """Prepare and walk while watching the run: when another writer moves it out of
        ``running``, the walk is cancelled (every node still working stops) and ``Moved`` is
        raised. The leg's end is written after, unwatched: that write moves the run itself."""
        moved: list[RunRecord] = []

        def stop(run: RunRecord) -> None:
            moved.append(run)
            scope.cancel()

        async def work() -> End:
            await self.prepare()
            return await self.walk()

        try:
            with anyio.CancelScope() as scope:
                return await watch_run(self.store, self.run.id, stop, work())
        except Exception as exc:
            if moved:  # a node that failed while it was being stopped
                raise Moved from exc
            raise
        raise Moved  # the scope was cancelled: the run moved

    async def _moved(self) -> ConflictError:
        """The error of a leg whose run another writer moved: what the run is now, and the
        nodes this process stopped (what they did is not recorded)."""
        nodes = sorted(set(self.working.values()))
        if len(nodes) == 1:
            stopped = f"the node it was running ({nodes[0]}) was stopped and what it did"
        elif nodes:
            stopped = (
                f"the nodes it was running ({', '.join(nodes)}) were stopped and what they did"
            )
        else:
            stopped = "what this leg did after its last recorded node"
        return await moved_error(self.store, self.run.id, f"{stopped} was not recorded")

    async def _record_crash(self, exc: Exception) -> None:
        """End the run ``failed`` with ``exc`` (its node's execution too), so that it is not
        left ``running`` with no one driving it. Should that write fail as well, the run stays
        ``running`` for :meth:`~recipes.runs.Runner.recover` and the failure is logged."""
        while isinstance(exc, ExceptionGroup) and len(exc.exceptions) == 1:
            exc = exc.exceptions[0]  # a fan-out branch's own error, not its task group's
        error, code = self.runner.scrub(describe_error(exc)), type(exc).__name__
        for cursor in self.cp.cursors():
            node = self.graph.node(cursor.at or "")
            if cursor.state != "active" or cursor.current is None or node is None:
                continue
            failed = NodeOutcome("failed", error=error, code=code)
            self.record(cursor, node, self.cp.executions[cursor.current], failed, None)
        trunk = self.cp.trunk
        told = trunk.error if trunk.state == "failed" and trunk.error else error
        try:
            await finish_leg(self, End("failed", told, code))
        except Exception:
            logger.exception("graph run %s failed (%s) and the failure could not be stored",
                             self.run.id, error)  # fmt: skip

    async def prepare(self) -> None:
        """Continue what the last leg left: answered pauses resume, resumable failures retry,
        an execution whose process died runs again."""
        if self.interactions is None:
            self.interactions = await self.store.list_interactions(self.run.id)
        records = {r.id: r for r in self.interactions}
        for cursor in self.cp.cursors():
            if cursor.current is None or cursor.state not in ("parked", "failed", "active"):
                continue
            run = self.cp.executions[cursor.current]
            if cursor.state == "parked":
                unstored = {i for i in run.interrupts if i not in records}
                if unstored - {q.id for q in run.asking or ()}:  # the process died, unkept
                    run.interrupts, run.session, run.status = [], None, "running"
                    run.asking = None
                elif unstored or any(records[i].answer is None for i in run.interrupts):
                    continue  # still waits (questions kept unstored are stored at the leg's end)
                cursor.state = "active"
            elif cursor.state == "failed" and cursor.resumable:
                cursor.state, cursor.error, cursor.code = "active", None, None

    async def walk(self) -> End:
        while True:
            trunk = self.cp.trunk
            if self.cp.fanout is not None:
                end = await run_fan_out(self)
                if end is not None:
                    return end
                continue
            if trunk.state in ("ready", "active"):
                node = self.graph.node(trunk.at or "")
                if (
                    isinstance(node, ir.RouterNode)
                    and node.mode == "fan_out_all"
                    and (trunk.state == "ready")
                ):
                    await start_fan_out(self, trunk, node)
                else:
                    await self.step(trunk)
                continue
            if trunk.state == "parked":
                return End("paused")
            if trunk.state == "failed":
                return End("failed", trunk.error, trunk.code, trunk.resumable)
            return End("finished")

    def duration_spent(self) -> bool:
        return self.max_duration is not None and self.elapsed() >= self.max_duration

    def budget_problem(self) -> str | None:
        if self.max_iterations is not None and self.cp.iterations >= self.max_iterations:
            return f"max_iterations ({self.max_iterations}) reached"
        if self.duration_spent():
            return f"max_duration ({self.graph.workflow.budget.max_duration}) spent"  # type: ignore[union-attr]
        return None

    def deadline(self, node: ir.Node) -> float | None:
        bound = _own_bound(node)
        if self.max_duration is not None:
            left = max(self.max_duration - self.elapsed(), 0.001)
            bound = min(bound, left) if bound else left
        return bound

    def begin(self, cursor: Cursor, node: ir.Node) -> NodeRun | None:
        problem = self.budget_problem()
        if problem is not None:
            self.fail(cursor, f"budget exceeded: {problem}", "BUDGET_EXCEEDED")
            return None
        visit = self.cp.visits.get(node.name, 0) + 1
        self.cp.visits[node.name] = visit
        self.cp.iterations += 1
        run = NodeRun(node=node.name, kind=kind_of(node), visit=visit, branch=cursor.branch,
                      input=cursor.input, started_at=utc_now().isoformat())  # fmt: skip
        self.cp.executions.append(run)
        cursor.current, cursor.state = len(self.cp.executions) - 1, "active"
        self.events.graph("node_started", {"node_id": node.name, "kind": run.kind,
                                           "visit": visit, "branch": cursor.branch,
                                           "input": cursor.input})  # fmt: skip
        return run

    async def step(self, cursor: Cursor, limiter: anyio.CapacityLimiter | None = None) -> None:
        """Run the cursor's node (or continue its execution), then write down what happened
        (``limiter``: the fan-out's, whose slot the cursor's task holds)."""
        node = self.graph.node(cursor.at or "")
        assert node is not None, f"no node {cursor.at!r}"
        mode: Mode
        if cursor.state == "ready":
            began = self.begin(cursor, node)
            await self.flush()
            if began is None:
                return
            run, mode = began, "start"
        else:
            assert cursor.current is not None
            run = self.cp.executions[cursor.current]
            mode = "resume" if run.status == "paused" else "retry"
            run.status = "running"
        scope = scope_for(self.cp, self.plan, cursor, self.run.id, self.elapsed())
        interactions = (self.interactions or []) if mode == "resume" else []
        ctx = NodeContext(
            self.runner,
            self.agents,
            self.run.id,
            self.run.thread_id,
            self.agui_id,
            self.graph,
            self.base,
            Path(self.cp.cwd),
            scope,
            self.events,
            self.surface,
            self.deadline(node),
            interactions,
            asyncq=binder_for(self, cursor, node, run),
            limiter=limiter,
            continuing=self.cp.leg > 1,
            expiry_policy=self.cp.expiry_policy,
            policy=continuing_policy(self.cp.policy, self.runner.env, self.runner.cwd),
            bound=lambda: self.deadline(node),
            spent=self.duration_spent,
        )
        self.working[cursor.branch] = node.name
        with tracing.node(node.name, run.kind, run.visit, cursor.branch) as traced:
            outcome = await _execute(ctx, node, run, mode)
            traced.set("pi_recipes.node.status", outcome.status)
        if outcome.code in WAITED_OUT and self.duration_spent():  # the run's bound, not the node's
            spent = f"max_duration ({self.graph.workflow.budget.max_duration}) spent"  # type: ignore[union-attr]
            outcome = _budget_failure(outcome, spent)
        self.record(cursor, node, run, outcome, scope)
        if cursor.state != "parked":
            await self.write()
        del self.working[cursor.branch]

    def record(self, cursor: Cursor, node: ir.Node, run: NodeRun, outcome: NodeOutcome,
               scope: Any) -> None:  # fmt: skip
        run.session = outcome.session
        if outcome.status == "finished" and nests_deeper(outcome.output):
            outcome = failed(  # no store could keep it: the run would be stuck, unrecordable
                f"its output nests deeper than {VALUE_DEPTH} levels; make it flatter",
                "OUTPUT_TOO_DEEP",
            )
        if outcome.status == "paused":
            run.status, cursor.state = "paused", "parked"
            run.interrupts = [i.id for i in outcome.interrupts]
            run.asking = list(outcome.interrupts)
            return
        run.finished_at = utc_now().isoformat()
        if outcome.status == "failed":
            error = self.runner.scrub(outcome.error or "") or None  # it may quote a credential
            outcome = replace(outcome, error=error)
            run.status, run.error, run.code = "failed", outcome.error, outcome.code
            run.resumable, run.retry_after = outcome.resumable, outcome.retry_after
            self.events.graph("node_failed", {"node_id": node.name, "visit": run.visit,
                                              "branch": cursor.branch, "error": outcome.error,
                                              "code": outcome.code,
                                              "resumable": outcome.resumable})  # fmt: skip
            self.fail(
                cursor,
                f"node {node.name} failed: {outcome.error}",
                outcome.code or "",
                outcome.resumable,
            )
            return
        output = outcome.output or {}
        run.status, run.output, run.session = "finished", output, None
        (cursor.outputs if cursor.branch != "main" else self.cp.outputs)[node.name] = output
        if node.publish:
            store = cursor.artifacts if cursor.branch != "main" else self.cp.artifacts
            store[node.publish] = output
        self.events.graph("node_finished", {"node_id": node.name, "visit": run.visit,
                                            "branch": cursor.branch, "output": output})  # fmt: skip
        self.advance(cursor, node.name, output, scope)

    def fail(self, cursor: Cursor, error: str, code: str, resumable: bool = False) -> None:
        cursor.state, cursor.error, cursor.code, cursor.resumable = "failed", error, code, resumable

    def advance(self, cursor: Cursor, node: str, output: dict[str, Any], scope: Any) -> None:
        """Take the next edge from ``node``."""
        try:
            edge = choose_edge(self.plan, node, output, scope, cursor.loops)
        except ExpressionError as exc:
            self.fail(cursor, f"a condition after {node} failed: {exc}", "EXPRESSION_FAILED")
            return
        if edge is None:
            self.fail(cursor, f"no edge can be taken after {node}", "NO_OUTGOING_EDGE")
            return
        cross(self.plan, edge, cursor.loops)
        cursor.current, cursor.input = None, edge_input(edge, output, scope)
        branch = self.cp.fanout is not None and cursor.branch != "main"
        if edge.dst == "fail":
            self.fail(cursor, f"{node} routed to `fail`", "FAIL_NODE")
        elif edge.dst == "done" and not branch:
            cursor.state, cursor.at = "done", None
        elif branch and edge.dst in ("done", self.cp.fanout.join):  # type: ignore[union-attr]
            cursor.state, cursor.at = "arrived", edge.dst
        else:
            cursor.state, cursor.at = "ready", edge.dst

    def asking(self) -> list[tuple[str, AskUserInterrupt]]:
        """The questions executions parked on that are not stored yet, with their nodes."""
        return [(run.node, i) for run in self.cp.executions for i in run.asking or ()]

    def new_interactions(self) -> list[NewInteraction]:
        """The questions :meth:`asking` lists, as the leg's end stores them."""
        from recipes.runs.planning import new_interaction

        return [new_interaction(i).model_copy(update={"node_id": node})
                for node, i in self.asking()]  # fmt: skip


def kind_of(node: ir.Node) -> str:
    """A node's kind as its events name it (``agent``, ``judge``, ``human``...)."""
    return node.keyword if isinstance(node, ir.LLMNode) else node.kind
