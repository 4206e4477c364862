"""Remembered approval decisions over REST, with httpx against a running server: a ``ship``
approval answered "approve always" for the thread lets the thread's next run through without
asking, ``GET /api/decisions`` lists it, ``POST /api/decisions/ID/revoke`` ends it (the next run
asks again; a second revoke returns it unchanged; an unknown id is a typed 404), and edited
arguments sent with an answer are checked before anything is stored."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.hosts.web.server import Server, serving, wait_for_status

SHIPPED = "Shipped to staging x2 (safe, notify=false)"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(tmp_path_factory.mktemp("decisions")) as running:
        yield running


@pytest.fixture
def http(server: Server) -> Iterator[httpx.Client]:
    with server.client() as client:
        yield client


def start(http: httpx.Client, prompt: str, thread: str | None = None) -> dict[str, Any]:
    """Start a run (maybe in ``thread``); the run once it pauses or ends."""
    body = {"prompt": prompt} | ({"thread_id": thread} if thread else {})
    reply = http.post("/api/runs", json=body)
    assert reply.status_code == 202, reply.text
    return wait_for_status(http, reply.json()["run_id"], {"paused_waiting_human", "finished"})


def event_types(http: httpx.Client, run_id: str) -> list[str]:
    return [e["type"] for e in http.get(f"/api/runs/{run_id}/events").json()["events"]]


def test_approve_always_for_the_thread_holds_until_revoked(http: httpx.Client) -> None:
    thread = f"t-{uuid.uuid4().hex[:8]}"
    first = start(http, "ship: staging", thread)
    assert first["status"] == "paused_waiting_human"
    answered = http.post(
        f"/api/runs/{first['id']}/interactions/int-c1/answer",
        json={"approved": True, "remember": {"scope": "thread"}, "answered_by": "ada"},
    )
    assert answered.status_code == 200, answered.text
    assert SHIPPED in wait_for_status(http, first["id"], {"finished"})["text"]

    second = start(http, "ship: staging", thread)  # the thread's next run: nobody is asked
    assert second["status"] == "finished" and second["interactions"] == []
    assert SHIPPED in second["text"]
    assert "tool_call_decided" in event_types(http, second["id"])

    listed = http.get("/api/decisions", params={"thread_id": thread}).json()["decisions"]
    (decision,) = listed
    assert decision["id"].startswith("dec-")
    assert {k: decision[k] for k in ("run_id", "interaction_id", "thread_id", "tool")} == {
        "run_id": first["id"], "interaction_id": "int-c1", "thread_id": thread, "tool": "ship"
    }  # fmt: skip
    assert (decision["action"], decision["scope"], decision["args"]) == ("allow", "thread", None)
    assert decision["decided_by"] == "token" and decision["revoked_at"] is None  # who signed in
    by_run = http.get("/api/decisions", params={"run_id": first["id"]}).json()["decisions"]
    assert by_run == listed

    revoked = http.post(f"/api/decisions/{decision['id']}/revoke", json={"revoked_by": "bob"})
    assert revoked.status_code == 200, revoked.text
    ended = revoked.json()
    assert ended["id"] == decision["id"] and ended["revoked_by"] == "token" and ended["revoked_at"]
    assert http.get("/api/decisions", params={"thread_id": thread}).json()["decisions"] == []
    everything = http.get("/api/decisions", params={"thread_id": thread, "include_revoked": True})
    assert everything.json()["decisions"] == [ended]
    kinds = event_types(http, first["id"])
    assert kinds.count("decision_remembered") == 1 and kinds.count("decision_revoked") == 1

    third = start(http, "ship: staging", thread)  # revoked: the next call asks again
    assert third["status"] == "paused_waiting_human"
    assert [i["id"] for i in third["interactions"]] == ["int-c1"]

    again = http.post(f"/api/decisions/{decision['id']}/revoke", json={"revoked_by": "carol"})
    assert again.status_code == 200 and again.json() == ended  # unchanged
    assert event_types(http, first["id"]).count("decision_revoked") == 1
    assert http.post(f"/api/runs/{third['id']}/cancel").status_code == 200


def test_an_unknown_decision_is_a_typed_404(http: httpx.Client) -> None:
    reply = http.post("/api/decisions/dec-000000000000/revoke", json={"revoked_by": "bob"})
    assert reply.status_code == 404, reply.text
    refusal = reply.json()
    assert (refusal["error"], refusal["reason"]) == ("unknown decision", "unknown_decision")
    assert "dec-000000000000" in refusal["message"]
    unknown_run = http.get("/api/runs/run-nope").json()  # the same shape as an unknown run's
    assert set(refusal) == set(unknown_run)
    assert http.post("/api/decisions/dec-000000000000/revoke").status_code == 404  # no body


def test_edited_arguments_are_checked_and_a_bad_edit_stores_nothing(http: httpx.Client) -> None:
    run = start(http, "ship: staging")
    url = f"/api/runs/{run['id']}/interactions/int-c1/answer"
    before = http.get(f"/api/runs/{run['id']}").json()
    bad = {"target": "prod", "replicas": 99}
    remember = {"scope": "run", "args": True}
    for body in ({"approved": True, "args": bad}, {"approved": True, "args": bad,
                                                    "remember": remember}):  # fmt: skip
        reply = http.post(url, json=body)
        assert reply.status_code == 422, reply.text
        complaints = reply.json()["complaints"]
        assert any("99 is greater than the maximum of 10" in c["message"] for c in complaints)
    assert http.get(f"/api/runs/{run['id']}").json() == before
    assert http.get("/api/decisions", params={"run_id": run["id"]}).json()["decisions"] == []

    edited = {"target": "prod", "replicas": 3, "mode": "fast", "notify": True}
    reply = http.post(url, json={"approved": True, "args": edited, "remember": remember})
    assert reply.status_code == 200, reply.text
    done = wait_for_status(http, run["id"], {"finished"})
    assert "Shipped to prod x3 (fast, notify=true)" in done["text"]
    (decision,) = http.get("/api/decisions", params={"run_id": run["id"]}).json()["decisions"]
    assert (decision["scope"], decision["args"]) == ("run", edited)  # the approved arguments
    assert decision["decided_by"] == "token"  # who signed in
