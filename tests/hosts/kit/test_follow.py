"""Following the store's feed: every event after the start, in commit order, each handed over
once; a store that fails is followed again from the last event handled, after a delay that
doubles up to its bound; a handler's failure skips its event, a store away hands it again."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import anyio
import pytest

from hosts._kit import StoreFeed
from interactions.errors import StoreUnavailableError
from interactions.store import EventRecord, MemoryStore, Store, open_sqlite_store
from interactions.testing.store_conformance import new_run

pytestmark = pytest.mark.anyio

BOUND = 10.0


class _Failures(logging.Handler):
    """The delays the follower logs when its feed fails; ``reached`` is set at ``wanted``."""

    def __init__(self, wanted: int) -> None:
        super().__init__()
        self.wanted = wanted
        self.delays: list[float] = []
        self.reached = anyio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if message.startswith("the store feed failed"):
            self.delays.append(float(message.rsplit(" in ", 1)[1].removesuffix(" s")))
            if len(self.delays) >= self.wanted:
                self.reached.set()


async def _everything_after(store: Store, cursor: int) -> list[int]:
    """The cursors of every event of ``store`` after ``cursor``, in commit order."""
    events = [
        e for run in await store.list_runs(limit=1000) for e in await store.list_events(run.id)
    ]
    return sorted(e.cursor for e in events if e.cursor > cursor)


def _rename(path: Path, table: str, to: str) -> None:
    """Rename a table of the SQLite file from another connection: the store's reads of it
    fail (a real ``StoreUnavailableError``) until it is renamed back."""
    other = sqlite3.connect(path)
    try:
        other.execute(f"ALTER TABLE {table} RENAME TO {to}")
        other.commit()
    finally:
        other.close()


async def test_it_follows_what_comes_next_in_order() -> None:
    seen: list[EventRecord] = []

    async def handle(event: EventRecord) -> None:
        seen.append(event)

    async with MemoryStore() as store:
        before = await store.create_run(new_run())
        feed = StoreFeed(store, handle)
        async with anyio.create_task_group() as tg:
            await tg.start(feed.run)
            start = feed.cursor
            assert start == await store.latest_cursor()
            after = await store.create_run(new_run())
            await store.append_events(before.id, [("note", {"n": 1})])
            assert await feed.reached(await store.latest_cursor(), within=BOUND)
            feed.stop()
        assert [(e.run_id, e.type) for e in seen] == [(after.id, "run_created"),
                                                     (before.id, "note")]  # fmt: skip
        assert [e.cursor for e in seen] == await _everything_after(store, start)
        assert feed.cursor == seen[-1].cursor


async def test_it_follows_from_a_cursor_given_what_is_stored_after_it() -> None:
    seen: list[int] = []

    async def handle(event: EventRecord) -> None:
        seen.append(event.cursor)

    async with MemoryStore() as store:
        run = await store.create_run(new_run())
        [mark] = await store.append_events(run.id, [("note", {})])
        await store.append_events(run.id, [("note", {}), ("note", {})])
        feed = StoreFeed(store, handle)
        async with anyio.create_task_group() as tg:
            await tg.start(lambda task_status: feed.run(after=mark.cursor, task_status=task_status))
            assert await feed.reached(await store.latest_cursor(), within=BOUND)
            feed.stop()
        assert seen == await _everything_after(store, mark.cursor) != []


async def test_a_failing_store_is_followed_again_from_the_cursor(tmp_path: Path) -> None:
    """What was written while the feed was down is handed over once it is back: nothing
    missed, nothing twice; the delays double from the first up to the bound."""
    path = tmp_path / "state.db"
    seen: list[int] = []
    holding, release = anyio.Event(), anyio.Event()

    async def handle(event: EventRecord) -> None:
        if event.data.get("n") == 1:
            holding.set()
            await release.wait()
        seen.append(event.cursor)

    failures = _Failures(wanted=4)
    logging.getLogger("hosts").addHandler(failures)
    try:
        async with await open_sqlite_store(path) as store, anyio.create_task_group() as tg:
            run = await store.create_run(new_run())
            feed = StoreFeed(store, handle, retry=(0.01, 0.04))
            await tg.start(feed.run)
            start = feed.cursor
            await store.append_events(run.id, [("note", {"n": 1})])
            with anyio.fail_after(BOUND):
                await holding.wait()  # the feed read the first note alone
            other = await store.create_run(new_run())
            await store.append_events(run.id, [("note", {"n": 2})])
            await store.append_events(other.id, [("note", {"n": 3})])
            _rename(path, "events", "events_away")  # its next read fails, and again
            release.set()
            with anyio.fail_after(BOUND):
                await failures.reached.wait()
            _rename(path, "events_away", "events")
            assert await feed.reached(await store.latest_cursor(), within=BOUND)
            feed.stop()
            assert seen == await _everything_after(store, start)
            assert len(seen) == 4  # the two notes, the other run's creation, its note
    finally:
        logging.getLogger("hosts").removeHandler(failures)
    assert failures.delays[:4] == [0.01, 0.02, 0.04, 0.04]


async def test_a_handler_that_finds_the_store_away_gets_the_event_again() -> None:
    handed: list[int] = []

    async def handle(event: EventRecord) -> None:
        handed.append(event.data["n"])
        if handed.count(2) == 1 and event.data["n"] == 2:
            raise StoreUnavailableError("the database restarts", reason="unreachable")

    async with MemoryStore() as store:
        run = await store.create_run(new_run())
        feed = StoreFeed(store, handle, retry=(0.01, 0.01))
        async with anyio.create_task_group() as tg:
            await tg.start(feed.run)
            await store.append_events(run.id, [("note", {"n": n}) for n in (1, 2, 3)])
            assert await feed.reached(await store.latest_cursor(), within=BOUND)
            feed.stop()
    assert handed == [1, 2, 2, 3]


async def test_a_handler_that_fails_otherwise_skips_its_event_and_the_feed_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    handed: list[int] = []

    async def handle(event: EventRecord) -> None:
        if event.data["n"] == 2:
            raise ValueError("this host cannot show it")
        handed.append(event.data["n"])

    async with MemoryStore() as store:
        run = await store.create_run(new_run())
        feed = StoreFeed(store, handle)
        async with anyio.create_task_group() as tg:
            await tg.start(feed.run)
            await store.append_events(run.id, [("note", {"n": n}) for n in (1, 2, 3)])
            assert await feed.reached(await store.latest_cursor(), within=BOUND)
            feed.stop()
    assert handed == [1, 3]
    [skipped] = [r for r in caplog.records if r.getMessage().startswith("skipped store event")]
    assert skipped.getMessage() == f"skipped store event note of {run.id}"
    # its traceback is logged (as the record's exc_info, or as its exc_text once a host's
    # entry point has installed the log scrubbing in this process: scrub_logs)
    assert "ValueError: this host cannot show it" in logging.Formatter().format(skipped)


async def test_stop_ends_the_following_even_before_it_starts() -> None:
    async def handle(event: EventRecord) -> None:
        raise AssertionError("nothing was written")

    async with MemoryStore() as store:
        feed = StoreFeed(store, handle)
        with anyio.fail_after(BOUND):
            async with anyio.create_task_group() as tg:
                await tg.start(feed.run)
                feed.stop()  # the group ends: run returned
        early = StoreFeed(store, handle)
        early.stop()
        with anyio.fail_after(BOUND):
            await early.run()


async def test_waiting_for_a_cursor_is_bounded() -> None:
    async def handle(event: EventRecord) -> None:
        return None

    async with MemoryStore() as store:
        feed = StoreFeed(store, handle)
        assert await feed.reached(0, within=0)
        assert not await feed.reached(1, within=0.05)
