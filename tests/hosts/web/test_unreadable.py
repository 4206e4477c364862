"""A stored interaction this pi-recipes cannot read (a descriptor another tool, another version or
a hand wrote: the store takes any JSON object), against a running ``pi-recipes serve``: the run
view, its pending list and the inbox answer 200 and mark it ``unreadable`` (the run's other
question shows as usual); answering it, alone or in a resume, is a typed 409 that changes
nothing, and the run's other question can still be answered."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.hosts.unreadable import both, paused_on, snapshot
from tests.hosts.web.server import Server, serving


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(tmp_path_factory.mktemp("unreadable")) as running:
        yield running


@pytest.fixture
def http(server: Server) -> Iterator[httpx.Client]:
    with server.client() as client:
        yield client


def paused_with_both(server: Server, run_id: str) -> str:
    """A run, written straight through the store API, paused on an unreadable question
    (``int-bad``) and a readable one (``int-ok``)."""
    return paused_on(server.store, run_id, *both())


def by_id(interactions: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {i["id"]: i for i in interactions}


def test_the_views_show_the_unreadable_question_as_such_and_the_rest_as_usual(
    server: Server, http: httpx.Client
) -> None:
    run_id = paused_with_both(server, "run-views")
    run = http.get(f"/api/runs/{run_id}")
    assert run.status_code == 200, run.text
    assert run.json()["status"] == "paused_waiting_human"
    pending = http.get(f"/api/runs/{run_id}/interactions/pending")
    assert pending.status_code == 200, pending.text
    inbox = http.get("/api/me/inbox", params={"run_id": run_id})
    assert inbox.status_code == 200, inbox.text
    for shown in (run.json(), pending.json(), inbox.json()):
        found = by_id(shown["interactions"])
        assert sorted(found) == ["int-bad", "int-ok"]
        bad, ok = found["int-bad"], found["int-ok"]
        assert (bad["run_id"], bad["unreadable"], bad["interrupt"]) == (
            run_id,
            "reason: Field required",
            {},
        )
        assert ok["unreadable"] is None
        assert (ok["interrupt"]["id"], ok["interrupt"]["message"]) == ("int-ok", "Which colour?")
    listed = http.get("/api/runs", params={"limit": 1000})
    assert listed.status_code == 200 and run_id in [r["id"] for r in listed.json()["runs"]]


def test_answering_the_unreadable_question_is_a_typed_409_that_changes_nothing(
    server: Server, http: httpx.Client
) -> None:
    run_id = paused_with_both(server, "run-answers")
    before = snapshot(server.store)
    entries = [
        {"interruptId": "int-bad", "status": "resolved", "payload": {"answer": "red"}},
        {"interruptId": "int-ok", "status": "resolved", "payload": {"answer": "blue"}},
    ]
    answer = f"/api/runs/{run_id}/interactions/int-bad/answer"
    refusals = [
        http.post(answer, json={"answer": "red"}),
        http.post(answer, json={"status": "cancelled"}),
        http.post(f"/api/runs/{run_id}/resume", json={"entries": entries}),
    ]
    for refused in refusals:
        assert refused.status_code == 409, refused.text
        body = refused.json()
        assert (body["error"], body["reason"]) == ("unreadable interaction", "unreadable")
        assert (body["run_id"], body["interaction_id"]) == (run_id, "int-bad")
        assert "cannot read (reason: Field required)" in body["message"]
    assert snapshot(server.store) == before, "a refused answer changes nothing"

    other = http.post(f"/api/runs/{run_id}/interactions/int-ok/answer", json={"answer": "blue"})
    assert other.status_code == 200, other.text
    assert other.json()["resumed"] is False  # the run still waits on int-bad
    found = by_id(http.get(f"/api/runs/{run_id}").json()["interactions"])
    assert found["int-ok"]["answer"]["payload"] == {"answer": "blue"}
    assert found["int-bad"]["answer"] is None
