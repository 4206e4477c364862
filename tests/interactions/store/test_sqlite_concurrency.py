"""Racing writers on one SQLite file: real processes, real threads, separate store instances.

Each writer opens its own store, reports ready, waits on a start signal, then writes once;
exactly one compare-and-set must win and the stored state must be the winner's.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream

from interactions import ConflictError
from interactions.store import InteractionAnswer, RunStatus, SQLiteStore
from interactions.testing.store_conformance import (
    answer,
    new_decision,
    new_interaction,
    new_run,
    new_vote,
)

WRITERS = 8

CHILD = """
import json, sys
import anyio
from interactions import ConflictError
from interactions import ConflictError
from interactions.store import InteractionAnswer, SQLiteStore

path, run_id, action, me = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])

async def main():
    async with SQLiteStore(path) as store:
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


async def _setup(path: Path) -> str:
    async with SQLiteStore(path) as store:
        run = await store.create_run(new_run())
        await store.update_run(
            run.id,
            expected_version=1,
            status=RunStatus.PAUSED_WAITING_HUMAN,
            new_interactions=[new_interaction("int-a")],
        )
        return run.id


async def _outcome_check(path: Path, run_id: str, action: str, outcomes: dict[int, str]) -> None:
    winners = [me for me, outcome in outcomes.items() if outcome == "won"]
    assert len(outcomes) == WRITERS and len(winners) == 1, outcomes
    losing = "conflict:already_answered" if action == "answer" else "conflict:version"
    assert sorted(outcomes.values()) == [losing] * (WRITERS - 1) + ["won"]
    async with SQLiteStore(path) as store:
        run = await store.get_run(run_id)
        events = await store.list_events(run_id)
        if action == "answer":
            stored = (await store.get_interaction(run_id, "int-a")).answer
            assert stored == answer({"by": winners[0]}, via=f"p{winners[0]}")
            assert [e.data["via"] for e in events if e.type == "interaction_answered"] == [
                f"p{winners[0]}"
            ]
        else:
            assert (run.version, run.checkpoint) == (3, {"by": winners[0]})


def _in_threads(writer: Callable[[int], Awaitable[None]]) -> None:
    """Run ``writer(me)`` for each of the writers, each in a thread and event loop of its own;
    wait (bounded) until all are done."""
    threads = [threading.Thread(target=anyio.run, args=(writer, me)) for me in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
        assert not thread.is_alive()


@pytest.mark.parametrize("action", ["answer", "update"])
def test_racing_processes_exactly_one_wins(tmp_path: Path, action: str) -> None:
    path = tmp_path / "state.db"
    run_id = anyio.run(_setup, path)
    script = tmp_path / "writer.py"
    script.write_text(CHILD)
    argv = [sys.executable, str(script), str(path), run_id, action]
    children = [
        subprocess.Popen([*argv, str(me)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        for me in range(WRITERS)
    ]
    try:
        for child in children:  # all opened the file: now let them race
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
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait(timeout=10)
    anyio.run(_outcome_check, path, run_id, action, outcomes)


@pytest.mark.parametrize("action", ["answer", "update"])
def test_racing_threads_exactly_one_wins(tmp_path: Path, action: str) -> None:
    path = tmp_path / "state.db"
    run_id = anyio.run(_setup, path)
    start = threading.Barrier(WRITERS, timeout=30)
    outcomes: dict[int, str] = {}

    async def write(me: int) -> None:
        async with SQLiteStore(path) as store:
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

    _in_threads(write)
    anyio.run(_outcome_check, path, run_id, action, outcomes)


def test_racing_appenders_number_events_without_gaps(tmp_path: Path) -> None:
    """Writers appending to two runs at once, each from its own store: every run's events keep
    seqs 1, 2, 3... and the store's cursors are unique and in the order the runs' events were
    written."""
    path = tmp_path / "state.db"

    async def setup() -> list[str]:
        async with SQLiteStore(path) as store:
            return [(await store.create_run(new_run())).id for _ in range(2)]

    run_ids = anyio.run(setup)
    start = threading.Barrier(WRITERS, timeout=30)
    rounds = 10

    async def append(me: int) -> None:
        async with SQLiteStore(path) as store:
            await anyio.to_thread.run_sync(start.wait)
            for n in range(rounds):
                events = [("note", {"by": me, "n": n, "part": part}) for part in range(2)]
                await store.append_events(run_ids[(me + n) % 2], events)

    _in_threads(append)

    async def check() -> None:
        cursors: list[int] = []
        async with SQLiteStore(path) as store:
            for run_id in run_ids:
                events = await store.list_events(run_id)
                assert [e.seq for e in events] == list(range(1, len(events) + 1))
                assert [e.cursor for e in events] == sorted(e.cursor for e in events)
                cursors += [e.cursor for e in events]
                notes = [e for e in events if e.type == "note"]
                assert len(notes) == WRITERS * rounds  # half the appends, two events each
                for first, second in zip(notes[::2], notes[1::2], strict=True):
                    assert first.data | {"part": 1} == second.data  # an append stays together
                    assert second.cursor == first.cursor + 1
            assert sorted(cursors) == list(range(1, 2 + 2 * WRITERS * rounds + 1))
            assert await store.latest_cursor() == len(cursors)

    anyio.run(check)


@pytest.mark.anyio
async def test_a_waiter_sees_another_store_instances_answer(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    run_id = await _setup(path)
    async with SQLiteStore(path, poll_interval=0.02) as waiter, SQLiteStore(path) as other:
        cursor = (await waiter.list_events(run_id))[-1].seq
        seen = []

        async def wait() -> None:
            seen.extend(await waiter.wait_for_events(run_id, after_seq=cursor, timeout=3600))

        with anyio.fail_after(20):
            async with anyio.create_task_group() as tg:
                tg.start_soon(wait)
                await anyio.wait_all_tasks_blocked()
                await other.answer_interaction(run_id, "int-a", answer(via="slack"))
        assert [e.type for e in seen] == ["interaction_answered"]
        assert seen[0].data["via"] == "slack"


def test_a_run_is_read_with_its_interactions_as_one_version_of_the_file(tmp_path: Path) -> None:
    """Another store (a thread and event loop of its own) inserts interactions, one per update
    that also counts them in the checkpoint; every read of the run with its interactions finds
    as many as the run counts. Read apart (no transaction around the two), a commit falls
    between them every few hundred reads."""
    path = tmp_path / "state.db"
    writes = 300

    async def setup() -> str:
        async with SQLiteStore(path) as store:
            return (await store.create_run(new_run(checkpoint={"asked": 0}))).id

    run_id = anyio.run(setup)
    done = threading.Event()

    async def write(_: int) -> None:
        try:
            async with SQLiteStore(path) as store:
                for n in range(1, writes + 1):
                    await store.update_run(
                        run_id, expected_version=n, checkpoint={"asked": n},
                        new_interactions=[new_interaction(f"int-{n}")], durable=False,
                    )  # fmt: skip
        finally:
            done.set()

    async def read() -> list[tuple[int, int]]:
        seen = []
        async with SQLiteStore(path) as store:
            while not done.is_set():
                run, interactions = await store.get_run_with_interactions(run_id)
                seen.append((run.checkpoint["asked"], len(interactions)))
        return seen

    writer = threading.Thread(target=anyio.run, args=(write, 0))
    writer.start()
    try:
        seen = anyio.run(read)
    finally:
        writer.join(timeout=60)
    assert not writer.is_alive()
    assert any(0 < asked < writes for asked, _ in seen)  # reads fell between writes
    assert [count for _, count in seen] == [asked for asked, _ in seen]


def test_racing_stores_remember_one_decision_and_revoke_it_once(tmp_path: Path) -> None:
    """Store instances of their own (threads, event loops, connections) remember the same
    approval's decision at once, then revoke it at once: one row, one event each time."""
    path = tmp_path / "state.db"
    run_id = anyio.run(_setup, path)
    start = threading.Barrier(WRITERS, timeout=30)
    remembered: dict[int, tuple[str, bool]] = {}
    revoked: dict[int, bool] = {}

    async def write(me: int) -> None:
        async with SQLiteStore(path) as store:
            run = await store.get_run(run_id)
            await anyio.to_thread.run_sync(start.wait)
            record, stored = await store.remember_decision(
                new_decision(run, "int-a", tool=f"tool-{me}")
            )
            remembered[me] = (record.tool, stored)
            await anyio.to_thread.run_sync(start.wait)
            revoked[me] = (await store.revoke_decision(record.id, revoked_by=f"p{me}"))[1]

    _in_threads(write)
    [winner] = [me for me, (_, stored) in remembered.items() if stored]
    assert {tool for tool, _ in remembered.values()} == {f"tool-{winner}"}
    assert sorted(revoked.values()) == [False] * (WRITERS - 1) + [True]
    [revoker] = [me for me, done in revoked.items() if done]

    async def check() -> None:
        async with SQLiteStore(path) as store:
            [decision] = await store.list_decisions(include_revoked=True)
            assert (decision.tool, decision.revoked_by) == (f"tool-{winner}", f"p{revoker}")
            events = await store.list_events(run_id)
            assert [e.seq for e in events] == list(range(1, len(events) + 1))
            kinds = [e.type for e in events if e.type.startswith("decision_")]
            assert kinds == ["decision_remembered", "decision_revoked"]

    anyio.run(check)


def test_racing_stores_count_each_person_s_vote_once_and_settle_once(tmp_path: Path) -> None:
    """64 votes by 8 people at once, from 8 store instances of their own (threads, event
    loops, connections): 8 votes stored, and the approval settled once, naming all 8."""
    path = tmp_path / "state.db"
    run_id = anyio.run(_setup, path)
    start = threading.Barrier(WRITERS, timeout=30)
    counted: dict[int, int] = {}

    async def vote(me: int) -> None:
        async with SQLiteStore(path) as store:
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

    _in_threads(vote)
    assert sum(counted.values()) == WRITERS

    async def check() -> None:
        async with SQLiteStore(path) as store:
            cast = await store.list_votes(run_id, "int-a")
            assert sorted(v.voter for v in cast) == [f"person-{i}" for i in range(WRITERS)]
            record = await store.get_interaction(run_id, "int-a")
            assert record.answer is not None
            assert record.answer.answered_by == ", ".join(v.voter for v in cast)
            kinds = [e.type for e in await store.list_events(run_id)]
            assert kinds.count("interaction_voted") == WRITERS
            assert kinds.count("interaction_answered") == 1

    anyio.run(check)


ANSWERER = """
import sys
import anyio
from interactions.store import InteractionAnswer, SQLiteStore

async def main():
    async with SQLiteStore(sys.argv[1]) as store:
        print("ready", flush=True)
        while run_id := sys.stdin.readline().strip():
            reply = InteractionAnswer(status="resolved", payload={}, via="child")
            await store.answer_interaction(run_id, "int-a", reply)
            print("answered", flush=True)

anyio.run(main)
"""


@pytest.mark.skipif(sys.platform != "linux", reason="the file's write hints are Linux's inotify")
@pytest.mark.anyio
async def test_waiters_of_one_store_wake_for_another_process_s_answers(tmp_path: Path) -> None:
    """Five waiters of one store (each on its own run) and one that gives up first: another
    process answers the runs one by one, and each waiter wakes with its answer. The store never
    polls (both intervals an hour): the wake-ups come from the file's write hints alone, and
    the watch passes from each waiter that leaves to one still waiting."""
    path = tmp_path / "state.db"
    never, *runs = [await _setup(path) for _ in range(6)]
    woke: dict[str, list[str]] = {}
    done = {run_id: anyio.Event() for run_id in runs}
    async with SQLiteStore(path, poll_interval=3600, change_interval=3600) as store:
        seq = (await store.list_events(runs[0]))[-1].seq

        async def wait(run_id: str, timeout: float = 3600) -> None:
            events = await store.wait_for_events(run_id, after_seq=seq, timeout=timeout)
            woke[run_id] = [e.type for e in events]
            done.get(run_id, anyio.Event()).set()

        child = await anyio.open_process([sys.executable, "-c", ANSWERER, str(path)])
        assert child.stdin is not None and child.stdout is not None
        lines = BufferedByteReceiveStream(child.stdout)
        with anyio.fail_after(30):
            assert await lines.receive_until(b"\n", 64) == b"ready"
            async with anyio.create_task_group() as tg:
                tg.start_soon(wait, never, 0.2)  # waits first, gives up first
                for run_id in runs:
                    tg.start_soon(wait, run_id)
                await anyio.wait_all_tasks_blocked()
                await anyio.sleep(0.3)  # the first waiter has given up
                for run_id in runs:
                    await child.stdin.send(f"{run_id}\n".encode())
                    assert await lines.receive_until(b"\n", 64) == b"answered"
                    await done[run_id].wait()
            await child.stdin.aclose()
            await child.wait()
    assert woke == {never: []} | {r: ["interaction_answered"] for r in runs}
