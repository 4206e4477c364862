"""One fact, one answer over AG-UI, however the client learns it.

- A run cancelled while its leg streams (REST cancel, ``pi-recipes runs cancel`` in another
  process) ends that stream with ``RUN_FINISHED`` outcome ``cancelled``: what a replay of the
  same resume says afterwards, never a ``RUN_ERROR`` for a run nobody failed. The official
  client then holds no pending interrupt of the cancelled run.
- A replayed resume (no new leg) opens with the ``RUN_STARTED`` its live leg had: the same
  ``parentRunId``, the paused leg it continues.
- A failure no one planned for (a recipe's model whose credentials check raises a plain
  exception) is the typed JSON body with a generic message on every route, AG-UI and REST
  alike; what it said (maybe a secret) stays in the server's log.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import httpx
import pytest
from ag_ui.core import (
    Event,
    ResumeEntry,
    RunAgentInput,
    RunFinishedEvent,
    RunStartedEvent,
    UserMessage,
)
from pydantic import TypeAdapter

from hosts.web._errors import ErrorBody
from tests.hosts.cli_helpers import pi
from tests.hosts.web.server import (
    FRAGILE_RECIPE,
    RELEASE,
    SLOW_RECIPE,
    Server,
    gate,
    serving,
    wait_for_status,
)
from tests.hosts.web.web_fragile_recipe import FAILURE, SEALED, SECRET

EVENTS: TypeAdapter[Any] = TypeAdapter(Event)
BOUND = 20.0
SSE = {"Content-Type": "application/json", "Accept": "text/event-stream"}
CLIENT = Path(__file__).resolve().parents[1] / "agui_client"
PACKAGE = CLIENT / "node_modules" / "@ag-ui" / "client" / "package.json"
NODE = shutil.which("node")
CANCEL_DRIVER = CLIENT / "cancel.mjs"


def run_input(thread: str, text: str, resume: list[ResumeEntry] | None = None) -> RunAgentInput:
    """What an AG-UI client sends: a fresh run id and the message history every time."""
    return RunAgentInput(
        thread_id=thread, run_id=f"client-{uuid.uuid4().hex[:8]}",
        messages=[UserMessage(id="u1", role="user", content=text)],
        state={}, tools=[], context=[], forwarded_props={}, resume=resume,
    )  # fmt: skip


def wire(body: RunAgentInput) -> str:
    return body.model_dump_json(by_alias=True, exclude_none=True)


async def events_of(http: httpx.AsyncClient, body: RunAgentInput) -> list[Any]:
    """Every event of the call's stream, each parsed with ag-ui-protocol's models."""
    async with http.stream("POST", "/agui", content=wire(body), headers=SSE) as reply:
        assert reply.status_code == 200, (await reply.aread()).decode()
        return [
            EVENTS.validate_json(line.removeprefix("data: "))
            async for line in reply.aiter_lines()
            if line.startswith("data: ")
        ]


def closing(events: list[Any], body: RunAgentInput) -> RunFinishedEvent:
    """The stream's last event, a ``RUN_FINISHED`` of the call's own thread and run id."""
    last = events[-1]
    assert isinstance(last, RunFinishedEvent), f"the stream ended with {last!r}"
    assert (last.thread_id, last.run_id) == (body.thread_id, body.run_id)
    assert last.outcome is not None
    return last


def started(events: list[Any], body: RunAgentInput) -> RunStartedEvent:
    first = events[0]
    assert isinstance(first, RunStartedEvent)
    assert (first.thread_id, first.run_id) == (body.thread_id, body.run_id)
    return first


async def cancel(server: Server, http: httpx.AsyncClient, run_id: str, by: str) -> None:
    """Cancel the run over REST, or with ``pi-recipes runs cancel`` in another process."""
    if by == "rest":
        reply = await http.post(f"/api/runs/{run_id}/cancel")
        assert reply.status_code == 200, reply.text
        return
    done = await anyio.to_thread.run_sync(
        lambda: pi("runs", "cancel", run_id, "--store", server.store, cwd=server.cwd)
    )
    assert done.returncode == 0, done.stderr


async def first_of(*events: anyio.Event) -> None:
    """Return once one of ``events`` is set."""
    async with anyio.create_task_group() as tg:

        async def on(event: anyio.Event) -> None:
            await event.wait()
            tg.cancel_scope.cancel()

        for event in events:
            tg.start_soon(on, event)


async def only_run(http: httpx.AsyncClient, thread: str) -> str:
    (run,) = (await http.get("/api/runs", params={"thread_id": thread})).json()["runs"]
    return str(run["id"])


# ------------------------------------------------------------------ a cancel during a live leg


@dataclass
class MovedLeg:
    """A resume's leg during which another writer moved the run: the call that paused, the
    live resume and its replay, what each stream carried, the run and its status after."""

    first: RunAgentInput
    live: RunAgentInput
    replay: RunAgentInput
    streams: dict[str, list[Any]]
    run_id: str
    status: str


Move = Callable[[Server, httpx.AsyncClient, str], Awaitable[None]]


async def moved_under_a_live_leg(tmp_path: Path, move: Move) -> MovedLeg:
    """Pause a run of the slow recipe, resume it, ``move`` the run while the resumed leg
    streams (held on the gate), then send the same resume again."""
    thread = f"thread-{uuid.uuid4().hex[:8]}"
    streams: dict[str, list[Any]] = {}
    with serving(tmp_path, recipe=SLOW_RECIPE) as server:
        async with gate() as (port, holding, _), server.async_client() as http:
            first = run_input(thread, str(port))
            (interrupt,) = closing(await events_of(http, first), first).outcome.interrupts
            entry = ResumeEntry(
                interrupt_id=interrupt.id, status="resolved", payload={"answer": "blue"}
            )
            live = run_input(thread, str(port), [entry])

            async def watch() -> None:
                streams["live"] = await events_of(http, live)

            with anyio.fail_after(BOUND):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(watch)
                    await holding.wait()  # the resumed leg streams, held on the gate
                    run_id = await only_run(http, thread)
                    await move(server, http, run_id)
            replay = run_input(thread, str(port), [entry])
            streams["replay"] = await events_of(http, replay)
            status = (await http.get(f"/api/runs/{run_id}")).json()["status"]
    return MovedLeg(first, live, replay, streams, run_id, status)


@pytest.mark.anyio
@pytest.mark.parametrize("by", ["rest", "cli"])
async def test_a_leg_cancelled_while_it_streams_finishes_cancelled_as_its_replay_says(
    tmp_path: Path, by: str
) -> None:
    moved = await moved_under_a_live_leg(
        tmp_path, lambda server, http, run_id: cancel(server, http, run_id, by)
    )
    assert moved.status == "cancelled"
    live, replay, first = moved.live, moved.replay, moved.first
    ended = closing(moved.streams["live"], live)
    assert ended.outcome is not None and ended.outcome.type == "cancelled", ended
    assert started(moved.streams["live"], live).parent_run_id == first.run_id
    again = closing(moved.streams["replay"], replay)
    assert again.outcome is not None and again.outcome.type == ended.outcome.type
    assert started(moved.streams["replay"], replay).parent_run_id == first.run_id


async def recover(server: Server, http: httpx.AsyncClient, run_id: str) -> None:
    """``pi-recipes runs recover --older-than 0`` in another process."""
    recovering = ("runs", "recover", "--older-than", "0", "--store", server.store)
    done = await anyio.to_thread.run_sync(lambda: pi(*recovering, cwd=server.cwd))
    assert done.returncode == 0, done.stderr


@pytest.mark.anyio
async def test_a_leg_recovered_elsewhere_while_it_streams_ends_as_its_replay_says(
    tmp_path: Path,
) -> None:
    """``runs recover`` in another process marks the run ``failed_resumable`` under the live
    leg. Before, the stream ended with ``RUN_ERROR`` code ``conflict`` and the leg's own text,
    while a replay said ``RUN_ERROR`` with the run's error and no code."""
    moved = await moved_under_a_live_leg(tmp_path, recover)
    assert moved.status == "failed_resumable"
    ended, again = moved.streams["live"][-1], moved.streams["replay"][-1]
    assert ended.type == again.type == "RUN_ERROR"
    assert (ended.message, ended.code) == (again.message, again.code)
    assert f"pi-recipes runs retry {moved.run_id}" in ended.message


@pytest.mark.anyio
@pytest.mark.skipif(NODE is None, reason="node is not installed: the AG-UI client needs it")
@pytest.mark.skipif(
    not PACKAGE.exists(),
    reason="the AG-UI client is not installed: npm ci --prefix tests/hosts/agui_client",
)
async def test_the_official_client_sees_a_cancelled_leg_finish_cancelled(tmp_path: Path) -> None:
    """``@ag-ui/client`` (which checks the event sequence itself) learns of the cancel from the
    live leg as from its replay, and keeps no pending interrupt of the cancelled run."""
    assert NODE is not None
    thread = f"thread-client-{uuid.uuid4().hex[:8]}"
    with serving(tmp_path, recipe=SLOW_RECIPE) as server:
        async with gate() as (port, holding, _), server.async_client() as http:
            env = {
                **os.environ, "AGUI_URL": f"{server.url}agui", "AGUI_TOKEN": server.token,
                "AGUI_THREAD": thread, "AGUI_PROMPT": str(port),
            }  # fmt: skip
            errors = tmp_path / "node-stderr.txt"
            with anyio.fail_after(BOUND * 3), errors.open("wb") as stderr:
                node = await anyio.open_process(
                    [NODE, str(CANCEL_DRIVER)], env=env, stdin=subprocess.DEVNULL, stderr=stderr
                )
                async with node, anyio.create_task_group() as tg:
                    assert node.stdout is not None
                    output = bytearray()
                    ended = anyio.Event()

                    async def read(stdout: anyio.abc.ByteReceiveStream) -> None:
                        async for chunk in stdout:
                            output.extend(chunk)
                        ended.set()

                    tg.start_soon(read, node.stdout)
                    await first_of(holding, ended)  # the client's resume streams, held
                    if holding.is_set():
                        await cancel(server, http, await only_run(http, thread), "rest")
                    await node.wait()
    lines = output.decode().strip().splitlines()
    assert lines, f"the client printed nothing; stderr:\n{errors.read_text()}"
    seen = json.loads(lines[-1])
    assert "error" not in seen, seen["error"]
    paused, cancelled, replayed = seen["paused"], seen["cancelled"], seen["replayed"]
    assert paused["finished"]["outcome"] == "interrupt" and paused["pending"] == ["int-c1"]
    assert cancelled["error"] is None and cancelled["runError"] is None, cancelled
    assert cancelled["finished"] == {"runId": cancelled["sentRunId"], "outcome": "cancelled"}
    assert cancelled["pending"] == [], "the cancelled run's interrupt is no longer pending"
    assert replayed["error"] is None and replayed["runError"] is None, replayed
    assert replayed["finished"] == {"runId": replayed["sentRunId"], "outcome": "cancelled"}
    for leg in (cancelled, replayed):
        assert leg["started"] == {"runId": leg["sentRunId"], "parentRunId": paused["sentRunId"]}


# ------------------------------------------------------------------ a replay's RUN_STARTED


@pytest.mark.anyio
async def test_a_replayed_resume_names_the_leg_it_continues(tmp_path: Path) -> None:
    """Each resume of a conversation, replayed once the run has moved on (and once it has
    finished), names as ``parentRunId`` the paused leg its live leg named."""
    thread = f"thread-{uuid.uuid4().hex[:8]}"
    text = "Release v3.0.0"
    with serving(tmp_path, recipe=RELEASE) as server:
        async with server.async_client() as http:
            first = run_input(thread, text)
            (channel,) = closing(await events_of(http, first), first).outcome.interrupts
            answer = ResumeEntry(
                interrupt_id=channel.id, status="resolved", payload={"answer": "beta"}
            )
            second = run_input(thread, text, [answer])
            events = await events_of(http, second)
            assert started(events, second).parent_run_id == first.run_id
            (approval,) = closing(events, second).outcome.interrupts
            approve = ResumeEntry(
                interrupt_id=approval.id, status="resolved", payload={"approved": True}
            )

            replay = run_input(thread, text, [answer])  # the run waits on the approval now
            events = await events_of(http, replay)
            assert started(events, replay).parent_run_id == first.run_id
            assert closing(events, replay).outcome.type == "interrupt"

            third = run_input(thread, text, [approve])
            events = await events_of(http, third)
            assert started(events, third).parent_run_id == second.run_id
            assert closing(events, third).outcome.type == "success"
            for entry, parent in ((answer, first), (approve, second)):  # the run has finished
                replay = run_input(thread, text, [entry])
                events = await events_of(http, replay)
                assert started(events, replay).parent_run_id == parent.run_id
                assert closing(events, replay).outcome.type == "success"


# ------------------------------------------------------------------ a failure no one planned for


@dataclass
class Fragile:
    """A server of the fragile recipe, whose model fails while its vault is sealed."""

    server: Server

    @contextmanager
    def unsealed(self) -> Iterator[None]:
        """While the block runs, the model works: runs start and pause."""
        (self.server.cwd / SEALED).unlink(missing_ok=True)
        try:
            yield
        finally:
            (self.server.cwd / SEALED).write_text("")

    def paused_run(self, http: httpx.Client, thread: str | None = None) -> str:
        """A run started over REST, paused on its question ``int-c1``."""
        with self.unsealed():
            reply = http.post("/api/runs", json={"prompt": "Ask me.", "thread_id": thread})
            assert reply.status_code == 202, reply.text
            run_id: str = reply.json()["run_id"]
            wait_for_status(http, run_id, {"paused_waiting_human"})
        return run_id


@pytest.fixture(scope="module")
def fragile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fragile]:
    with serving(tmp_path_factory.mktemp("fragile"), recipe=FRAGILE_RECIPE) as running:
        yield Fragile(running)


ANSWER = {"interruptId": "int-c1", "status": "resolved", "payload": {"answer": "blue"}}


def agui_body(thread: str, resume: bool = False) -> str:
    body = run_input(thread, "Ask me.", [ResumeEntry.model_validate(ANSWER)] if resume else None)
    return wire(body)


def agui_start(fragile: Fragile, http: httpx.Client) -> httpx.Response:
    return http.post("/agui", content=agui_body(f"thread-{uuid.uuid4().hex[:8]}"), headers=SSE)


def agui_resume(fragile: Fragile, http: httpx.Client) -> httpx.Response:
    thread = f"thread-{uuid.uuid4().hex[:8]}"
    fragile.paused_run(http, thread)
    return http.post("/agui", content=agui_body(thread, resume=True), headers=SSE)


def rest_start(fragile: Fragile, http: httpx.Client) -> httpx.Response:
    return http.post("/api/runs", json={"prompt": "Ask me."})


def rest_resume(fragile: Fragile, http: httpx.Client) -> httpx.Response:
    run_id = fragile.paused_run(http)
    return http.post(f"/api/runs/{run_id}/resume", json={"entries": [ANSWER]})


def rest_answer(fragile: Fragile, http: httpx.Client) -> httpx.Response:
    run_id = fragile.paused_run(http)
    return http.post(f"/api/runs/{run_id}/interactions/int-c1/answer", json={"answer": "blue"})


def rest_continue(fragile: Fragile, http: httpx.Client) -> httpx.Response:
    run_id = fragile.paused_run(http)
    server = fragile.server
    with fragile.unsealed():  # answered in another process, which leaves the run paused
        done = pi("runs", "answer", run_id, "int-c1", "blue", "--store", server.store,
                  cwd=server.cwd)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return http.post(f"/api/runs/{run_id}/resume")


@pytest.mark.parametrize(
    "call",
    [agui_start, agui_resume, rest_start, rest_resume, rest_answer, rest_continue],
    ids=lambda call: call.__name__,
)
def test_an_unexpected_failure_is_the_typed_body_and_stays_in_the_log(
    fragile: Fragile, call: Callable[[Fragile, httpx.Client], httpx.Response]
) -> None:
    sealed, log = fragile.server.cwd / SEALED, fragile.server.log
    before = len(log.read_text())
    sealed.write_text("")
    try:
        with fragile.server.client() as http:
            reply = call(fragile, http)
            assert reply.status_code == 500, reply.text
            assert reply.headers["content-type"] == "application/json"
            body = ErrorBody.model_validate(reply.json())
            if call is rest_answer:  # the answer was stored before the run failed to go on
                assert (body.error, body.reason) == ("error", "cannot_continue")
                assert body.message.startswith("the answer is stored, but run ")
                assert "an unexpected error" in body.message and "/resume" in body.message
            else:
                assert (body.error, body.message) == ("error", "internal error")
            assert SECRET not in reply.text
            assert http.get("/api/runs").status_code == 200, "the connection still serves"
    finally:
        sealed.unlink(missing_ok=True)
    logged = log.read_text()[before:]
    said = FAILURE.replace(SECRET, "***")
    assert f"RuntimeError: {said}" in logged, "the failure is logged server-side, traceback and all"
    assert SECRET not in logged, "but not the key it quotes: every log line is scrubbed"
