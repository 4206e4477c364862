"""Graph runs in the store: kind ``graph``, continued by :class:`GraphDriver`.

The runner answers, resumes, retries, cancels and expires graph runs like any other; it hands
the continuation to this driver, registered for the kind (and found through the
``pi_recipes.run_drivers`` entry point, so a host resumes graph runs without importing the
engine). The workflow's source rides in the checkpoint: a run continues without its file.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from interactions import UsageError
from interactions.store import EventRecord, InteractionRecord, NewRun, RunRecord, is_terminal
from recipes.graph import ir
from recipes.graph.compiler import Compiled, compile_graph, compile_stored, load_graph
from recipes.graph.language import unparse
from recipes.graph.runtime._agent import Agents
from recipes.graph.runtime._credentials import credential_vars
from recipes.graph.runtime._engine import Engine
from recipes.graph.runtime._events import leg_record_events
from recipes.graph.runtime._finish import summary
from recipes.graph.runtime._state import Cursor, GraphCheckpoint, NodeRun
from recipes.graph.runtime._vars import launch_vars
from recipes.runs import Claim, ExpiryPolicy, RunResult, RunView, Surface, new_run_id
from recipes.runs.drivers import KeptPolicy, RetrySchedule

if TYPE_CHECKING:
    from ag_ui.core import BaseEvent

    from recipes.runs import Runner

__all__ = ["GraphDriver", "path_lines"]

_MARK = {"finished": "✓", "failed": "✗", "paused": "…", "running": "▸"}


def _compiled(cp: GraphCheckpoint) -> Compiled:
    """The stored workflow, validated when the run started and not again (a rule added since
    does not strand the run); its agents are checked by :func:`_prepared`, which loads their
    recipes and models."""
    return compile_stored(cp.source, file=cp.file, base=Path(cp.base))


def _short(value: Any, width: int = 72) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= width else text[: width - 1] + "…"


def _skipped(run: NodeRun) -> bool:
    return run.status == "finished" and bool((run.output or {}).get("_skipped"))


def _line(run: NodeRun, ended: bool) -> str:
    where = f" [{run.branch}]" if run.branch != "main" else ""
    mark = "⤼" if _skipped(run) else _MARK[run.status]
    head = f"  {mark} {run.node}#{run.visit} ({run.kind}){where}"
    output = run.output or {}
    own = {k: v for k, v in output.items() if not k.startswith("_")}
    if _skipped(run):
        return f"{head} skipped by route {output.get('_served_by')}: {_short(own)}"
    if run.status == "finished" and output.get("_fallback_used"):
        return f"{head} served by route {output.get('_served_by')}: {_short(own)}"
    if run.status == "finished":
        return f"{head} {_short(run.output)}"
    if run.status == "paused" and ended:  # its questions closed with the run
        return f"{head} was waiting for {', '.join(run.interrupts)} when the run ended"
    if run.status == "paused" and run.asking:  # parked in a leg that has not stored them yet
        asked = ", ".join(q.id for q in run.asking)
        when = "once the run pauses (if its process died, a retry)"
        return f"{head} asked {asked}: answerable {when}"
    if run.status == "paused":
        return f"{head} waiting for {', '.join(run.interrupts)}"
    if run.status == "failed":
        return f"{head} {run.code}: {run.error}"
    return f"{head} running"


def path_lines(cp: GraphCheckpoint, *, ended: bool = False) -> list[str]:
    """The node path a run took: each execution, its status and its output summary; then the
    nodes a fallback route skipped (``skipped: …``), and the run's automatic retries.
    ``ended``: the run is over (its open questions closed with it), so no execution is said to
    be waiting."""
    if not cp.executions:
        return []
    lines = ["path:", *(_line(r, ended) for r in cp.executions)]
    skipped = [f"{r.node}#{r.visit} (route {(r.output or {}).get('_served_by')})"
               for r in cp.executions if _skipped(r)]  # fmt: skip
    if skipped:
        lines.append("skipped: " + ", ".join(skipped))
    retries = cp.auto_resume
    if retries is not None:
        due = f", next due {retries.due_at.isoformat()}" if retries.due_at else ""
        lines.append(f"auto-resume: {retries.attempts} of {retries.max} retries planned{due}")
    return lines


@dataclass(frozen=True)
class _Prepared:
    """What a continuation of a graph run needs, checked before the run was claimed: the
    workflow compiled once, and its agents resolved once."""

    compiled: Compiled
    agents: Agents


def _prepared(runner: Runner, compiled: Compiled) -> _Prepared:
    """The workflow with every agent it runs checked (``UsageError`` for one that cannot)."""
    return _Prepared(compiled, Agents(runner, compiled.graph, compiled.base).check())


def _schedule(auto_resume: int | RetrySchedule | None) -> RetrySchedule | None:
    if auto_resume is None or isinstance(auto_resume, RetrySchedule):
        return auto_resume
    if isinstance(auto_resume, bool) or not 1 <= auto_resume <= 1000:
        raise UsageError(f"auto_resume is a number of retries from 1 to 1000, got {auto_resume!r}")
    return RetrySchedule(max=auto_resume)


class GraphDriver:
    """Runs of kind ``graph``: start, check, proceed, retry, view."""

    async def start(
        self,
        runner: Runner,
        workflow: str | Path | ir.Graph | Compiled,
        *,
        vars: Mapping[str, Any] | None = None,
        run_id: str | None = None,
        thread_id: str | None = None,
        expiry_policy: ExpiryPolicy = "decline",
        surface: Surface | None = None,
        auto_resume: int | RetrySchedule | None = None,
    ) -> RunResult:
        """Validate ``workflow`` (a ``.iter`` path, a built graph, or a compiled one) and its
        launch values (the credential-derived vars injected first), check every agent node
        can run (each route's model resolves), write the run, and drive it until it finishes,
        fails or pauses. ``auto_resume`` (a count, or a schedule) lets the run be retried that
        many times on its own once a provider's window reopens (``Runner.retry_due``). Raises
        ``GraphError``/``UsageError`` before anything is written; ``ConflictError`` when
        another writer cancels the run (or marks it ``failed_resumable``) while it runs: its
        running nodes are stopped, the run stays as that writer left it."""
        # The recipes are checked as the runner loads them, once per runner: the ones it runs.
        if isinstance(workflow, ir.Graph):
            source = unparse(workflow)
            compiled = compile_graph(source, file="<built>", base=runner.cwd, loader=runner.recipe)
        elif isinstance(workflow, Compiled):
            compiled = workflow
        else:
            path = Path(workflow)
            where = path if path.is_absolute() else runner.cwd / path
            compiled = load_graph(where, loader=runner.recipe)
        given, injected = credential_vars(compiled.graph, vars or {}, runner.env)
        values = launch_vars(compiled.graph, given)
        agents = Agents(runner, compiled.graph, compiled.base).check()
        schedule = _schedule(auto_resume)
        cp = GraphCheckpoint(
            source=compiled.source, file=compiled.graph.file, base=str(compiled.base),
            cwd=str(runner.cwd), vars=values, expiry_policy=expiry_policy,
            trunk=Cursor(at=compiled.graph.workflow.entry, state="ready"),
            auto_resume=schedule, policy=KeptPolicy.of(runner.env, runner.cwd),
        )  # fmt: skip
        run = await runner.store.create_run(
            NewRun(
                id=run_id or new_run_id(),
                thread_id=thread_id or f"thread-{uuid.uuid4().hex[:16]}",
                kind="graph",
                ref=compiled.graph.file,
                agent=compiled.graph.workflow.name,
                checkpoint=cp.dump(),
            )
        )
        engine = Engine(runner, run, compiled, cp, surface or Surface(), interactions=(),
                        agents=agents)  # fmt: skip
        if injected:
            engine.events.graph("vars_injected", injected)
        return await engine.drive()

    async def prepare(self, runner: Runner, run: RunRecord) -> object:
        """The stored workflow still compiles, and each agent's recipe and model resolve;
        returns both (compiled once, resolved once), for the leg."""
        return _prepared(runner, _compiled(GraphCheckpoint.model_validate(run.checkpoint)))

    async def proceed(self, runner: Runner, claim: Claim, surface: Surface) -> RunResult:
        """Continue after the answers: the paused nodes resume where they stopped."""
        return await self._engine(runner, claim, surface).drive("paused_waiting_human")

    async def retry(self, runner: Runner, claim: Claim, surface: Surface) -> RunResult:
        """Continue a ``failed_resumable`` run: the failed node runs again (an agent's
        conversation is called again where it stopped); finished nodes are not re-run; a
        fan-out branch parked beside the failure resumes where it stopped once its questions
        (stored with the failure) are answered, and keeps waiting for them otherwise."""
        cp = GraphCheckpoint.model_validate(claim.run.checkpoint)
        if not cp.executions and cp.trunk.state != "ready":
            raise UsageError(f"run {claim.run.id} has nothing to retry")
        cp.retries += 1  # in a row, until a leg does not fail
        return await self._engine(runner, claim, surface, cp).drive("failed_resumable")

    def _engine(
        self, runner: Runner, claim: Claim, surface: Surface, cp: GraphCheckpoint | None = None
    ) -> Engine:
        """The leg's engine, on the workflow the claim compiled (compiled now when the claim
        was made elsewhere) and the interactions it read."""
        cp = cp or GraphCheckpoint.model_validate(claim.run.checkpoint)
        prepared = claim.prepared
        if not isinstance(prepared, _Prepared):  # a claim made elsewhere: check it here
            prepared = _prepared(runner, _compiled(cp))
        return Engine(runner, claim.run, prepared.compiled, cp, surface,
                      interactions=claim.interactions, agents=prepared.agents)  # fmt: skip

    def leg_events(
        self, run: RunRecord, leg: EventRecord, interactions: Mapping[str, InteractionRecord]
    ) -> list[BaseEvent]:
        """The leg's AG-UI events, as its ``leg_ended`` record keeps them."""
        return leg_record_events(leg.data)

    def view(self, run: RunRecord) -> RunView:
        """The run's last output, its last leg's AG-UI run id, and its node path."""
        cp = GraphCheckpoint.model_validate(run.checkpoint)
        lines = path_lines(cp, ended=is_terminal(run.status))
        return RunView(summary(cp), cp.agui_run_id, tuple(lines))
