"""One run at a time on a thread holds across servers on one store: two ``serve`` processes
racing starts on one thread (REST and AG-UI) create exactly one run, on PostgreSQL and on a
SQLite file alike; the others are refused with 409. In-process, two servers' thread checks
over two store instances, both past their check, leave the choice to the store."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import anyio
import pytest

from hosts.web._threads import Threads
from interactions import ConflictError
from interactions.store import NewRun, Store, open_store
from tests.hosts.web.server import Server, serving

POSTGRES = os.environ.get("PI_RECIPES_TEST_POSTGRES")
RACERS = 4  # per thread, server and endpoint
THREADS = 5  # raced on at once
ROUNDS = 3


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield str(tmp_path / "shared.db")
        return
    if not POSTGRES:
        pytest.skip("set PI_RECIPES_TEST_POSTGRES to run the PostgreSQL tests")
    import psycopg

    schema = f"pi_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(POSTGRES, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
        try:
            sep = "&" if "?" in POSTGRES else "?"
            yield f"{POSTGRES}{sep}options={quote(f'-csearch_path={schema}')}"
        finally:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


@pytest.fixture
def servers(tmp_path: Path, store: str) -> Iterator[tuple[Server, Server]]:
    with serving(tmp_path, store=store) as one, serving(tmp_path, store=store) as two:
        yield one, two


def _agui_body(thread: str) -> dict[str, object]:
    return {
        "threadId": thread, "runId": f"agui-{uuid.uuid4().hex[:8]}", "state": {},
        "messages": [{"id": "m1", "role": "user", "content": "text: Name?"}],
        "tools": [], "context": [], "forwardedProps": {},
    }  # fmt: skip


def _race(servers: tuple[Server, Server], threads: list[str]) -> dict[str, list[int]]:
    """Start runs on each thread through both servers and both endpoints at once: the codes
    the starts got, by thread."""
    codes: dict[str, list[int]] = {thread: [] for thread in threads}

    async def start(server: Server, thread: str, agui: bool, go: anyio.Event) -> None:
        async with server.async_client() as http:
            await go.wait()
            if agui:
                async with http.stream("POST", "/agui", json=_agui_body(thread)) as reply:
                    codes[thread].append(reply.status_code)
                    await reply.aread()
            else:
                reply = await http.post("/api/runs", json={"prompt": "text: Name?",
                                                           "thread_id": thread})  # fmt: skip
                codes[thread].append(reply.status_code)

    async def main() -> None:
        go = anyio.Event()
        with anyio.fail_after(60):
            async with anyio.create_task_group() as tasks:
                for _ in range(RACERS):
                    for thread in threads:
                        for server in servers:
                            for agui in (False, True):
                                tasks.start_soon(start, server, thread, agui, go)
                await anyio.sleep(0.2)  # every client connected and waiting: then all at once
                go.set()

    anyio.run(main)
    return codes


def test_racing_starts_on_one_thread_through_two_servers_make_one_run(
    servers: tuple[Server, Server],
) -> None:
    """Each server checked the thread under its own lock only: starts that reached both
    servers at once each found the thread free, and each started a run on it."""
    raced: dict[str, list[int]] = {}
    for _ in range(ROUNDS):
        raced |= _race(servers, [f"thread-{uuid.uuid4().hex[:8]}" for _ in range(THREADS)])
    with servers[0].client() as http:
        for thread, codes in raced.items():
            runs = http.get("/api/runs", params={"thread_id": thread}).json()["runs"]
            assert len(runs) == 1, [(r["id"], r["status"]) for r in runs]
            assert len(codes) == 4 * RACERS
            assert codes.count(200) + codes.count(202) == 1, codes  # AG-UI's, or REST's start
            assert codes.count(409) == len(codes) - 1, codes


@pytest.mark.anyio
async def test_two_checks_that_both_passed_leave_one_run_to_the_store(store: str) -> None:
    """Each server's check found the thread free (its lock is its own): both runs were made."""
    thread, checked = f"thread-{uuid.uuid4().hex[:8]}", anyio.Event()
    outcomes: list[str] = []
    async with await open_store(store) as first, await open_store(store) as second:

        async def start(threads: Threads, on: Store) -> None:
            try:
                async with threads.start(thread) as run_id:
                    outcomes.append("checked")
                    if outcomes.count("checked") == 2:
                        checked.set()
                    await checked.wait()  # both past the check: now both create the run
                    await on.create_run(NewRun(id=run_id, thread_id=thread, ref="r"))
                outcomes.append("created")
            except ConflictError as exc:
                outcomes.append(f"refused: {exc.reason}")

        with anyio.fail_after(20):
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(start, Threads(first), first)
                tasks.start_soon(start, Threads(second), second)
        assert sorted(outcomes) == ["checked", "checked", "created", "refused: running"]
        assert len(await first.list_runs(thread_id=thread)) == 1
