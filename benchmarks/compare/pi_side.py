"""pi-recipes' side: ``benchmarks/scenario.py`` through the public API, on SQLite or PostgreSQL.

A cycle is ``Runner.start`` (the scripted model calls ``deploy``, which asks
``ask_user_approval``: the run pauses and is stored) then ``Runner.answer(run_id,
"int-call_1", {"approved": True}, resume=True)`` (the answer is stored, the run resumes and
finishes). Each store lives in a file of the side's folder, or, given a PostgreSQL URL, in a
fresh schema (dropped when the side closes), or, given ``memory``, in the in-memory store (the
cycle outside any database: ``pg_floor.py``'s floor starts from it).
``benchmarks/bench_runs.py`` drives this module too.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pg
from anyio.streams.buffered import BufferedByteReceiveStream
from measure import reset_wal, shared_clock, sqlite_bytes, wal_commits
from worker import BulkRound, side_main

from interactions.store import MemoryStore, Store, open_postgres_store, open_sqlite_store
from recipes.runs import AnswerResult, Runner, RunResult

SCENARIO = str(Path(__file__).resolve().parent.parent / "scenario.py")
INTERACTION = "int-call_1"
APPROVE = {"approved": True}
ANSWER_TIMEOUT = 30.0


def check_paused(result: RunResult) -> str:
    """The run id of a run that really paused on the scenario's approval."""
    if result.status != "paused_waiting_human" or [i.id for i in result.interrupts] != [
        INTERACTION
    ]:
        raise AssertionError(f"the run did not pause on {INTERACTION}: {result!r}")
    return result.run_id


def check_finished(result: AnswerResult | RunResult) -> None:
    """Raise unless the run really finished after the approval."""
    run = result.run if isinstance(result, AnswerResult) else result
    if run is None or run.status != "finished" or run.text != "Deployed.":
        raise AssertionError(f"the run did not finish: {result!r}")


MEMORY = "memory"
"""The store "URL" of the in-memory store."""


async def open_store(store: str, schema: str | None = None) -> Store:
    """A SQLite file path, a PostgreSQL URL (with the schema to use), or :data:`MEMORY`."""
    if store == MEMORY:
        return MemoryStore()
    if store.startswith(("postgres://", "postgresql://")):
        return await open_postgres_store(store, schema=schema)
    return await open_sqlite_store(store)


class Places:
    """Where the side's stores live: files in ``folder``, fresh schemas at ``url``, or memory."""

    def __init__(self, folder: Path, url: str | None) -> None:
        self.folder = folder
        self.url = url
        self._made: list[str] = []

    def new(self, tag: str) -> dict[str, Any]:
        """A new, empty place: ``{"store": path or URL, "schema": name or None}``."""
        if self.url == MEMORY:
            return {"store": MEMORY, "schema": None}
        if self.url is None:
            path = self.folder / f"pi-{tag}-{len(self._made)}.db"
            self._made.append(str(path))
            return {"store": str(path), "schema": None}
        schema = pg.new_schema_name()
        self._made.append(schema)
        return {"store": self.url, "schema": schema}

    def bytes(self, place: dict[str, Any]) -> int:
        if self.url == MEMORY:
            raise AssertionError("the in-memory store has no bytes on disk")
        if self.url is None:
            return sqlite_bytes(Path(place["store"]))
        return pg.schema_bytes(self.url, place["schema"])

    def drop_all(self) -> None:
        if self.url is not None and self.url != MEMORY:
            for schema in self._made:
                pg.drop_schema(self.url, schema)


class PiSide:
    """The operations the orchestrator calls (see ``worker.py``); times are in seconds."""

    def __init__(self, folder: Path, url: str | None = None) -> None:
        self.places = Places(folder, url)
        self._cycles: tuple[Store, Runner, dict[str, Any]] | None = None
        self._bulk: BulkRound[Runner] | None = None

    async def _cycle_runner(self) -> tuple[Store, Runner, dict[str, Any]]:
        if self._cycles is None:
            place = self.places.new("cycles")
            store = await open_store(place["store"], place["schema"])
            self._cycles = (store, Runner(store, env={}), place)
        return self._cycles

    async def cycle(self) -> float:
        """One in-process durable cycle on the long-open store: start, pause, answer, finish."""
        _, runner, _ = await self._cycle_runner()
        started = time.perf_counter()
        run_id = check_paused(await runner.start(SCENARIO, "Deploy"))
        check_finished(await runner.answer(run_id, INTERACTION, APPROVE, resume=True))
        return time.perf_counter() - started

    async def cycles(self, n: int) -> list[float]:
        return [await self.cycle() for _ in range(n)]

    async def pause_for_child(self) -> dict[str, Any]:
        """A paused run in a store of its own, for a fresh process to answer and resume."""
        place = self.places.new("fresh")
        async with await open_store(place["store"], place["schema"]) as store:
            run_id = check_paused(await Runner(store, env={}).start(SCENARIO, "Deploy"))
        return {**place, "run_id": run_id}

    async def bulk_create(self, n: int) -> float:
        """Start ``n`` more runs that pause, in this round's store (a new one each round)."""
        if self._bulk is None:
            place = self.places.new("bulk")
            self._bulk = BulkRound(place, await self._open_runner(place))
        runner = self._bulk.handle
        assert runner is not None, "bulk_create after bulk_size"
        started = time.perf_counter()
        self._bulk.ids += [check_paused(await runner.start(SCENARIO, "Deploy")) for _ in range(n)]
        return time.perf_counter() - started

    async def bulk_size(self) -> int:
        """Close this round's store; its bytes on disk (SQLite files, or PostgreSQL tables)."""
        assert self._bulk is not None and self._bulk.handle is not None
        await self._bulk.handle.store.close()
        self._bulk.handle = None
        return await anyio.to_thread.run_sync(self.places.bytes, self._bulk.place)

    async def bulk_resume(self, n: int) -> float:
        """Answer and resume the next ``n`` paused runs of this round (the store reopened)."""
        assert self._bulk is not None
        if self._bulk.handle is None:
            self._bulk.handle = await self._open_runner(self._bulk.place)
        runner, run_ids = self._bulk.handle, self._bulk.next_ids(n)
        started = time.perf_counter()
        for run_id in run_ids:
            check_finished(await runner.answer(run_id, INTERACTION, APPROVE, resume=True))
        return time.perf_counter() - started

    async def bulk_end(self) -> None:
        assert self._bulk is not None and self._bulk.handle is not None
        self._bulk.check_done()
        await self._bulk.handle.store.close()
        self._bulk = None

    async def _open_runner(self, place: dict[str, Any]) -> Runner:
        return Runner(await open_store(place["store"], place["schema"]), env={})

    async def commits(self, n: int) -> list[int]:
        """SQLite commits (WAL commit frames) of each of ``n`` cycles (see ``measure.py``)."""
        _, _, place = await self._cycle_runner()
        db = Path(place["store"])
        counts = []
        for _ in range(n):
            await anyio.to_thread.run_sync(reset_wal, db)
            await self.cycle()
            counts.append(wal_commits(db))
        return counts

    async def xacts(self, n: int) -> float:
        """PostgreSQL transactions per cycle: ``xact_commit`` of a private database over ``n``
        cycles, less that of opening and closing the store alone, over ``n``."""
        assert self.places.url is not None, "a PostgreSQL side"
        admin = self.places.url
        with pg.private_database(admin) as (url, name):
            before = pg.xact_commits(admin, name)
            async with await open_postgres_store(url) as store:
                runner = Runner(store, env={})
                for _ in range(n):
                    run_id = check_paused(await runner.start(SCENARIO, "Deploy"))
                    check_finished(await runner.answer(run_id, INTERACTION, APPROVE, resume=True))
            with_cycles = pg.xact_commits(admin, name)
            async with await open_postgres_store(url):
                pass
            alone = pg.xact_commits(admin, name)
        return ((with_cycles - before) - (alone - with_cycles)) / n

    async def wake(self, n: int) -> list[float]:
        """Answer → wake of another process waiting on the run, ``n`` times (see ``_waiter``).

        Each answer is given at a random moment 20-220 ms after the waiter says it is about to
        wait, so answers land at every phase of a polling waiter's cycle, as real ones do.
        """
        place = self.places.new("wake")
        argv = [sys.executable, __file__, "wait", "--store", place["store"]]
        if place["schema"]:
            argv += ["--schema", place["schema"]]
        samples = []
        async with await open_store(place["store"], place["schema"]) as store:
            runner = Runner(store, env={})
            async with await anyio.open_process(argv, stderr=None) as waiter:
                assert waiter.stdin is not None and waiter.stdout is not None
                lines = BufferedByteReceiveStream(waiter.stdout)
                for _ in range(n):
                    run_id = check_paused(await runner.start(SCENARIO, "Deploy"))
                    seq = (await store.list_events(run_id))[-1].seq
                    await waiter.stdin.send(f"{run_id} {seq}\n".encode())
                    with anyio.fail_after(ANSWER_TIMEOUT):
                        said = await lines.receive_until(b"\n", 64)
                    if said != b"ready":
                        raise AssertionError(f"the waiting process said {said!r}")
                    await anyio.sleep(random.uniform(0.02, 0.22))
                    answered = shared_clock()
                    await runner.answer(run_id, INTERACTION, APPROVE)
                    with anyio.fail_after(ANSWER_TIMEOUT):
                        woke = float(await lines.receive_until(b"\n", 64))
                    samples.append(woke - answered)
                    check_finished(await runner.resume_answered(run_id))
                await waiter.stdin.aclose()
                with anyio.fail_after(ANSWER_TIMEOUT):
                    if await waiter.wait():
                        raise AssertionError(f"the waiting process exited {waiter.returncode}")
        return samples

    async def close(self) -> None:
        if self._cycles is not None:
            await self._cycles[0].close()
        await anyio.to_thread.run_sync(self.places.drop_all)


async def _waiter(store: str, schema: str | None) -> None:
    """The waiting process: for each ``RUN_ID SEQ`` line, say ``ready``, wait for the run's
    next events, and print the shared clock when they arrived (an answer must be among them)."""
    async with await open_store(store, schema) as opened:
        while line := await anyio.to_thread.run_sync(sys.stdin.readline):
            run_id, seq = line.split()
            print("ready", flush=True)
            events = await opened.wait_for_events(
                run_id, after_seq=int(seq), timeout=ANSWER_TIMEOUT
            )
            woke = shared_clock()
            if "interaction_answered" not in [event.type for event in events]:
                raise AssertionError(f"woke without the answer: {events!r}")
            print(repr(woke), flush=True)


def resume_in_fresh_process(store: str, run_id: str, schema: str | None) -> None:
    """Metric 2's process: open the store, answer the paused run, resume it to the end."""

    async def resume() -> None:
        async with await open_store(store, schema) as opened:
            runner = Runner(opened, env={})
            check_finished(await runner.answer(run_id, INTERACTION, APPROVE, resume=True))

    anyio.run(resume)


def main() -> None:
    if sys.argv[1:2] == ["wait"]:
        store = sys.argv[sys.argv.index("--store") + 1]
        schema = sys.argv[sys.argv.index("--schema") + 1] if "--schema" in sys.argv else None
        anyio.run(_waiter, store, schema)
        return
    side_main(lambda args: PiSide(args.dir, args.store), resume_in_fresh_process)


if __name__ == "__main__":
    main()
