"""The AG-UI endpoint over real HTTP: a whole conversation (start, ``RUN_FINISHED`` interrupt,
resume, interrupt, resume, success) with every event parsed by ag-ui-protocol's models; the
thread as the conversation; refusals before the stream, ``RUN_ERROR`` after it."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from ag_ui.core import (
    AssistantMessage,
    Event,
    EventType,
    ResumeEntry,
    RunAgentInput,
    RunErrorEvent,
    RunFinishedEvent,
    RunStartedEvent,
    TextMessageContentEvent,
    ToolCallResultEvent,
    ToolMessage,
    UserMessage,
)
from pydantic import TypeAdapter

from interactions import AskUserInterrupt
from tests.hosts.cli_helpers import pi, pi_json
from tests.hosts.web.server import RELEASE, Server, gate, serving

EVENTS: TypeAdapter[Any] = TypeAdapter(Event)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(tmp_path_factory.mktemp("agui"), recipe=RELEASE) as running:
        yield running


def run_input(
    thread: str,
    *,
    text: str | None = None,
    resume: list[ResumeEntry] | None = None,
    parent: str | None = None,
) -> RunAgentInput:
    """What an AG-UI client sends: a fresh run id and the message history every time (and, if
    it says so, the leg a resume continues as ``parentRunId``)."""
    messages = [UserMessage(id="u1", role="user", content=text or "Release v9.9.9")]
    return RunAgentInput(
        thread_id=thread, run_id=f"client-{uuid.uuid4().hex[:8]}", parent_run_id=parent,
        messages=messages, state={}, tools=[], context=[], forwarded_props={}, resume=resume,
    )  # fmt: skip


def post(server: Server, body: RunAgentInput) -> httpx.Response:
    with server.client() as http:
        return http.post(
            "/agui",
            content=body.model_dump_json(by_alias=True, exclude_none=True),
            headers={"Content-Type": "application/json", "Accept": "text/event-stream"},
        )


def stream(server: Server, body: RunAgentInput) -> list[Any]:
    """Every event of the answer, each parsed with ag-ui-protocol's models."""
    reply = post(server, body)
    assert reply.status_code == 200, reply.text
    assert reply.headers["content-type"].startswith("text/event-stream")
    chunks = [c for c in reply.text.split("\n\n") if c.strip()]
    assert all(c.startswith("data: ") for c in chunks), chunks
    return [EVENTS.validate_json(c.removeprefix("data: ")) for c in chunks]


def closing(events: list[Any], body: RunAgentInput, parent: str | None = None) -> RunFinishedEvent:
    started, last = events[0], events[-1]
    assert isinstance(started, RunStartedEvent) and isinstance(last, RunFinishedEvent)
    assert (started.thread_id, started.run_id, started.parent_run_id) == (
        body.thread_id, body.run_id, parent
    )  # fmt: skip
    assert (last.thread_id, last.run_id) == (body.thread_id, body.run_id)
    return last


def test_a_whole_conversation(server: Server) -> None:
    thread = f"thread-{uuid.uuid4().hex[:8]}"
    first = run_input(thread)
    events = stream(server, first)
    types = [e.type for e in events]
    assert types == [
        EventType.RUN_STARTED, EventType.TEXT_MESSAGE_START, *[EventType.TEXT_MESSAGE_CONTENT] * 3,
        EventType.TEXT_MESSAGE_END, EventType.TOOL_CALL_START, EventType.TOOL_CALL_ARGS,
        EventType.TOOL_CALL_END, EventType.RUN_FINISHED,
    ]  # fmt: skip
    text = "".join(e.delta for e in events if isinstance(e, TextMessageContentEvent))
    assert text == "Let me ask where to publish."
    paused = closing(events, first)
    assert paused.outcome is not None and paused.outcome.type == "interrupt"
    (raw,) = paused.outcome.interrupts
    interrupt = AskUserInterrupt.model_validate(raw.model_dump(by_alias=True))  # full descriptor
    assert interrupt.id == "int-call_channel" and interrupt.reason == "input_required"
    assert [o.label for o in interrupt.options] == ["Stable", "Beta", "Nightly"]
    assert interrupt.options[0].description == "every user gets it"
    assert interrupt.display is not None and interrupt.display.header == "Release channel"
    assert interrupt.response_schema and interrupt.expires_at

    second = run_input(thread, resume=[
        ResumeEntry(interrupt_id=interrupt.id, status="resolved", payload={"answer": "Beta"})
    ])  # fmt: skip
    events = stream(server, second)
    approval = closing(events, second, parent=first.run_id)
    (result,) = [e for e in events if isinstance(e, ToolCallResultEvent)]
    assert (result.tool_call_id, result.content) == ("call_channel", "Answer: beta")
    assert approval.outcome is not None and approval.outcome.type == "interrupt"
    (raw,) = approval.outcome.interrupts
    interrupt = AskUserInterrupt.model_validate(raw.model_dump(by_alias=True))
    assert interrupt.is_approval and interrupt.display is not None
    assert [s.title for s in interrupt.display.sections] == ["Changelog"]

    third = run_input(thread, resume=[
        ResumeEntry(interrupt_id=interrupt.id, status="resolved",
                    payload={"approved": True, "feedback": "go"})
    ])  # fmt: skip
    events = stream(server, third)
    done = closing(events, third, parent=second.run_id)
    assert done.outcome is not None and done.outcome.type == "success"
    assert done.result == "Published v9.9.9. Approved. Feedback: go"
    with server.client() as http:
        (run,) = http.get("/api/runs", params={"thread_id": thread}).json()["runs"]
        assert run["status"] == "finished"


def test_the_thread_is_the_conversation(server: Server) -> None:
    thread = f"thread-{uuid.uuid4().hex[:8]}"
    stream(server, run_input(thread))
    again = post(server, run_input(thread, text="Release v9.9.9 (the client's history again)"))
    assert again.status_code == 409
    body = again.json()
    assert (body["error"], body["reason"]) == ("conflict", "awaiting_resume")
    assert "int-call_channel" in body["message"]
    with server.client() as http:
        runs = http.get("/api/runs", params={"thread_id": thread}).json()["runs"]
    assert len(runs) == 1, "the paused run is continued, not restarted"


@pytest.mark.parametrize(
    ("entry", "status", "error"),
    [
        ({"interruptId": "int-call_channel", "status": "resolved", "payload": {"answer": 1}},
         422, "invalid payload"),
        ({"interruptId": "int-nope", "status": "resolved", "payload": {"answer": "x"}},
         404, "unknown interaction"),
    ],
)  # fmt: skip
def test_a_refused_resume_is_an_http_error_before_the_stream(
    server: Server, entry: dict[str, Any], status: int, error: str
) -> None:
    thread = f"thread-{uuid.uuid4().hex[:8]}"
    stream(server, run_input(thread))
    reply = post(server, run_input(thread, resume=[ResumeEntry.model_validate(entry)]))
    assert reply.status_code == status
    assert reply.json()["error"] == error
    if status == 422:
        assert reply.json()["complaints"] == [
            {"path": "answer", "message": "1 is not of type 'string'"}
        ]


def test_a_different_second_resume_is_a_conflict_and_an_identical_one_replays(
    server: Server,
) -> None:
    thread = f"thread-{uuid.uuid4().hex[:8]}"
    first = run_input(thread)
    stream(server, first)
    entry = ResumeEntry(
        interrupt_id="int-call_channel", status="resolved", payload={"answer": "beta"}
    )
    stream(server, run_input(thread, resume=[entry]))
    other = entry.model_copy(update={"payload": {"answer": "stable"}})
    conflict = post(server, run_input(thread, resume=[other]))
    assert conflict.status_code == 409 and conflict.json()["reason"] == "already_answered"
    replay = run_input(thread, resume=[entry])
    events = stream(server, replay)
    assert [e.type for e in events] == [EventType.RUN_STARTED, EventType.RUN_FINISHED]
    standing = closing(events, replay, parent=first.run_id)  # as its leg named it
    assert standing.outcome is not None and standing.outcome.type == "interrupt"
    assert [i.id for i in standing.outcome.interrupts] == ["int-call_publish"]


def test_an_old_resume_replayed_after_a_new_run_began_is_decided_by_its_own_run(
    server: Server,
) -> None:
    """A client replays a resume of the thread's first run after a second run began there and
    paused on a question with the same id (the demo model reuses its tool call ids). Its
    ``parentRunId`` names the first run's leg: the replay is that run's frame, and the second
    run's question stays open. It used to answer the second run's question with the first
    run's answer and start a leg of it."""
    thread = f"thread-{uuid.uuid4().hex[:8]}"
    first = run_input(thread)
    stream(server, first)
    channel = ResumeEntry(interrupt_id="int-call_channel", status="resolved",
                          payload={"answer": "beta"})  # fmt: skip
    answered = run_input(thread, resume=[channel], parent=first.run_id)
    stream(server, answered)
    publish = ResumeEntry(interrupt_id="int-call_publish", status="resolved",
                          payload={"approved": True})  # fmt: skip
    done = stream(server, run_input(thread, resume=[publish], parent=answered.run_id))
    assert done[-1].outcome is None or done[-1].outcome.type == "success"
    again = stream(server, run_input(thread, text="Release v10"))
    assert [i.id for i in again[-1].outcome.interrupts] == ["int-call_channel"]

    replay = answered.model_copy(update={"run_id": f"client-{uuid.uuid4().hex[:8]}"})
    events = stream(server, replay)
    assert [e.type for e in events] == [EventType.RUN_STARTED, EventType.RUN_FINISHED]
    standing = closing(events, replay, parent=first.run_id)
    assert standing.outcome is None or standing.outcome.type == "success"  # the first run's end
    with server.client() as http:
        [latest] = [r for r in http.get("/api/runs", params={"thread_id": thread}).json()["runs"]
                    if r["status"] == "paused_waiting_human"]  # fmt: skip
        pending = http.get(f"/api/runs/{latest['id']}/interactions/pending").json()
    assert [i["id"] for i in pending["interactions"]] == ["int-call_channel"], "still open"


def test_an_expired_interrupt_is_gone(tmp_path: Any) -> None:
    from tests.hosts.cli_helpers import cli_env

    env = cli_env(PI_INTERRUPT_TTL_SECONDS="1")
    with serving(tmp_path, recipe=RELEASE, env=env) as short:
        thread = f"thread-{uuid.uuid4().hex[:8]}"
        events = stream(short, run_input(thread))
        expires = datetime.fromisoformat(events[-1].outcome.interrupts[0].expires_at)
        time.sleep(max(0.0, (expires - datetime.now(UTC)).total_seconds()) + 0.05)  # its TTL
        entry = ResumeEntry(interrupt_id="int-call_channel", status="resolved",
                            payload={"answer": "beta"})  # fmt: skip
        reply = post(short, run_input(thread, resume=[entry]))
        assert reply.status_code == 410 and reply.json()["error"] == "expired"


def test_a_failure_found_after_the_stream_started_is_a_run_error(tmp_path: Any) -> None:
    from tests.hosts.web.server import WEB_RECIPE

    with serving(tmp_path, recipe=WEB_RECIPE) as web:
        body = run_input(f"thread-{uuid.uuid4().hex[:8]}", text="twice: Really?")
        events = stream(web, body)
        assert isinstance(events[0], RunStartedEvent) and events[0].run_id == body.run_id
        error = events[-1]
        assert isinstance(error, RunErrorEvent)
        assert error.code and "ContractError" in error.message


def test_bad_inputs(server: Server) -> None:
    with server.client() as http:
        reply = http.post(
            "/agui", content=b'{"threadId": "t"}', headers={"Content-Type": "application/json"}
        )
        assert reply.status_code == 422 and reply.json()["error"] == "invalid request"
        no_user = run_input(f"thread-{uuid.uuid4().hex[:8]}").model_copy(update={"messages": []})
        reply = post(server, no_user)
        assert reply.status_code == 422 and reply.json()["reason"] == "no_user_message"
        unknown = run_input(f"thread-{uuid.uuid4().hex[:8]}", resume=[
            ResumeEntry(interrupt_id="int-x", status="cancelled")
        ])  # fmt: skip
        reply = post(server, unknown)
        assert reply.status_code == 404 and reply.json()["reason"] == "unknown_thread"


@pytest.mark.parametrize(
    "value",
    ["", "t" * 201, "t\x00x"],
    ids=["empty", "longer than REST takes", "holding a NUL"],
)
@pytest.mark.parametrize("field", ["threadId", "runId"])
def test_an_empty_thread_or_run_id_is_refused_and_starts_nothing(
    server: Server, field: str, value: str
) -> None:
    """An empty ``threadId`` would start a run on a thread the client cannot name to resume
    it (its interrupt stranded), an empty ``runId`` one whose events carry another run id; one
    over 200 characters a thread the REST API refuses to list or continue. One holding a NUL,
    which no store keeps in an id, was a 400 (``threadId``) or started a run (``runId``)."""
    body = run_input(f"thread-{uuid.uuid4().hex[:8]}").model_dump(by_alias=True, mode="json")
    with server.client() as http:
        before = len(http.get("/api/runs", params={"limit": 500}).json()["runs"])
        reply = http.post("/agui", json=body | {field: value})
        assert reply.status_code == 422, reply.text
        assert reply.json()["error"] == "invalid request"
        assert [c["path"] for c in reply.json()["complaints"]] == [field]
        if "\x00" in value:
            assert f"{field}: holds a NUL character" in reply.json()["message"]
        assert len(http.get("/api/runs", params={"limit": 500}).json()["runs"]) == before


@pytest.mark.parametrize(
    "after",
    [
        [AssistantMessage(id="a1", role="assistant", content="Published v9.9.9.")],
        [ToolMessage(id="t1", role="tool", tool_call_id="call_x", content="done")],
        [UserMessage(id="u2", role="user", content="  ")],
    ],
    ids=["assistant", "tool", "blank user"],
)
def test_a_start_whose_last_message_is_not_a_new_user_message_runs_nothing(
    server: Server, after: list[Any]
) -> None:
    """The last user message of such a history was answered already (or the new one says
    nothing): running it again would do its work twice, so the call is refused."""
    thread = f"thread-{uuid.uuid4().hex[:8]}"
    body = run_input(thread)
    body = body.model_copy(update={"messages": [*body.messages, *after]})
    reply = post(server, body)
    assert reply.status_code == 422, reply.text
    assert reply.json()["reason"] == "no_user_message"
    with server.client() as http:
        assert http.get("/api/runs", params={"thread_id": thread}).json()["runs"] == []


def test_a_resume_repeating_an_answer_given_elsewhere_continues_the_run(server: Server) -> None:
    thread = f"thread-{uuid.uuid4().hex[:8]}"
    first = run_input(thread)
    stream(server, first)
    with server.client() as http:
        (run,) = http.get("/api/runs", params={"thread_id": thread}).json()["runs"]
    answered = pi("runs", "answer", run["id"], "int-call_channel", "beta",
                  "--store", server.store, cwd=server.cwd)  # fmt: skip
    assert answered.returncode == 0, answered.stderr
    entry = ResumeEntry(
        interrupt_id="int-call_channel", status="resolved", payload={"answer": "beta"}
    )
    second = run_input(thread, resume=[entry])
    events = stream(server, second)
    approval = closing(events, second, parent=first.run_id)
    (result,) = [e for e in events if isinstance(e, ToolCallResultEvent)]
    assert (result.tool_call_id, result.content) == ("call_channel", "Answer: beta")
    assert approval.outcome is not None and approval.outcome.type == "interrupt"
    assert [i.id for i in approval.outcome.interrupts] == ["int-call_publish"]


def test_racing_starts_on_one_thread_start_one_run(server: Server) -> None:
    """Four AG-UI calls and four ``POST /api/runs`` start the same new thread at once: exactly one
    run starts; the others are refused (409) and the thread holds that one run."""
    thread = f"thread-{uuid.uuid4().hex[:8]}"
    body = run_input(thread).model_dump_json(by_alias=True, exclude_none=True)
    replies: list[httpx.Response] = []

    async def agui(client: httpx.AsyncClient) -> None:
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
        replies.append(await client.post("/agui", content=body, headers=headers))

    async def rest(client: httpx.AsyncClient) -> None:
        replies.append(
            await client.post("/api/runs", json={"prompt": "Release v9.9.9", "thread_id": thread})
        )

    async def race() -> None:
        async with server.async_client() as client, anyio.create_task_group() as tg:
            for _ in range(4):
                tg.start_soon(agui, client)
                tg.start_soon(rest, client)

    anyio.run(race)
    assert sorted(r.status_code < 300 for r in replies) == [False] * 7 + [True]
    refused = [r.json() for r in replies if r.status_code >= 300]
    assert {r["error"] for r in refused} == {"conflict"}
    assert {r["reason"] for r in refused} <= {"running", "awaiting_resume"}
    with server.client() as http:
        runs = http.get("/api/runs", params={"thread_id": thread}).json()["runs"]
    assert len(runs) == 1


@pytest.mark.anyio
async def test_on_sigterm_an_agui_stream_ends_at_once_and_its_leg_gets_the_grace(
    tmp_path: Path,
) -> None:
    """SIGTERM with an AG-UI stream open: the stream ran on, unclosed, until uvicorn gave up
    on it (10 s, a traceback in the log); and the leg was cut at once, not given the grace
    the workers promise. Now the stream ends with a closing RUN_ERROR at once, and the leg,
    let go within the grace, finishes its run."""
    async with gate() as (port, holding, release):
        with serving(tmp_path) as server:
            body = run_input("stopping", text=f"hold: {port}")
            async with server.async_client() as http, http.stream(
                "POST", "/agui", content=body.model_dump_json(by_alias=True, exclude_none=True),
                headers={"Content-Type": "application/json", "Accept": "text/event-stream"},
            ) as reply:  # fmt: skip
                lines = reply.aiter_lines()
                with anyio.fail_after(20):
                    await holding.wait()  # the leg holds its worker
                began = time.monotonic()
                server.process.terminate()
                with anyio.fail_after(20):
                    rest = [line async for line in lines if line.startswith("data: ")]
                ended = time.monotonic() - began
            last = EVENTS.validate_json(rest[-1].removeprefix("data: "))
            assert isinstance(last, RunErrorEvent) and last.code == "server_stopping", rest
            assert ended < 5, "the stream waited out the shutdown's grace"
            release.set()  # the leg ends within its grace
            assert await anyio.to_thread.run_sync(server.process.wait, 30) in (0, -15)
    log = server.log.read_text()
    assert "Traceback" not in log and "timeout graceful shutdown exceeded" not in log
    (run,) = pi_json("runs", "list", "--store", server.store, cwd=tmp_path)
    assert run["status"] == "finished", run
