"""Racing writers on one PostgreSQL database: real processes, real threads, separate stores.

Each writer opens its own store, reports ready, waits on a start signal, then writes once;
exactly one compare-and-set must win and the stored state must be the winner's. Also: a wait in
this process woken by another process's answer through NOTIFY, and processes migrating a fresh
database at once. Needs ``PI_RECIPES_TEST_POSTGRES`` (see ``test_postgres.py``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import anyio
import pytest

from interactions import ConflictError
from interactions.store import InteractionAnswer, RunStatus
from interactions.store.postgres import PostgresStore
from interactions.testing.store_conformance import (
    answer,
    new_decision,
    new_interaction,
    new_run,
    new_vote,
)

DSN = os.environ.get("PI_RECIPES_TEST_POSTGRES", "")
NO_SERVER = "set PI_RECIPES_TEST_POSTGRES to run the PostgreSQL store tests"
WRITERS = 8

CHILD = """
import json, sys
import anyio
from interactions import ConflictError
from interactions.store import InteractionAnswer
from interactions.store.postgres import PostgresStore
from interactions.testing.store_conformance import new_run

dsn, schema, run_id, action, me = sys.argv[1:5] + [int(sys.argv[5])]

async def main():
    if action == "migrate":
        print("ready", flush=True)
        sys.stdin.readline()
        async with PostgresStore(dsn, schema=schema) as store:
            await store.create_run(new_run(id=f"run-{me}"))
        print(json.dumps("opened"), flush=True)
        return
    async with PostgresStore(dsn, schema=schema) as store:
        run = await store.get_run(run_id)
        print("ready", flush=True)
        sys.stdin.readline()
        try:
            if action == "answer":
                reply = InteractionAnswer(status="resolved", payload={"by": me}, via=f"p{me}")
                _, won = await store.answer_interaction(run_id, "int-a", reply)
            else:
                await store.update_run(run_id, expected_version=run.version, checkpoint={"by": me})
                won = True
            print(json.dumps("won" if won else "replay"), flush=True)
        except ConflictError as exc:
            print(json.dumps("conflict:" + str(exc.reason)), flush=True)

anyio.run(main)
"""


def schema_version() -> int:
    """The schema version this code writes (imported late: psycopg may be missing)."""
    from interactions.store._postgres_schema import SCHEMA_VERSION

    return SCHEMA_VERSION


async def _setup(schema: str) -> str:
    async with PostgresStore(DSN, schema=schema) as store:
        run = await store.create_run(new_run())
        await store.update_run(
            run.id,
            expected_version=1,
            status=RunStatus.PAUSED_WAITING_HUMAN,
            new_interactions=[new_interaction("int-a")],
        )
        return run.id


def _spawn(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    script = tmp_path / "child.py"
    if not script.exists():
        script.write_text(CHILD)
    argv = [sys.executable, str(script), DSN, *args]
    return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def _race(children: list[subprocess.Popen[str]]) -> dict[int, str]:
    """Wait until every child is ready, start them together, return what each printed."""
    try:
        for child in children:
            assert child.stdout is not None and child.stdout.readline() == "ready\n"
        for child in children:
            assert child.stdin is not None
            child.stdin.write("go\n")
            child.stdin.flush()
        outcomes = {}
        for me, child in enumerate(children):
            out, _ = child.communicate(timeout=60)
            assert child.returncode == 0
            outcomes[me] = json.loads(out)
        return outcomes
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
            child.__exit__(None, None, None)  # close the pipes, reap the process


async def _outcome_check(schema: str, run_id: str, action: str, outcomes: dict[int, str]) -> None:
    winners = [me for me, outcome in outcomes.items() if outcome == "won"]
    assert len(outcomes) == WRITERS and len(winners) == 1, outcomes
    losing = "conflict:already_answered" if action == "answer" else "conflict:version"
    assert sorted(outcomes.values()) == [losing] * (WRITERS - 1) + ["won"]
    async with PostgresStore(DSN, schema=schema) as store:
        run = await store.get_run(run_id)
        events = await store.list_events(run_id)
        assert [e.seq for e in events] == list(range(1, len(events) + 1))
        if action == "answer":
            stored = (await store.get_interaction(run_id, "int-a")).answer
            assert stored == answer({"by": winners[0]}, via=f"p{winners[0]}")
            assert [e.data["via"] for e in events if e.type == "interaction_answered"] == [
                f"p{winners[0]}"
            ]
        else:
            assert (run.version, run.checkpoint) == (3, {"by": winners[0]})


@pytest.mark.parametrize("action", ["answer", "update"])
def test_racing_processes_exactly_one_wins(tmp_path: Path, schema: str, action: str) -> None:
    run_id = anyio.run(_setup, schema)
    children = [_spawn(tmp_path, schema, run_id, action, str(me)) for me in range(WRITERS)]
    outcomes = _race(children)
    anyio.run(_outcome_check, schema, run_id, action, outcomes)


@pytest.mark.parametrize("action", ["answer", "update"])
def test_racing_threads_exactly_one_wins(schema: str, action: str) -> None:
    run_id = anyio.run(_setup, schema)
    start = threading.Barrier(WRITERS, timeout=30)
    outcomes: dict[int, str] = {}

    async def write(me: int) -> None:
        async with PostgresStore(DSN, schema=schema) as store:
            run = await store.get_run(run_id)
            await anyio.to_thread.run_sync(start.wait)
            try:
                if action == "answer":
                    reply = InteractionAnswer(status="resolved", payload={"by": me}, via=f"p{me}")
                    _, won = await store.answer_interaction(run_id, "int-a", reply)
                else:
                    await store.update_run(
                        run_id, expected_version=run.version, checkpoint={"by": me}
                    )
                    won = True
                outcomes[me] = "won" if won else "replay"
            except ConflictError as exc:
                outcomes[me] = f"conflict:{exc.reason}"

    threads = [threading.Thread(target=anyio.run, args=(write, me)) for me in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
        assert not thread.is_alive()
    anyio.run(_outcome_check, schema, run_id, action, outcomes)


def test_processes_migrating_a_fresh_database_at_once(tmp_path: Path, schema: str) -> None:
    children = [_spawn(tmp_path, schema, "-", "migrate", str(me)) for me in range(WRITERS)]
    assert list(_race(children).values()) == ["opened"] * WRITERS

    async def check() -> None:
        async with PostgresStore(DSN, schema=schema) as store:
            runs = await store.list_runs()
        assert sorted(r.id for r in runs) == sorted(f"run-{me}" for me in range(WRITERS))

    anyio.run(check)
    import psycopg

    with psycopg.connect(DSN) as conn:
        versions = conn.execute(f'SELECT version FROM "{schema}".store_migrations').fetchall()
    assert sorted(v for (v,) in versions) == list(range(1, schema_version() + 1))


@pytest.mark.anyio
async def test_another_process_answer_wakes_a_waiter_through_notify(
    tmp_path: Path, schema: str
) -> None:
    run_id = await _setup(schema)
    # The fallback poll is far beyond the bound: only the notification can wake the waiter.
    async with PostgresStore(DSN, schema=schema, poll_interval=30) as waiter:
        cursor = (await waiter.list_events(run_id))[-1].seq
        # Start the listener now: the real wait's first look is then one short query, done
        # long before the child, told to go only once the waiter is parked, can commit.
        assert await waiter.wait_for_events(run_id, after_seq=cursor, timeout=0) == []
        with _spawn(tmp_path, schema, run_id, "answer", "7") as child:
            try:
                assert child.stdout is not None and child.stdin is not None
                assert await anyio.to_thread.run_sync(child.stdout.readline) == "ready\n"
                seen = []

                async def wait() -> None:
                    events = await waiter.wait_for_events(run_id, after_seq=cursor, timeout=3600)
                    seen.extend(events)

                with anyio.fail_after(10):
                    async with anyio.create_task_group() as tg:
                        tg.start_soon(wait)
                        await anyio.wait_all_tasks_blocked()
                        child.stdin.write("go\n")
                        child.stdin.flush()
                out, _ = await anyio.to_thread.run_sync(child.communicate, None, 30)
                assert json.loads(out) == "won"
            finally:
                if child.poll() is None:
                    child.kill()
    assert [(e.type, e.data["via"]) for e in seen] == [("interaction_answered", "p7")]


def test_a_run_is_read_with_its_interactions_as_one_snapshot(schema: str) -> None:
    """Another store (a thread and event loop of its own) inserts interactions, one per update
    that also counts them in the checkpoint; every read of the run with its interactions finds
    as many as the run counts. Read apart (two statements), a commit falls between them every
    few dozen reads."""
    writes = 150

    async def setup() -> str:
        async with PostgresStore(DSN, schema=schema) as store:
            return (await store.create_run(new_run(checkpoint={"asked": 0}))).id

    run_id = anyio.run(setup)
    done = threading.Event()

    async def write() -> None:
        try:
            async with PostgresStore(DSN, schema=schema) as store:
                for n in range(1, writes + 1):
                    await store.update_run(
                        run_id, expected_version=n, checkpoint={"asked": n},
                        new_interactions=[new_interaction(f"int-{n}")], durable=False,
                    )  # fmt: skip
        finally:
            done.set()

    async def read() -> list[tuple[int, int]]:
        seen = []
        async with PostgresStore(DSN, schema=schema) as store:
            while not done.is_set():
                run, interactions = await store.get_run_with_interactions(run_id)
                seen.append((run.checkpoint["asked"], len(interactions)))
        return seen

    writer = threading.Thread(target=anyio.run, args=(write,))
    writer.start()
    try:
        seen = anyio.run(read)
    finally:
        writer.join(timeout=60)
    assert not writer.is_alive()
    assert any(0 < asked < writes for asked, _ in seen)  # reads fell between writes
    assert [count for _, count in seen] == [asked for asked, _ in seen]


def test_racing_stores_remember_one_decision_and_revoke_it_once(schema: str) -> None:
    """Store instances of their own (threads, event loops, connections) remember the same
    approval's decision at once, then revoke it at once: one row, one event each time."""
    run_id = anyio.run(_setup, schema)
    start = threading.Barrier(WRITERS, timeout=30)
    remembered: dict[int, tuple[str, bool]] = {}
    revoked: dict[int, bool] = {}

    async def write(me: int) -> None:
        async with PostgresStore(DSN, schema=schema) as store:
            run = await store.get_run(run_id)
            await anyio.to_thread.run_sync(start.wait)
            record, stored = await store.remember_decision(
                new_decision(run, "int-a", tool=f"tool-{me}")
            )
            remembered[me] = (record.tool, stored)
            await anyio.to_thread.run_sync(start.wait)
            revoked[me] = (await store.revoke_decision(record.id, revoked_by=f"p{me}"))[1]

    threads = [threading.Thread(target=anyio.run, args=(write, me)) for me in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
        assert not thread.is_alive()
    [winner] = [me for me, (_, stored) in remembered.items() if stored]
    assert {tool for tool, _ in remembered.values()} == {f"tool-{winner}"}
    assert sorted(revoked.values()) == [False] * (WRITERS - 1) + [True]
    [revoker] = [me for me, done in revoked.items() if done]

    async def check() -> None:
        async with PostgresStore(DSN, schema=schema) as store:
            [decision] = await store.list_decisions(include_revoked=True)
            assert (decision.tool, decision.revoked_by) == (f"tool-{winner}", f"p{revoker}")
            events = await store.list_events(run_id)
            assert [e.seq for e in events] == list(range(1, len(events) + 1))
            kinds = [e.type for e in events if e.type.startswith("decision_")]
            assert kinds == ["decision_remembered", "decision_revoked"]

    anyio.run(check)


def test_racing_stores_count_each_person_s_vote_once_and_settle_once(schema: str) -> None:
    """64 votes by 8 people at once, from 8 store instances of their own (threads, event
    loops, connections): 8 votes stored, and the approval settled once, naming all 8."""
    run_id = anyio.run(_setup, schema)
    start = threading.Barrier(WRITERS, timeout=30)
    counted: dict[int, int] = {}

    async def vote(me: int) -> None:
        async with PostgresStore(DSN, schema=schema) as store:
            await store.get_run(run_id)  # connected before the start
            await anyio.to_thread.run_sync(start.wait)
            mine = 0

            async def one(voter: str) -> None:
                nonlocal mine
                _, outcome = await store.cast_vote(
                    run_id, "int-a", new_vote(voter, via=f"p{me}"), required=WRITERS
                )
                mine += outcome.counted

            async with anyio.create_task_group() as tg:
                for i in range(WRITERS):  # each instance votes for everyone: 64 votes in all
                    tg.start_soon(one, f"person-{(i + me) % WRITERS}")
            counted[me] = mine

    threads = [threading.Thread(target=anyio.run, args=(vote, me)) for me in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
        assert not thread.is_alive()
    assert sum(counted.values()) == WRITERS

    async def check() -> None:
        async with PostgresStore(DSN, schema=schema) as store:
            cast = await store.list_votes(run_id, "int-a")
            assert sorted(v.voter for v in cast) == [f"person-{i}" for i in range(WRITERS)]
            record = await store.get_interaction(run_id, "int-a")
            assert record.answer is not None
            assert record.answer.answered_by == ", ".join(v.voter for v in cast)
            kinds = [e.type for e in await store.list_events(run_id)]
            assert kinds.count("interaction_voted") == WRITERS
            assert kinds.count("interaction_answered") == 1

    anyio.run(check)
