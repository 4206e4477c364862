"""A graph run moved out of ``running`` by another writer while its nodes work (``runs cancel``,
a host's cancel, ``runs recover``): the running nodes stop — an agent whose model keeps calling
a tool, a command, every branch of a fan-out — and the leg ends with a ``ConflictError`` saying
what happened; the run stays as the other writer left it, nothing the stopped nodes did is
recorded. On a real SQLite file (and PostgreSQL), on asyncio and trio."""

from __future__ import annotations

import functools
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest
from ag_ui.core import BaseEvent, ToolCallResultEvent

from interactions import ConflictError
from interactions.store import RunStatus, Store, open_sqlite_store
from recipes.graph import start_graph
from recipes.graph.runtime import GraphCheckpoint
from recipes.runs import Runner, RunResult, Surface
from tests.recipes.graph.flows import write_flow
from tests.recipes.runs.conftest import postgres_store

pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])]

RUN = "run-cancel-me"
STOP_BOUND = 2.5
"""Seconds a node may go on after the cancel: the run's watch starts one second into a leg
(a shorter leg finds out at its next write), then sees the move at once (this store's doorbell,
SQLite's poll, PostgreSQL's notification)."""
BOUND = 15.0
"""What a test may take at most: the nodes alone would work for 5 s (a command: 4 s)."""
ENV = {"PATH": "/usr/bin:/bin"}

TICKER = '''\
"""An agent whose model never stops calling its one tool; the tool notes each call (in
``<label>.ticks``, the label being the node's user message) and works a tenth of a second."""

import time

import anyio
from pydantic import BaseModel

from recipes import OnUpdate, RecipeAPI, ToolContext
from recipes.messages import AssistantMessage, ToolCall, text_of
from recipes.models import ModelRequest, ScriptedModel


class Tick(BaseModel):
    label: str


def recipe(api: RecipeAPI) -> None:
    @api.tool
    async def tick(tool_call_id: str, params: Tick, ctx: ToolContext,
                   on_update: OnUpdate) -> str:
        """Note the call, then work a little."""
        with (ctx.cwd / f"{params.label}.ticks").open("a", encoding="utf-8") as out:
            out.write(f"{time.monotonic()}\\n")
        await anyio.sleep(0.1)
        return f"ticked {params.label}"

    def again(request: ModelRequest) -> AssistantMessage:
        label = text_of(request.messages[0].content).split()[0]
        turn = sum(isinstance(m, AssistantMessage) for m in request.messages)
        return AssistantMessage(tool_calls=[
            ToolCall(id=f"tick{turn}", name="tick", arguments={"label": label})
        ])

    api.register_agent("ticker", "Tick until told to stop.")
    api.set_demo_model(ScriptedModel([again] * 100, label="ticker"))
'''

ONE_NODE = """\
agent ticking:
  recipe: ./ticker.py
  user: "solo"

workflow loop:
  entry: ticking
  ticking -> done
"""

FAN_OUT = """\
router split:
  mode: fan_out_all

agent left:
  recipe: ./ticker.py
  user: "left"

agent right:
  recipe: ./ticker.py
  user: "right"

tool shell:
  command: `echo $$ > shell.pid; while true; do echo tick >> shell.ticks; sleep 0.05; done`
  timeout: "4s"

workflow fan:
  entry: split
  split -> left
  split -> right
  split -> shell
  left -> done
  right -> done
  shell -> done
"""
"""Three branches at once: two agents ticking, and a command that loops until killed."""


@pytest.fixture(params=["sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    """A real SQLite file, or PostgreSQL when ``PI_RECIPES_TEST_POSTGRES`` names a server."""
    if request.param == "sqlite":
        async with await open_sqlite_store(tmp_path / "state.db") as opened:
            yield opened
        return
    async with postgres_store("the graph cancel tests") as pg:
        yield pg


def flow(where: Path, source: str) -> Path:
    (where / "ticker.py").write_text(TICKER, encoding="utf-8")
    return write_flow(where, source)


def ticks(where: Path, label: str) -> list[float]:
    """When each call of ``label``'s tool began (this process's monotonic clock)."""
    log = where / f"{label}.ticks"
    return [float(t) for t in log.read_text().split()] if log.exists() else []


@dataclass
class Stopped:
    """How a leg driven in the background ended: what it raised or returned, and when."""

    error: Exception | None = None
    result: RunResult | None = None
    at: float = 0.0


async def cancel_while_ticking(
    runner: Runner, workflow: Path, labels: Iterable[str],
    cancel: Callable[[], Awaitable[object]],
) -> tuple[Stopped, float]:  # fmt: skip
    """Start ``workflow`` on ``runner``; once every label's tool has been called, ``cancel``.
    Returns how the leg ended and when the cancel was done."""
    waiting = {label: anyio.Event() for label in labels}

    def on_event(event: BaseEvent) -> None:
        if isinstance(event, ToolCallResultEvent) and isinstance(event.content, str):
            label = event.content.removeprefix("ticked ")
            if label in waiting:
                waiting[label].set()

    stopped = Stopped()

    async def drive() -> None:
        try:
            stopped.result = await start_graph(
                runner, workflow, run_id=RUN, surface=Surface(on_event=on_event)
            )
        except Exception as exc:
            stopped.error = exc
        stopped.at = time.monotonic()

    with anyio.fail_after(BOUND):
        async with anyio.create_task_group() as tg:
            tg.start_soon(drive)
            for ticked in waiting.values():
                await ticked.wait()
            await cancel()
            cancelled_at = time.monotonic()
    return stopped, cancelled_at


async def assert_stopped_unrecorded(
    store: Store, where: Path, labels: Iterable[str], stopped: Stopped, cancelled_at: float
) -> None:
    """Every label's tool stopped soon after the cancel, none after the leg ended, and nothing
    the nodes did was written after the other writer's move."""
    for label in labels:
        last = ticks(where, label)[-1]
        assert last - cancelled_at < STOP_BOUND, (
            f"{label}'s tool was still called {last - cancelled_at:.1f}s after the cancel"
        )
        assert last <= stopped.at, f"{label}'s tool was called after the leg ended"
    assert stopped.at - cancelled_at < STOP_BOUND, "the leg went on after the cancel"
    cp = GraphCheckpoint.model_validate((await store.get_run(RUN)).checkpoint)
    assert not [r for r in cp.executions if r.status == "finished" and r.kind != "router"]
    events = await store.list_events(RUN)
    moved = max(e.seq for e in events if e.type == "run_status_changed")
    assert [e.type for e in events if e.seq > moved] == [], "the stopped leg wrote after"


async def test_a_cancel_stops_an_agent_node_whose_model_keeps_calling_its_tool(
    tmp_path: Path, store: Store
) -> None:
    runner = Runner(store, env=ENV, cwd=tmp_path)
    stopped, cancelled_at = await cancel_while_ticking(
        runner, flow(tmp_path, ONE_NODE), ["solo"], lambda: runner.cancel(RUN)
    )
    await assert_stopped_unrecorded(store, tmp_path, ["solo"], stopped, cancelled_at)
    assert (await store.get_run(RUN)).status is RunStatus.CANCELLED
    assert isinstance(stopped.error, ConflictError), f"the leg ended with {stopped.result}"
    assert stopped.error.reason == "run_cancelled" and stopped.error.run_id == RUN
    assert str(stopped.error).startswith(
        f"run {RUN} was cancelled while this process ran it; the node it was running "
        "(ticking) was stopped"
    )


async def test_a_cancel_stops_every_branch_of_a_fan_out(tmp_path: Path, store: Store) -> None:
    runner = Runner(store, env=ENV, cwd=tmp_path)
    stopped, cancelled_at = await cancel_while_ticking(
        runner, flow(tmp_path, FAN_OUT), ["left", "right"], lambda: runner.cancel(RUN)
    )
    await assert_stopped_unrecorded(store, tmp_path, ["left", "right"], stopped, cancelled_at)
    pid = int((tmp_path / "shell.pid").read_text())
    with pytest.raises(ProcessLookupError):  # the command was killed, not left looping
        os.kill(pid, 0)
    assert (await store.get_run(RUN)).status is RunStatus.CANCELLED
    assert isinstance(stopped.error, ConflictError), f"the leg ended with {stopped.result}"
    assert stopped.error.reason == "run_cancelled" and stopped.error.run_id == RUN
    assert "the nodes it was running (left, right, shell) were stopped" in str(stopped.error)


@pytest.mark.parametrize("store", ["sqlite"], indirect=True)
async def test_a_cancel_from_another_process_stops_the_node(tmp_path: Path, store: Store) -> None:
    """Another store on the same file, as another process has: its write is seen by polling."""
    runner = Runner(store, env=ENV, cwd=tmp_path)
    async with await open_sqlite_store(tmp_path / "state.db") as elsewhere:
        stopped, cancelled_at = await cancel_while_ticking(
            runner, flow(tmp_path, ONE_NODE), ["solo"],
            functools.partial(Runner(elsewhere, env={}, host="cli").cancel, RUN),
        )  # fmt: skip
    await assert_stopped_unrecorded(store, tmp_path, ["solo"], stopped, cancelled_at)
    assert (await store.get_run(RUN)).status is RunStatus.CANCELLED
    assert isinstance(stopped.error, ConflictError), f"the leg ended with {stopped.result}"
    assert stopped.error.reason == "run_cancelled" and stopped.error.run_id == RUN


@pytest.mark.parametrize("store", ["sqlite"], indirect=True)
async def test_a_run_recovered_elsewhere_stops_its_node_and_says_how_to_retry(
    tmp_path: Path, store: Store
) -> None:
    runner = Runner(store, env=ENV, cwd=tmp_path)
    async with await open_sqlite_store(tmp_path / "state.db") as elsewhere:
        stopped, cancelled_at = await cancel_while_ticking(
            runner, flow(tmp_path, ONE_NODE), ["solo"],
            functools.partial(Runner(elsewhere, env={}).recover, older_than=0),
        )  # fmt: skip
    await assert_stopped_unrecorded(store, tmp_path, ["solo"], stopped, cancelled_at)
    run = await store.get_run(RUN)
    assert run.status is RunStatus.FAILED_RESUMABLE and (run.error or "").startswith("stranded")
    assert isinstance(stopped.error, ConflictError), f"the leg ended with {stopped.result}"
    assert stopped.error.reason == "version" and stopped.error.run_id == RUN
    assert f"run {RUN} was marked failed_resumable (stranded: " in str(stopped.error)
    assert str(stopped.error).endswith(f"retry it with: pi-recipes runs retry {RUN}")
