"""What the inbox view reads, against a running ``pi-recipes serve`` with a users file (ada, and
bob of the group release, and eve): ``/api/me/inbox`` with each item's run in brief (title,
recipe name), the counts of each part, the questions only others may answer (``others``), one
run's (``run_id``); ``/api/me/history``, the closed questions newest answer first, paged with
``before``; bad parameters refused with a typed 4xx, nothing changed."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from hosts._kit import add_user
from interactions.store import RunStatus, open_sqlite_store
from interactions.testing.store_conformance import answer, new_interaction, new_run
from tests.hosts.web.server import Server, serving, wait_for_status

RECIPE = str(Path(__file__).with_name("web_inbox_recipe.py"))


@dataclass
class People:
    server: Server
    tokens: dict[str, str]

    def client(self, who: str) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.tokens[who]}"}
        return httpx.Client(base_url=self.server.url, headers=headers, timeout=20)

    def start(self, prompt: str) -> str:
        with self.client("ada") as http:
            reply = http.post("/api/runs", json={"prompt": prompt})
            assert reply.status_code == 202, reply.text
            run_id: str = reply.json()["run_id"]
            wait_for_status(http, run_id, {"paused_waiting_human"})
        return run_id

    def answer(self, who: str, run_id: str, interaction_id: str, body: dict[str, Any]) -> None:
        with self.client(who) as http:
            url = f"/api/runs/{run_id}/interactions/{interaction_id}/answer"
            reply = http.post(url, json=body)
            assert reply.status_code == 200, reply.text


@pytest.fixture(scope="module")
def people(tmp_path_factory: pytest.TempPathFactory) -> Iterator[People]:
    cwd = tmp_path_factory.mktemp("me-inbox")
    users = cwd / "users.toml"
    tokens = {
        "ada": add_user(users, "ada"),
        "bob": add_user(users, "bob", groups=["release"]),
        "eve": add_user(users, "eve"),
    }
    with serving(cwd, recipe=RECIPE, args=("--users", str(users))) as server:
        yield People(server, tokens)


def keys(items: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(i["run_id"], i["id"]) for i in items]


def test_the_inbox_names_each_question_s_run_and_counts_its_parts(people: People) -> None:
    long = "gate: Ship 9.0 " + "with every fix " * 20
    run_id = people.start(f"{long}\nopen: Anything else for 9.0?")
    with people.client("eve") as eve:
        inbox = eve.get("/api/me/inbox", params={"run_id": run_id}).json()
        (item,) = inbox["interactions"]  # the gate is not eve's
        assert (item["id"], item["assigned"], item["may_answer"]) == ("int-c2", False, True)
        assert inbox["counts"] == {"for_you": 0, "anyone": 1, "others": 0}
        brief = item["run"]
        assert brief["id"] == run_id and brief["kind"] == "recipe"
        assert brief["name"] == "web_inbox_recipe" and brief["agent"] == "inbox"
        assert brief["status"] == "paused_waiting_human"
        title = " ".join(f"{long}\nopen: Anything else for 9.0?".split())
        assert len(brief["title"]) == 120 and brief["title"] == title[:119].rstrip() + "…"

        both = eve.get("/api/me/inbox", params={"run_id": run_id, "others": True}).json()
        assert keys(both["interactions"]) == [(run_id, "int-c2"), (run_id, "int-c1")]
        theirs = both["interactions"][1]
        assert (theirs["assigned"], theirs["may_answer"]) == (False, False)  # last, read-only
        assert both["counts"] == {"for_you": 0, "anyone": 1, "others": 1}
    with people.client("bob") as bob:  # of the group release: the gate is his
        inbox = bob.get("/api/me/inbox", params={"run_id": run_id, "others": True}).json()
        assert [(i["id"], i["assigned"]) for i in inbox["interactions"]] == [
            ("int-c1", True), ("int-c2", False),
        ]  # fmt: skip
        assert inbox["counts"] == {"for_you": 1, "anyone": 1, "others": 0}
    for interaction_id in ("int-c1", "int-c2"):
        people.answer("ada", run_id, interaction_id, {"status": "cancelled"})


def test_the_history_lists_closed_questions_newest_answer_first(people: People) -> None:
    first = people.start("pick: Letter one?\nopen: Words one?")
    second = people.start("gate: Gate two")
    people.answer("bob", second, "int-c1", {"approved": True})
    people.answer("eve", first, "int-c1", {"answer": "beta"})
    people.answer("ada", first, "int-c2", {"status": "cancelled"})
    with people.client("eve") as eve:
        page = eve.get("/api/me/history", params={"limit": 3}).json()
        items = page["interactions"]
        assert keys(items) == [(first, "int-c2"), (first, "int-c1"), (second, "int-c1")]
        assert [i["answer"]["answered_by"] for i in items] == ["ada", "eve", "bob"]
        assert [i["answer"]["status"] for i in items] == ["cancelled", "resolved", "resolved"]
        assert items[1]["answer"]["payload"] == {"answer": "beta"}
        beta = {"label": "Beta", "value": "beta", "description": "the second letter"}
        assert items[1]["interrupt"]["options"][1] == beta  # the page shows its label
        assert items[0]["answered_at"] >= items[1]["answered_at"] >= items[2]["answered_at"]
        assert items[2]["run"]["title"] == "gate: Gate two"
        assert items[0]["run"]["title"] == "pick: Letter one? open: Words one?"

        whole = eve.get("/api/me/history", params={"limit": 200}).json()["interactions"]
        read, before = [], None
        while True:  # two at a time, each page after the last one read
            params: dict[str, Any] = {"limit": 2} | ({"before": before} if before else {})
            page = eve.get("/api/me/history", params=params).json()
            assert len(page["interactions"]) <= 2
            read += keys(page["interactions"])
            before = page["next"]
            if before is None:
                break
        assert read == keys(whole)


@pytest.mark.parametrize(
    ("path", "params", "reason"),
    [
        ("/api/me/history", {"limit": 0}, None),
        ("/api/me/history", {"limit": 201}, None),
        ("/api/me/history", {"limit": "many"}, None),
        ("/api/me/history", {"before": "nope"}, "invalid_cursor"),
        ("/api/me/history", {"before": "W1td"}, "invalid_cursor"),  # JSON, not a cursor
        ("/api/me/history", {"before": "x" * 2001}, None),
        ("/api/me/inbox", {"limit": 1001}, None),
        ("/api/me/inbox", {"after": "nope"}, "invalid_cursor"),
        ("/api/me/inbox", {"others": "maybe"}, None),
        ("/api/me/inbox", {"run_id": ""}, None),
    ],
)
def test_bad_parameters_are_refused_with_a_typed_error(
    people: People, path: str, params: dict[str, Any], reason: str | None
) -> None:
    with people.client("eve") as eve:
        reply = eve.get(path, params=params)
    assert reply.status_code == 422, reply.text
    body = reply.json()
    assert body["error"] and body["message"]
    if reason is not None:
        assert body["reason"] == reason


def test_the_inbox_of_a_run_the_store_does_not_hold_is_a_404(people: People) -> None:
    with people.client("eve") as eve:
        reply = eve.get("/api/me/inbox", params={"run_id": "run-nope"})
        assert reply.status_code == 404
        assert reply.json()["error"] == "unknown run" and reply.json()["run_id"] == "run-nope"
        assert (
            eve.get("/api/me/history", headers={"Authorization": "Bearer nope"}).status_code == 401
        )


def test_a_long_history_pages_newest_answer_first(people: People) -> None:
    """1,200 closed questions (more than the store's audit pages of 500, read a page at a time),
    answered in three batches: the history's pages hold the newest batch first."""
    start = datetime(2026, 1, 1, tzinfo=UTC)
    batches = [range(0, 700), range(700, 1000), range(1000, 1200)]

    async def write() -> str:
        async with await open_sqlite_store(people.server.store) as store:
            run = await store.create_run(new_run(id="run-long-history"))
            asked = [
                new_interaction(
                    f"int-q{n:04}", descriptor={"reason": "question", "message": f"Q{n}?"}
                )
                for n in range(1200)
            ]
            run = await store.update_run(
                run.id, expected_version=run.version, new_interactions=asked, now=start
            )
            for step, batch in enumerate(batches, start=1):
                answers = {f"int-q{n:04}": answer(f"a{n}", answered_by="ada") for n in batch}
                run = await store.update_run(
                    run.id, expected_version=run.version, answers=answers,
                    now=start + timedelta(minutes=step),
                )  # fmt: skip
            await store.update_run(run.id, expected_version=run.version, status=RunStatus.CANCELLED)
            return run.id

    run_id = anyio.run(write)
    with people.client("eve") as eve:
        read: list[str] = []
        before = None
        while True:
            params: dict[str, Any] = {"limit": 200} | ({"before": before} if before else {})
            reply = eve.get("/api/me/history", params=params)
            assert reply.status_code == 200, reply.text
            page = reply.json()
            read += [i["id"] for i in page["interactions"] if i["run_id"] == run_id]
            before = page["next"]
            if before is None:
                break
    newest_first = [n for batch in reversed(batches) for n in batch]
    assert read == [f"int-q{n:04}" for n in newest_first]
