"""Two server processes on one PostgreSQL store: a run answered on either is continued by
exactly one of them; racing different answers through both, exactly one wins; an answer given
on one reaches the WebSocket clients of the other at once (``LISTEN``/``NOTIFY``)."""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import anyio
import httpx
import pytest
from websockets.asyncio.client import connect

from tests.hosts.web.server import Server, serving, wait_for_status

SERVER = os.environ.get("PI_RECIPES_TEST_POSTGRES")
pytestmark = pytest.mark.skipif(
    not SERVER, reason="set PI_RECIPES_TEST_POSTGRES to run the PostgreSQL tests"
)


@pytest.fixture(scope="module")
def store_url() -> Iterator[str]:
    import psycopg

    assert SERVER is not None
    schema = f"pi_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(SERVER, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
        try:
            sep = "&" if "?" in SERVER else "?"
            yield f"{SERVER}{sep}options={quote(f'-csearch_path={schema}')}"
        finally:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


@pytest.fixture(scope="module")
def servers(
    tmp_path_factory: pytest.TempPathFactory, store_url: str
) -> Iterator[tuple[Server, Server]]:
    cwd = tmp_path_factory.mktemp("two")
    with serving(cwd, store=store_url) as one, serving(cwd, store=store_url) as two:
        assert one.token == two.token, "the second server read the token the first wrote"
        yield one, two


def _answer_on_both(
    servers: tuple[Server, Server], run_id: str, payloads: list[dict[str, object]]
) -> list[httpx.Response]:
    replies: list[httpx.Response] = []

    async def answer(server: Server, payload: dict[str, object]) -> None:
        async with server.async_client() as http:
            url = f"/api/runs/{run_id}/interactions/int-c1/answer"
            replies.append(await http.post(url, json=payload))

    async def race() -> None:
        async with anyio.create_task_group() as tg:
            for n, payload in enumerate(payloads):
                tg.start_soon(answer, servers[n % 2], payload)

    anyio.run(race)
    return replies


def test_a_run_answered_on_both_is_continued_by_exactly_one(
    servers: tuple[Server, Server],
) -> None:
    one, two = servers
    for _ in range(5):  # a few rounds: the race goes either way
        run_id = one.start_run("text: Who continues?")
        replies = _answer_on_both(servers, run_id, [{"answer": "same"}] * 2)
        assert [r.status_code for r in replies] == [200, 200]
        assert sorted(r.json()["resumed"] for r in replies) == [False, True]
        with two.client() as http:
            done = wait_for_status(http, run_id, {"finished"})
            events = http.get(f"/api/runs/{run_id}/events").json()["events"]
            agui = http.get(f"/api/runs/{run_id}/agui").json()["events"]
        assert done["text"] == "Done: Answer: same"
        starts = [e for e in agui if e["type"] == "RUN_STARTED"]
        assert len(starts) == 2, "the start, and exactly one continuation"
        moves = [e["data"]["to"] for e in events if e["type"] == "run_status_changed"]
        assert moves == ["paused_waiting_human", "running", "finished"]


def test_sixteen_different_answers_through_two_servers_exactly_one_wins(
    servers: tuple[Server, Server],
) -> None:
    one, _ = servers
    run_id = one.start_run("text: Name?")
    replies = _answer_on_both(servers, run_id, [{"answer": f"n{i}"} for i in range(16)])
    assert sorted(r.status_code for r in replies) == [200] + [409] * 15
    (winner,) = [r for r in replies if r.status_code == 200]
    assert winner.json()["resumed"] is True
    with one.client() as http:
        done = wait_for_status(http, run_id, {"finished"})
    assert done["text"] == f"Done: Answer: {done['interactions'][0]['answer']['payload']['answer']}"


def test_an_answer_on_one_server_reaches_the_others_clients_at_once(
    servers: tuple[Server, Server],
) -> None:
    one, two = servers
    run_id = one.start_run("text: Heard?")

    async def watch_then_answer() -> float:
        async with connect(two.ws_url, additional_headers=two.headers, proxy=None) as ws:
            await ws.recv()
            await ws.send(json.dumps({"type": "subscribe", "run_id": run_id}))
            await ws.recv()
            async with one.async_client() as http:
                url = f"/api/runs/{run_id}/interactions/int-c1/answer"
                assert (await http.post(url, json={"answer": "yes"})).status_code == 200
            answered = time.monotonic()
            with anyio.fail_after(1.0):
                while json.loads(await ws.recv())["type"] != "interrupt.resolved":
                    pass
            return time.monotonic() - answered

    assert anyio.run(watch_then_answer) < 1.0


def test_the_token_lives_beside_the_store_for_postgresql(servers: tuple[Server, Server]) -> None:
    one, _ = servers
    token_file = Path(one.cwd) / ".pi-recipes" / "web-token"
    assert token_file.read_text().strip() == one.token
    assert token_file.stat().st_mode & 0o777 == 0o600
