"""A cancel stops what a run is doing on the workers within a few seconds: a tool body (its
``ctx.abort`` fires, then the cancellation reaches it) or a model call. The run ends
``cancelled`` as on the other engines: the cancel returns the cancelled run, the caller whose
leg was stopped gets ``ConflictError`` ``run_cancelled``, and the stopped leg records nothing."""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import anyio
import pytest
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowFailureError

from interactions import ConflictError
from interactions.store import RunStatus
from recipes.runs import RunResult
from tests.recipes.temporal.conftest import (
    RECIPES,
    RELEASE,
    Engine,
    Worker,
    entries,
    logged,
    open_engine,
)
from tests.recipes.temporal.recipes_for_temporal import LOG_ENV, TICKS

pytestmark = pytest.mark.anyio

NOTICE_BOUND = 5.0
"""Seconds from a cancel's return to the stopped work's last line, and to the starter's answer
(about one second is expected: the watch's wake-up, then a heartbeat's round trip)."""


async def cancel_while(engine: Engine, recipe: str, log: Path, working: str) -> tuple[str, float]:
    """Start a run of ``recipe``, cancel it once ``log`` shows it ``working``, and check what
    the canceller, the starter and the run's record see (as
    ``tests/recipes/runs/test_reliability.py`` checks on SQLite); return the run's id and when
    the cancel returned."""
    run_id = f"run-cancel-{uuid.uuid4().hex[:8]}"  # one id space for the whole dev server
    stopped: list[ConflictError] = []
    done = anyio.Event()

    async def start() -> None:
        with pytest.raises(ConflictError) as refused:
            await engine.runner.start(recipe, "Deploy prod", run_id=run_id)
        stopped.append(refused.value)
        done.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(start)
        await logged(log, working)  # it has worked a second: its leg watches the run
        cancelled: RunResult = await engine.runner.cancel(run_id)
        cancelled_at = time.monotonic()
        with anyio.fail_after(NOTICE_BOUND):  # not when the work would have ended
            await done.wait()
    assert (cancelled.status, cancelled.error) == (RunStatus.CANCELLED, "cancelled")
    assert stopped[0].reason == "run_cancelled" and stopped[0].run_id == run_id
    assert "was cancelled while this process ran it; the agent was stopped" in str(stopped[0])
    events = await engine.store.list_events(run_id)
    assert "leg_ended" not in [e.type for e in events]  # the stopped leg wrote nothing after
    assert events[-1].type == "run_status_changed" and events[-1].data["to"] == "cancelled"
    described = await engine.store.client.get_workflow_handle(run_id).describe()
    assert described.status is WorkflowExecutionStatus.COMPLETED
    return run_id, cancelled_at


async def replays(engine: Engine, run_id: str) -> None:
    """Read the ended run back from a worker that keeps no workflow in memory: it replays the
    whole history on the workflow's code to answer (a nondeterminism fails the query)."""
    assert (await engine.runner.status(run_id)).run_id == run_id


def lines(log: Path) -> list[str]:
    return [what for what, _ in entries(log)]


async def stopped_by_a_cancel(
    engine: Engine, recipe: str, log: Path, working: str, last: str
) -> list[str]:
    """Cancel a run of ``recipe`` while its work notes ``working``; check that the work noted
    ``last`` within :data:`NOTICE_BOUND` seconds (not the 10 s it would have taken) and that
    the ended run reads back by replay; return the log's lines."""
    run_id, cancelled_at = await cancel_while(engine, recipe, log, working)
    await logged(log, last, bound=NOTICE_BOUND)
    stopped_after = time.monotonic() - cancelled_at
    await replays(engine, run_id)
    assert stopped_after < NOTICE_BOUND
    return lines(log)


async def test_a_cancel_stops_a_running_tool_within_seconds(
    address: Any, worker: Worker, tmp_path: Path
) -> None:
    log = tmp_path / "work.log"
    ticking = f"{RECIPES}:ticking"
    async with (
        worker(ticking, env={LOG_ENV: str(log)}, max_cached_workflows=0),
        open_engine(address) as engine,
    ):
        seen = await stopped_by_a_cancel(engine, ticking, log, "tick", "tool-cancelled")
    ticks = seen.count("tick")
    assert 1 <= ticks < TICKS, seen
    # ctx.abort fired, then the cancellation reached the body; nothing after it
    assert seen == ["tool-start", *["tick"] * ticks, "tool-aborted", "tool-cancelled"]


async def test_a_cancel_stops_a_running_model_call_within_seconds(
    address: Any, worker: Worker, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "work.log"
    monkeypatch.setenv(LOG_ENV, str(log))  # the model notes in this process's log
    pondering = f"{RECIPES}:pondering"
    async with worker(pondering, max_cached_workflows=0), open_engine(address) as engine:
        seen = await stopped_by_a_cancel(engine, pondering, log, "model-tick", "model-cancelled")
    ticks = seen.count("model-tick")
    assert 1 <= ticks < TICKS, seen
    assert seen == ["model-start", *["model-tick"] * ticks, "model-cancelled"]


async def test_a_tool_past_the_workers_tool_timeout_is_stopped(
    address: Any, worker: Worker, tmp_path: Path
) -> None:
    log = tmp_path / "work.log"
    ticking = f"{RECIPES}:ticking"
    async with (
        worker(ticking, env={LOG_ENV: str(log)}, tool_timeout=1.5, max_cached_workflows=0),
        open_engine(address) as engine,
    ):
        with anyio.fail_after(NOTICE_BOUND + 5):  # the tool alone would work for 10 s
            done = await engine.runner.start(ticking, "Deploy prod")
        await logged(log, "tool-cancelled", bound=NOTICE_BOUND)
        await replays(engine, done.run_id)
    assert done.status is RunStatus.FINISHED
    assert done.text == "Done: Tool 'deploy' timed out after 1.5 s."  # as on the other engines
    seen = lines(log)
    ticks = seen.count("tick")
    assert seen == ["tool-start", *["tick"] * ticks, "tool-aborted", "tool-cancelled"]
    assert ticks < TICKS


async def test_a_workflow_cancelled_in_temporal_ends_its_run_cancelled(
    address: Any, worker: Worker
) -> None:
    """``temporal workflow cancel`` (or the Temporal UI) on a paused run. Before, the workflow
    ended while the run read back ``paused_waiting_human`` with its question open, which no
    answer could reach any more."""
    async with worker(RELEASE, max_cached_workflows=0), open_engine(address) as engine:
        paused = await engine.runner.start(RELEASE, "Release v9.0.0")
        client = await Client.connect(address.target, namespace=address.namespace)
        handle = client.get_workflow_handle(paused.run_id)
        await handle.cancel()
        with anyio.fail_after(NOTICE_BOUND), pytest.raises(WorkflowFailureError):
            await handle.result()  # the workflow's end
        assert (await handle.describe()).status is WorkflowExecutionStatus.CANCELED
        ended = await engine.runner.status(paused.run_id)
        records = await engine.store.list_interactions(paused.run_id)
    assert (ended.status, ended.error, ended.interrupts) == (
        RunStatus.CANCELLED, "cancelled in Temporal", []
    )  # fmt: skip
    assert [r.answer.status for r in records if r.answer] == ["cancelled"]
