"""REST with httpx against a running server: Iterion's shapes, the typed refusals, 16 racing
answers (exactly one wins), resume, cancel, events (and their SSE tail), tokens and limits."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import anyio
import httpx
import pytest

from tests.hosts.cli_helpers import pi
from tests.hosts.web.server import ONE_ANSWER, Server, serving, wait_for_status


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(tmp_path_factory.mktemp("rest")) as running:
        yield running


@pytest.fixture
def http(server: Server) -> Iterator[httpx.Client]:
    with server.client() as client:
        yield client


def test_start_a_run_then_list_show_and_find_its_pending_question(
    server: Server, http: httpx.Client
) -> None:
    started = http.post("/api/runs", json={"prompt": "pick: Which letter?"})
    assert started.status_code == 202
    body = started.json()
    assert set(body) == {"run_id", "thread_id", "status"} and body["status"] == "running"
    run = wait_for_status(http, body["run_id"], {"paused_waiting_human"})
    assert run["kind"] == "recipe" and run["agent"] == "web"
    listed = http.get("/api/runs", params={"status": "paused_waiting_human"}).json()["runs"]
    assert body["run_id"] in [r["id"] for r in listed]
    assert all(r["status"] == "paused_waiting_human" for r in listed)
    assert "checkpoint" not in listed[0]
    pending = http.get(f"/api/runs/{body['run_id']}/interactions/pending").json()
    (interaction,) = pending["interactions"]
    assert interaction["id"] == "int-c1" and interaction["run_id"] == body["run_id"]
    assert interaction["answered_at"] is None and interaction["requested_at"]
    interrupt = interaction["interrupt"]
    assert interrupt["message"] == "Which letter?"
    assert interrupt["options"][0] == {
        "label": "Alpha", "value": "alpha", "description": "the first letter"
    }  # fmt: skip
    assert interrupt["responseSchema"]["required"] == ["answer"]


def test_answer_iterion_shape_resumes_the_run_on_its_last_question(
    server: Server, http: httpx.Client
) -> None:
    run_id = server.start_run("pick: First?\ntext: Second?")
    first = http.post(f"/api/runs/{run_id}/interactions/int-c1/answer", json={"answer": "Beta"})
    assert first.status_code == 200
    assert first.json() == {
        "run_id": run_id, "interaction_id": "int-c1", "queued": True, "resumed": False,
        "created": True, **ONE_ANSWER,
    }  # fmt: skip
    last = http.post(
        f"/api/runs/{run_id}/interactions/int-c2/answer",
        json={"answer": "hello", "answered_by": "ada"},
    )
    assert last.json() == {
        "run_id": run_id, "interaction_id": "int-c2", "queued": False, "resumed": True,
        "created": True, **ONE_ANSWER,
    }  # fmt: skip
    done = wait_for_status(http, run_id, {"finished"})
    assert done["text"] == "Done: Answer: beta | Answer: hello"
    answers = {i["id"]: i["answer"] for i in done["interactions"]}
    assert answers["int-c1"] == {
        "status": "resolved", "payload": {"answer": "beta"}, "answered_by": "token", "via": "web"
    }  # fmt: skip
    assert answers["int-c2"]["answered_by"] == "token"  # who signed in: never the body's name


@pytest.mark.parametrize(
    ("path", "body", "status", "error"),
    [
        ("/api/runs/run-nope/interactions/int-c1/answer", {"answer": "x"}, 404, "unknown run"),
        ("{run}/interactions/int-zz/answer", {"answer": "x"}, 404, "unknown interaction"),
        ("{run}/interactions/int-c1/answer", {"answer": 5}, 422, "invalid payload"),
        ("{run}/interactions/int-c1/answer", {"approved": True}, 422, "invalid payload"),
        ("{run}/interactions/int-c1/answer", {}, 422, "invalid payload"),
        ("{run}/interactions/int-c1/answer", {"answer": "a", "extra": 1}, 422, "invalid request"),
        ("{run}/interactions/int-c1/answer", {"status": "cancelled", "answer": "a"}, 422,
         "invalid payload"),
        ("{run}/resume", {"entries": "nope"}, 422, "invalid request"),
        ("{run}/resume", {"entries": []}, 422, "invalid payload"),
        ("{run}/resume", {}, 422, "invalid payload"),
    ],
)  # fmt: skip
def test_refusals_are_typed_and_change_nothing(
    server: Server, http: httpx.Client, path: str, body: dict[str, object], status: int, error: str
) -> None:
    run_id = server.start_run("strict: Which?")
    before = http.get(f"/api/runs/{run_id}").json()
    reply = http.post(path.replace("{run}", f"/api/runs/{run_id}"), json=body)
    assert reply.status_code == status, reply.text
    refusal = reply.json()
    assert refusal["error"] == error and refusal["message"]
    assert set(refusal) == {
        "error", "message", "reason", "run_id", "interaction_id", "complaints"
    }  # fmt: skip
    assert http.get(f"/api/runs/{run_id}").json() == before


def test_a_payload_off_the_schema_lists_the_schemas_complaints(
    server: Server, http: httpx.Client
) -> None:
    run_id = server.start_run("approve: Ship it?")
    reply = http.post(
        f"/api/runs/{run_id}/interactions/int-c1/answer", json={"approved": "yes", "feedback": 3}
    )
    assert reply.status_code == 422
    complaints = {(c["path"], c["message"]) for c in reply.json()["complaints"]}
    assert ("approved", "'yes' is not of type 'boolean'") in complaints
    assert any(path == "feedback" for path, _ in complaints)
    strict = server.start_run("strict: Which?")
    off = http.post(f"/api/runs/{strict}/interactions/int-c1/answer", json={"answer": "Delta"})
    assert off.status_code == 422
    assert off.json()["complaints"][0]["message"].startswith("'Delta' is not one of")


def test_an_answer_nested_deeper_than_a_store_keeps_is_refused_and_changes_nothing(
    server: Server, http: httpx.Client
) -> None:
    run_id = server.start_run("pick: Which?")
    before = http.get(f"/api/runs/{run_id}").json()
    url = f"/api/runs/{run_id}/interactions/int-c1/answer"
    for depth in (300, 100_000):  # one the JSON parser reads, one it cannot
        body = b'{"answer": ' + b"[" * depth + b"1" + b"]" * depth + b"}"
        reply = http.post(url, content=body, headers={"Content-Type": "application/json"})
        assert reply.status_code == 422, reply.text
        refusal = reply.json()
        assert "nest" in refusal["message"], refusal["message"]
        assert refusal["reason"] == ("invalid_payload" if depth == 300 else "invalid_request")
    assert http.get(f"/api/runs/{run_id}").json() == before


def test_sixteen_concurrent_different_answers_exactly_one_wins(
    server: Server, http: httpx.Client
) -> None:
    run_id = server.start_run("text: Name it?")
    url = f"/api/runs/{run_id}/interactions/int-c1/answer"
    replies: list[httpx.Response] = []
    sent: dict[int, int] = {}

    async def answer(client: httpx.AsyncClient, n: int) -> None:
        reply = await client.post(url, json={"answer": f"name-{n}"})
        sent[id(reply)] = n
        replies.append(reply)

    async def race() -> None:
        async with server.async_client() as client, anyio.create_task_group() as tg:
            for n in range(16):
                tg.start_soon(answer, client, n)

    anyio.run(race)
    statuses = sorted(r.status_code for r in replies)
    assert statuses == [200] + [409] * 15
    (winner,) = [r for r in replies if r.status_code == 200]
    assert winner.json()["resumed"] is True
    losers = [r.json() for r in replies if r.status_code == 409]
    assert {(r["error"], r["reason"]) for r in losers} == {("conflict", "already_answered")}
    done = wait_for_status(http, run_id, {"finished"})
    (stored,) = done["interactions"]
    won = sent[id(winner)]
    assert stored["answer"]["payload"] == {"answer": f"name-{won}"}
    assert done["text"] == f"Done: Answer: name-{won}"


def test_an_identical_second_answer_is_a_replay(server: Server, http: httpx.Client) -> None:
    run_id = server.start_run("pick: Which?\ntext: And?")
    url = f"/api/runs/{run_id}/interactions/int-c1/answer"
    assert http.post(url, json={"answer": "alpha"}).status_code == 200
    again = http.post(url, json={"answer": "Alpha"})  # the label of the stored value
    assert again.status_code == 200 and again.json()["resumed"] is False
    assert http.post(url, json={"answer": "gamma"}).status_code == 409


def test_decline_then_resume_with_entries_and_a_second_resume_is_a_conflict(
    server: Server, http: httpx.Client
) -> None:
    run_id = server.start_run("pick: One?\napprove: Two?")
    declined = http.post(
        f"/api/runs/{run_id}/interactions/int-c1/answer", json={"status": "cancelled"}
    )
    assert declined.json()["queued"] is True
    entries = [
        {
            "interruptId": "int-c2",
            "status": "resolved",
            "payload": {"approved": False, "feedback": "later"},
        }
    ]
    resumed = http.post(f"/api/runs/{run_id}/resume", json={"entries": entries})
    assert resumed.status_code == 202, resumed.text
    done = wait_for_status(http, run_id, {"finished"})
    assert done["text"] == (
        "Done: User declined to answer. Proceed with your best judgment. | "
        "Revision requested. Feedback: later"
    )
    entries[0]["payload"] = {"approved": True}
    again = http.post(f"/api/runs/{run_id}/resume", json={"entries": entries})
    assert again.status_code == 409 and again.json()["reason"] == "already_answered"


def test_resume_a_run_answered_elsewhere(server: Server, http: httpx.Client) -> None:
    run_id = server.start_run("text: Name?")
    early = http.post(f"/api/runs/{run_id}/resume")
    assert early.status_code == 422 and early.json()["reason"] == "incomplete_resume"
    answered = pi(
        "runs", "answer", run_id, "int-c1", "Zoe", "--store", server.store, cwd=server.cwd
    )
    assert answered.returncode == 0, answered.stderr
    assert http.get(f"/api/runs/{run_id}").json()["status"] == "paused_waiting_human"
    resumed = http.post(f"/api/runs/{run_id}/resume")
    assert resumed.status_code == 202, resumed.text
    done = wait_for_status(http, run_id, {"finished"})
    assert done["text"] == "Done: Answer: Zoe"
    assert done["interactions"][0]["answer"]["via"] == "cli"
    finished = http.post(f"/api/runs/{run_id}/resume")
    assert finished.status_code == 409 and finished.json()["reason"] == "not_paused"


def test_cancel(server: Server, http: httpx.Client) -> None:
    run_id = server.start_run("text: Name?")
    cancelled = http.post(f"/api/runs/{run_id}/cancel")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    (interaction,) = http.get(f"/api/runs/{run_id}").json()["interactions"]
    assert interaction["answer"]["status"] == "cancelled"
    assert http.post(f"/api/runs/{run_id}/cancel").status_code == 409


def test_events_and_their_server_sent_tail(server: Server, http: httpx.Client) -> None:
    run_id = server.start_run("text: Name?")
    events = http.get(f"/api/runs/{run_id}/events").json()["events"]
    types = [e["type"] for e in events]
    assert types[0] == "run_created" and "interaction_requested" in types
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    last = events[-1]["seq"]
    tail: list[dict[str, object]] = []
    with (
        server.client() as streaming,
        streaming.stream(
            "GET", f"/api/runs/{run_id}/events", params={"follow": "1", "after": last}
        ) as stream,
    ):
        assert stream.headers["content-type"].startswith("text/event-stream")
        http.post(f"/api/runs/{run_id}/interactions/int-c1/answer", json={"answer": "Zed"})
        for line in stream.iter_lines():  # ends when the run has ended
            if line.startswith("data: "):
                tail.append(json.loads(line.removeprefix("data: ")))
    kinds = [e["type"] for e in tail]
    assert kinds[0] == "interaction_answered" and kinds[-1] == "run_status_changed"
    assert tail[-1]["data"] == {"from": "running", "to": "finished"}
    assert [e["seq"] for e in tail] == list(range(last + 1, last + 1 + len(tail)))


def test_a_runs_agui_events_leg_by_leg(server: Server, http: httpx.Client) -> None:
    run_id = server.start_run("text: Name?")
    http.post(f"/api/runs/{run_id}/interactions/int-c1/answer", json={"answer": "Zed"})
    wait_for_status(http, run_id, {"finished"})
    events = http.get(f"/api/runs/{run_id}/agui").json()["events"]
    starts = [e for e in events if e["type"] == "RUN_STARTED"]
    ends = [e for e in events if e["type"] == "RUN_FINISHED"]
    assert len(starts) == len(ends) == 2  # the leg that paused, the leg after the answer
    assert starts[1]["parentRunId"] == starts[0]["runId"]
    (paused,) = ends[0]["outcome"]["interrupts"]
    assert paused["id"] == "int-c1" and paused["message"] == "Name?"
    texts = [e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT"]
    assert texts == ["Let me ask.", "Done: Answer: Zed"]
    assert ends[1]["result"] == "Done: Answer: Zed"
    assert http.get("/api/runs/run-nope/agui").status_code == 404


def test_every_api_route_needs_the_token(server: Server) -> None:
    with httpx.Client(base_url=server.url, timeout=10) as anonymous:
        for method, path in [
            ("GET", "/api/runs"),
            ("POST", "/api/runs"),
            ("GET", "/api/runs/x"),
            ("POST", "/api/runs/x/interactions/y/answer"),
            ("POST", "/api/runs/x/cancel"),
            ("GET", "/api/decisions"),
            ("POST", "/api/decisions/x/revoke"),
            ("POST", "/agui"),
        ]:
            reply = anonymous.request(method, path, json={})
            assert reply.status_code == 401, (method, path)
            assert reply.json()["error"] == "unauthorized"
            assert reply.headers["www-authenticate"] == "Bearer"
        wrong = anonymous.get("/api/runs", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        for body in (b"{", b"x" * 500_000):  # the token first: the body is never read (was 422)
            reply = anonymous.post("/api/runs", content=body,
                                   headers={"Content-Type": "application/json"})  # fmt: skip
            assert (reply.status_code, reply.json()["error"]) == (401, "unauthorized")
        assert anonymous.get("/").status_code == 200, "the page itself asks for the token"
        assert anonymous.get("/openapi.json").status_code == 200


def test_bodies_over_the_limit_are_refused(server: Server, http: httpx.Client) -> None:
    huge = {"prompt": "x" * (2 << 20)}
    reply = http.post("/api/runs", json=huge)
    assert reply.status_code == 413 and reply.json()["error"] == "too large"


def test_cors_is_off_unless_configured(server: Server, http: httpx.Client) -> None:
    preflight = http.options(
        "/api/runs",
        headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"},
    )
    assert "access-control-allow-origin" not in preflight.headers
    plain = http.get("/api/runs", headers={"Origin": "https://evil.example"})
    assert "access-control-allow-origin" not in plain.headers


def test_cors_for_a_configured_origin(tmp_path: Path) -> None:
    origin = "https://app.example"
    with serving(tmp_path, args=("--allow-origin", origin)) as server, server.client() as http:
        preflight = http.options(
            "/api/runs", headers={"Origin": origin, "Access-Control-Request-Method": "POST"}
        )
        assert preflight.headers["access-control-allow-origin"] == origin
        other = http.get("/api/runs", headers={"Origin": "https://evil.example"})
        assert "access-control-allow-origin" not in other.headers


def test_openapi_lists_the_routes(server: Server) -> None:
    spec = httpx.get(f"{server.url}openapi.json", timeout=10).json()
    paths = set(spec["paths"])
    assert {
        "/api/runs", "/api/runs/{run_id}", "/api/runs/{run_id}/events",
        "/api/runs/{run_id}/agui", "/api/runs/{run_id}/interactions/pending",
        "/api/runs/{run_id}/interactions/{interaction_id}/answer",
        "/api/runs/{run_id}/resume", "/api/runs/{run_id}/cancel", "/agui",
        "/api/decisions", "/api/decisions/{decision_id}/revoke",
    } <= paths  # fmt: skip
    assert httpx.get(f"{server.url}docs", timeout=10).status_code == 200


def test_an_identical_answer_replayed_says_it_was_stored_and_continues_nothing_again(
    server: Server, http: httpx.Client
) -> None:
    """A replay of a stored answer used to say ``queued: true``, as if this call had queued
    it; it says ``created: false`` (stored already) and ``queued: false``, and the run is
    continued once, by the answer that completed it."""
    run_id = server.start_run("text: One?\ntext: Two?")
    url = f"/api/runs/{run_id}/interactions/int-c{{}}/answer".format
    ids = {"run_id": run_id, "interaction_id": "int-c1", **ONE_ANSWER}
    first = http.post(url(1), json={"answer": "a"}).json()
    assert first == ids | {"queued": True, "resumed": False, "created": True}
    again = http.post(url(1), json={"answer": "a"})
    assert again.status_code == 200, again.text
    assert again.json() == ids | {"queued": False, "resumed": False, "created": False}
    ids["interaction_id"] = "int-c2"
    last = http.post(url(2), json={"answer": "b"}).json()
    assert last == ids | {"queued": False, "resumed": True, "created": True}
    replayed = http.post(url(2), json={"answer": "b"}).json()  # the run may be going on
    assert replayed == ids | {"queued": False, "resumed": False, "created": False}
    assert wait_for_status(http, run_id, {"finished"})["text"] == "Done: Answer: a | Answer: b"
    kinds = [e["type"] for e in http.get(f"/api/runs/{run_id}/events").json()["events"]]
    assert kinds.count("interaction_answered") == 2 and kinds.count("leg_ended") == 2


def test_a_resume_repeating_answers_given_elsewhere_continues_the_run(
    server: Server, http: httpx.Client
) -> None:
    run_id = server.start_run("text: Name?")
    answered = pi(
        "runs", "answer", run_id, "int-c1", "Zoe", "--store", server.store, cwd=server.cwd
    )
    assert answered.returncode == 0, answered.stderr
    entries = [{"interruptId": "int-c1", "status": "resolved", "payload": {"answer": "Zoe"}}]
    resumed = http.post(f"/api/runs/{run_id}/resume", json={"entries": entries})
    assert resumed.status_code == 202, resumed.text
    done = wait_for_status(http, run_id, {"finished"})
    assert done["text"] == "Done: Answer: Zoe"


def test_a_thread_with_a_paused_run_is_continued_not_started_again(
    server: Server, http: httpx.Client
) -> None:
    thread = f"t-{uuid.uuid4().hex[:8]}"
    first = http.post("/api/runs", json={"prompt": "pick: Which letter?", "thread_id": thread})
    assert first.status_code == 202
    run_id = first.json()["run_id"]
    wait_for_status(http, run_id, {"paused_waiting_human"})
    again = http.post("/api/runs", json={"prompt": "pick: Which letter?", "thread_id": thread})
    assert again.status_code == 409
    refused = again.json()
    assert (refused["reason"], refused["run_id"]) == ("awaiting_resume", run_id)
    assert f"/api/runs/{run_id}/resume" in refused["message"] and "int-c1" in refused["message"]
    runs = http.get("/api/runs", params={"thread_id": thread}).json()["runs"]
    assert [r["id"] for r in runs] == [run_id]


@pytest.mark.parametrize("held", ["\x00", "\ud800"], ids=["NUL", "lone surrogate"])
@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/api/runs", {"prompt": "text: Name?", "thread_id": "t-{held}"}, "thread_id"),
        ("/api/runs", {"prompt": "text: Name?", "agent": "web{held}"}, "agent"),
        ("{run}/interactions/int-c1/answer", {"answer": "Zed", "answered_by": "ada{held}"},
         "answered_by"),
        ("{run}/resume", {"answered_by": "ada{held}"}, "answered_by"),
    ],
)  # fmt: skip
def test_a_name_no_store_keeps_is_a_422_naming_its_field_and_writes_nothing(
    server: Server, http: httpx.Client, path: str, body: dict[str, str], field: str, held: str
) -> None:
    """A thread id holding a NUL used to be a 400 (``usage``) found as the run was created,
    where every other field off the shape is a 422; an id or name holding what no store keeps
    is now refused with the body's other faults, naming the field, before anything is
    written."""
    run_id = server.start_run("text: Name?")
    before = http.get(f"/api/runs/{run_id}").json()
    runs = http.get("/api/runs", params={"limit": 1000}).json()["runs"]
    sent = json.dumps({k: v.replace("{held}", held) for k, v in body.items()})
    reply = http.post(path.replace("{run}", f"/api/runs/{run_id}"), content=sent.encode(),
                      headers={"Content-Type": "application/json"})  # fmt: skip
    assert reply.status_code == 422, reply.text
    refusal = reply.json()
    assert (refusal["error"], refusal["reason"]) == ("invalid request", "invalid_request")
    assert [c["path"] for c in refusal["complaints"]] == [field]
    what = "a NUL character" if held == "\x00" else "not valid Unicode"
    assert refusal["message"].startswith(f"the request is not the expected shape: {field}: ")
    assert what in refusal["message"] and "no store keeps it" in refusal["message"]
    assert http.get(f"/api/runs/{run_id}").json() == before
    assert http.get("/api/runs", params={"limit": 1000}).json()["runs"] == runs


@pytest.mark.parametrize(
    ("method", "path", "content", "status", "reason"),
    [
        ("POST", "{run}/interactions/int-c1/answer", b'{"answer": "caf\xe9"}', 422,
         "invalid_request"),
        ("POST", "/api/nope", b"{}", 404, "unknown_route"),
        ("GET", "{run}/nope", None, 404, "unknown_route"),
        ("PUT", "{run}", b"{}", 405, "method_not_allowed"),
    ],
)  # fmt: skip
def test_what_the_framework_refuses_is_typed_too(
    server: Server,
    http: httpx.Client,
    method: str,
    path: str,
    content: bytes | None,
    status: int,
    reason: str,
) -> None:
    run_id = server.start_run("pick: Which?")
    before = http.get(f"/api/runs/{run_id}").json()
    reply = http.request(
        method,
        path.replace("{run}", f"/api/runs/{run_id}"),
        content=content,
        headers={"Content-Type": "application/json"},
    )
    assert reply.status_code == status, reply.text
    refusal = reply.json()
    assert set(refusal) == {
        "error", "message", "reason", "run_id", "interaction_id", "complaints"
    }  # fmt: skip
    assert refusal["reason"] == reason and refusal["message"]
    assert http.get(f"/api/runs/{run_id}").json() == before


def test_odd_positions_and_ids_are_answered_never_a_server_error(
    server: Server, http: httpx.Client
) -> None:
    """A position past any a store holds, a ``Last-Event-ID`` of digits that are not ASCII or
    too many, a resume entry whose id is a lone surrogate, a streamed body over the limit:
    each gets a typed answer (these were a 500, a cut stream, a 500 and a 422)."""
    run_id = server.start_run("text: Name?")
    http.post(f"/api/runs/{run_id}/interactions/int-c1/answer", json={"answer": "Zed"})
    wait_for_status(http, run_id, {"finished"})
    for after in (2**63, 2**70):
        reply = http.get(f"/api/runs/{run_id}/events", params={"after": after})
        assert (reply.status_code, reply.json()) == (200, {"events": []})
    count = len(http.get(f"/api/runs/{run_id}/events").json()["events"])
    for hint, sent in ((b"\xb2", count), (b"9" * 40, 0)):  # "²": ignored; huge: past the end
        headers = {"Last-Event-ID": hint}
        with http.stream("GET", f"/api/runs/{run_id}/events", params={"follow": "1"},
                         headers=headers) as stream:  # fmt: skip
            assert stream.status_code == 200
            data = [line for line in stream.iter_lines() if line.startswith("data: ")]
        assert len(data) == sent

    entry = b'{"entries": [{"interruptId": "\\ud800", "status": "resolved", "payload": {}}]}'
    reply = http.post(f"/api/runs/{run_id}/resume", content=entry,
                      headers={"content-type": "application/json"})  # fmt: skip
    assert reply.status_code == 404, reply.text
    assert reply.json()["interaction_id"] == "\ufffd"  # the id it refuses, as UTF-8 carries it

    def chunks() -> Iterator[bytes]:
        yield b'{"prompt": "'
        for _ in range(3):
            yield b"x" * (1 << 20)
        yield b'"}'

    reply = http.post("/api/runs", content=chunks(), headers={"content-type": "application/json"})
    assert reply.status_code == 413 and reply.json()["error"] == "too large"


def test_a_followed_event_stream_ends_cleanly_when_the_server_stops(tmp_path: Path) -> None:
    """SIGTERM with an ``events?follow=1`` stream open: the stream ends at once (its client
    reconnects with ``Last-Event-ID``) and the server exits. It used to keep the shutdown
    waiting its whole grace period (10 s), then cut the stream with a traceback in the log."""
    with serving(tmp_path) as server, server.client() as http:
        run_id = server.start_run("text: Name?")
        read: list[str] = []
        with http.stream("GET", f"/api/runs/{run_id}/events", params={"follow": "1"}) as stream:
            lines = stream.iter_lines()
            while not any(line.startswith("data: ") for line in read):
                read.append(next(lines))
            began = time.monotonic()
            server.process.terminate()
            read += list(lines)  # ends when the server ends the stream, not with an error
        assert server.process.wait(timeout=30) in (0, -15)  # uvicorn ends by its signal
        assert time.monotonic() - began < 5, "the shutdown did not wait out its grace period"
    log = server.log.read_text()
    assert "Traceback" not in log and "timeout graceful shutdown exceeded" not in log


def test_a_question_whose_id_holds_a_slash_is_answered_over_rest(
    server: Server, http: httpx.Client
) -> None:
    """An interaction id holds its tool call's id, which a model may write with a ``/`` (or
    ``?``, ``#``, ``%``): the answer route, given the id percent-encoded, takes it. It answered
    404 (no such route), so such a question could be answered only over the WebSocket."""
    run_id = server.start_run("text@call/a b?#%: Name?")
    pending = http.get(f"/api/runs/{run_id}/interactions/pending").json()["interactions"]
    assert [p["id"] for p in pending] == ["int-call/a b?#%25"]  # the call id's % escaped
    iid = quote("int-call/a b?#%25", safe="")
    reply = http.post(f"/api/runs/{run_id}/interactions/{iid}/answer", json={"answer": "Zed"})
    assert reply.status_code == 200, reply.text
    assert reply.json()["interaction_id"] == "int-call/a b?#%25" and reply.json()["resumed"]
