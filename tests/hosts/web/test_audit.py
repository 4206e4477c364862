"""``GET /api/audit`` with httpx against a running server, on a SQLite file and on PostgreSQL:
every interaction across runs as streamed JSON lines, bounded by ``since``/``until``; an
answer given on the server is listed with who signed in and ``via`` web; bad bounds are 400s
and the route needs the token."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from interactions.store import open_store
from tests.fixtures.audit_store import fill, postgres_schema
from tests.hosts.web.server import Server, serving, wait_for_status


@pytest.fixture(params=["sqlite", "postgresql"])
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Server, str, str]]:
    """A server on a store holding :func:`fill`'s runs, and their ids."""

    async def write(where: str) -> tuple[str, str]:
        async with await open_store(where) as store:
            return await fill(store)

    if request.param == "sqlite":
        where = str(tmp_path / "audit.db")
        one, two = anyio.run(write, where)
        with serving(tmp_path, store=where) as running:
            yield running, one, two
        return
    with postgres_schema() as url:
        one, two = anyio.run(write, url)
        with serving(tmp_path, store=url) as running:
            yield running, one, two


def audit(server: Server, **params: str) -> list[dict[str, Any]]:
    """The rows ``GET /api/audit`` streams, read line by line as they arrive."""
    with server.client() as http, http.stream("GET", "/api/audit", params=params) as reply:
        assert reply.status_code == 200, reply.read()
        assert reply.headers["content-type"].startswith("application/x-ndjson")
        return [json.loads(line) for line in reply.iter_lines() if line]


def test_every_interaction_streams_as_json_lines(server: tuple[Server, str, str]) -> None:
    running, one, two = server
    rows = audit(running)
    assert [(r["run_id"], r["interaction_id"]) for r in rows] == [
        (one, "int-q"), (one, "int-ok"), (two, "int-later"),
    ]  # fmt: skip
    asked = rows[0]
    assert (asked["payload"], asked["answered_by"], asked["via"]) == (
        {"answer": "beta"}, "ada", "slack",
    )  # fmt: skip
    assert asked["approvers"] == ["ada", "group:ops"] and asked["title"] == "Release channel"
    assert [v["voter"] for v in rows[1]["votes"]] == ["bo", "cy"]
    assert rows[1]["decisions"][0]["by"] == "policy"


def test_since_and_until_bound_when_it_was_asked(server: tuple[Server, str, str]) -> None:
    running = server[0]

    def ids(**params: str) -> list[str]:
        return [row["interaction_id"] for row in audit(running, **params)]

    assert ids(since="2026-03-01T10:00:00Z") == ["int-ok", "int-later"]
    assert ids(until="2026-03-01T10:00:00Z") == ["int-q"]
    assert ids(since="2026-03-01T09:30:00Z", until="2026-03-01T11:00:00+00:00") == ["int-ok"]
    assert ids(since="2026-03-02") == []


def test_an_answer_on_the_server_is_listed_with_who_signed_in(
    server: tuple[Server, str, str],
) -> None:
    running = server[0]
    run_id = running.start_run("pick: Which letter?")
    with running.client() as http:
        answered = http.post(
            f"/api/runs/{run_id}/interactions/int-c1/answer",
            json={"answer": "Beta", "answered_by": "mallory"},
        )
        assert answered.status_code == 200, answered.text
        wait_for_status(http, run_id, {"finished"})
    (row,) = [r for r in audit(running) if r["run_id"] == run_id]
    assert (row["interaction_id"], row["status"], row["question"]) == (
        "int-c1", "resolved", "Which letter?",
    )  # fmt: skip
    assert (row["payload"], row["answered_by"], row["via"]) == ({"answer": "beta"}, "token", "web")
    assert row["thread_id"] and row["answered_at"] >= row["asked_at"]


def test_bad_bounds_are_400_and_the_token_is_needed(server: tuple[Server, str, str]) -> None:
    running = server[0]
    with running.client() as http:
        bad = http.get("/api/audit", params={"since": "last week"})
        assert bad.status_code == 400, bad.text
        assert "ISO 8601" in bad.json()["message"]
        too_long = http.get("/api/audit", params={"until": "2" * 65})
        assert too_long.status_code == 422
    with running.client() as http:
        http.headers.pop("Authorization")
        assert http.get("/api/audit").status_code == 401
