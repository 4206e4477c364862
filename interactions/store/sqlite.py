"""The SQLite :class:`~interactions.store.Store`: the embedded default, one file, many processes.

Concurrency: the file is in WAL mode (readers never block the writer) and every write runs in
``BEGIN IMMEDIATE``, which takes the write lock before reading what it will decide on, so two
racing writers (tasks, threads or processes) serialize and exactly one wins a compare-and-set.
``busy_timeout`` bounds how long a writer waits for the lock.

Threads: each store owns one ``sqlite3`` connection, used only from worker threads
(``anyio.to_thread.run_sync``) and guarded by a ``threading.Lock``. One connection (rather than
one per call) avoids re-opening the file and re-running the PRAGMAs per call, keeps ``close()``
simple, and makes writers of the same store queue on the lock instead of spinning in SQLite's
busy handler; reads are short, and other processes still read concurrently under WAL.
Other processes' writes are seen by :meth:`SQLiteStore.wait_for_events` through a short poll.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Self, TypeVar

import anyio.to_thread

from interactions._errors import ConflictError, UnknownInteractionError, UsageError
from interactions.store import _sqlite_rows as rows
from interactions.store._doorbell import Doorbell, wait_level
from interactions.store._records import (
    EventInput,
    EventRecord,
    InteractionAnswer,
    InteractionRecord,
    NewInteraction,
    NewRun,
    RunRecord,
    check_event_inputs,
    utc_now,
)
from interactions.store._rules import new_run_record, plan_answer, plan_update
from interactions.store._sqlite_schema import connect
from interactions.store._status import RunStatus

__all__ = ["DEFAULT_STORE_PATH", "SQLiteStore", "open_sqlite_store"]

DEFAULT_STORE_PATH = Path(".pi-recipes") / "state.db"
"""Where the store lives unless told otherwise (relative to the working directory)."""

T = TypeVar("T")
Conn = sqlite3.Connection


class SQLiteStore:
    """A :class:`~interactions.store.Store` in one SQLite file (created with its directory).

    The file is opened and migrated on first use, or by :meth:`open` / ``async with`` (which
    surface a :class:`~interactions.store.StoreSchemaError` early). ``busy_timeout`` (seconds)
    bounds a wait for another writer; ``poll_interval`` (seconds) is how often a waiter looks
    for other processes' writes; ``clock`` supplies "now" when a method is not given ``now``.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] = DEFAULT_STORE_PATH,
        *,
        busy_timeout: float = 10.0,
        poll_interval: float = 0.1,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self.path = Path(path)
        self._busy_timeout = busy_timeout
        self._poll_interval = poll_interval
        self._clock = clock
        self._lock = threading.Lock()
        self._conn: Conn | None = None
        self._closed = False
        self._bell = Doorbell()

    async def open(self) -> Self:
        """Open and migrate the file now (idempotent); return the store."""
        await self._call(lambda conn: None)
        return self

    # -- runs ---------------------------------------------------------------------------------

    async def create_run(self, new: NewRun) -> RunRecord:
        def tx(conn: Conn) -> RunRecord:
            if conn.execute("SELECT 1 FROM runs WHERE id = ?", (new.id,)).fetchone():
                raise ConflictError(
                    f"a run with id {new.id!r} already exists; choose another id",
                    run_id=new.id,
                    reason="duplicate_run",
                )
            run, event = new_run_record(new, self._clock())
            rows.insert_run(conn, run)
            rows.append_events(conn, run.id, [event], run.created_at)
            return run

        run = await self._write(tx)
        self._bell.ring(run.id)
        return run

    async def get_run(self, run_id: str) -> RunRecord:
        return await self._call(lambda conn: rows.get_run(conn, run_id))

    async def list_runs(self, status: RunStatus | None = None, limit: int = 100) -> list[RunRecord]:
        if limit < 1:
            raise UsageError(f"limit must be >= 1, got {limit}")
        return await self._call(lambda conn: rows.select_runs(conn, status, limit))

    async def update_run(
        self,
        run_id: str,
        *,
        expected_version: int,
        status: RunStatus | None = None,
        checkpoint: Mapping[str, Any] | None = None,
        error: str | None = None,
        new_interactions: Sequence[NewInteraction] = (),
        answers: Mapping[str, InteractionAnswer] | None = None,
        events: Sequence[EventInput] = (),
        now: datetime | None = None,
    ) -> RunRecord:
        answers = answers or {}

        def tx(conn: Conn) -> RunRecord:
            run = rows.get_run(conn, run_id)
            ids = {new.id for new in new_interactions} | set(answers)
            stored = {i: r for i in ids if (r := rows.find_interaction(conn, run_id, i))}
            at = now or self._clock()
            plan = plan_update(
                run,
                expected_version=expected_version,
                status=status,
                checkpoint=checkpoint,
                error=error,
                new_interactions=new_interactions,
                answers=answers,
                events=events,
                stored=stored,
                now=at,
            )
            rows.update_run_row(conn, plan.run, checkpoint_changed=checkpoint is not None)
            for record in plan.inserts:
                rows.insert_interaction(conn, record)
            for record in plan.answered:
                rows.store_answer(conn, record)
            rows.append_events(conn, run_id, plan.events, at)
            return plan.run

        run = await self._write(tx)
        self._bell.ring(run_id)
        return run

    # -- interactions -------------------------------------------------------------------------

    async def get_interaction(self, run_id: str, interaction_id: str) -> InteractionRecord:
        record = await self._call(lambda conn: rows.find_interaction(conn, run_id, interaction_id))
        if record is None:
            raise UnknownInteractionError(
                f"run {run_id!r} has no interaction {interaction_id!r}",
                run_id=run_id,
                interaction_id=interaction_id,
                reason="unknown_interaction",
            )
        return record

    async def list_interactions(
        self, run_id: str | None = None, *, pending: bool | None = None
    ) -> list[InteractionRecord]:
        def read(conn: Conn) -> list[InteractionRecord]:
            if run_id is not None:
                rows.get_run(conn, run_id)
            return rows.select_interactions(conn, run_id, pending)

        return await self._call(read)

    async def answer_interaction(
        self,
        run_id: str,
        interaction_id: str,
        answer: InteractionAnswer,
        *,
        now: datetime | None = None,
    ) -> tuple[InteractionRecord, bool]:
        def tx(conn: Conn) -> tuple[InteractionRecord, bool]:
            at = now or self._clock()
            stored = rows.find_interaction(conn, run_id, interaction_id)
            record, event = plan_answer(run_id, interaction_id, stored, answer, at)
            if event is None:
                return record, False
            rows.store_answer(conn, record)
            rows.append_events(conn, run_id, [event], at)
            return record, True

        record, stored_now = await self._write(tx)
        if stored_now:
            self._bell.ring(run_id)
        return record, stored_now

    # -- events -------------------------------------------------------------------------------

    async def append_events(self, run_id: str, events: Sequence[EventInput]) -> list[EventRecord]:
        checked = check_event_inputs(events)

        def tx(conn: Conn) -> list[EventRecord]:
            rows.get_run(conn, run_id)
            return rows.append_events(conn, run_id, checked, self._clock())

        appended = await self._write(tx)
        if appended:
            self._bell.ring(run_id)
        return appended

    async def list_events(self, run_id: str, after_seq: int = 0) -> list[EventRecord]:
        return await self._call(lambda conn: rows.select_events(conn, run_id, after_seq))

    async def wait_for_events(
        self, run_id: str, *, after_seq: int, timeout: float
    ) -> list[EventRecord]:
        return await wait_level(
            self._bell,
            run_id,
            lambda: self.list_events(run_id, after_seq),
            timeout=timeout,
            poll_interval=self._poll_interval,
        )

    # -- lifecycle ----------------------------------------------------------------------------

    async def close(self) -> None:
        def close_locked() -> None:
            with self._lock:
                self._closed = True
                if self._conn is not None:
                    self._conn.close()
                    self._conn = None

        await anyio.to_thread.run_sync(close_locked)

    async def __aenter__(self) -> Self:
        return await self.open()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    # -- plumbing -----------------------------------------------------------------------------

    async def _call(self, fn: Callable[[Conn], T]) -> T:
        """Run ``fn(connection)`` in a worker thread, holding the connection lock."""

        def locked() -> T:
            with self._lock:
                return fn(self._connection())

        return await anyio.to_thread.run_sync(locked)

    async def _write(self, fn: Callable[[Conn], T]) -> T:
        """Run ``fn`` in one ``BEGIN IMMEDIATE`` transaction: commit, or roll back on error."""

        def transaction(conn: Conn) -> T:
            conn.execute("BEGIN IMMEDIATE")
            try:
                result = fn(conn)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            return result

        return await self._call(transaction)

    def _connection(self) -> Conn:
        if self._closed:
            raise UsageError(f"this SQLiteStore ({self.path}) is closed; open a new one")
        if self._conn is None:
            self._conn = connect(self.path, self._busy_timeout)
        return self._conn


async def open_sqlite_store(
    path: str | os.PathLike[str] = DEFAULT_STORE_PATH,
    *,
    busy_timeout: float = 10.0,
    poll_interval: float = 0.1,
    clock: Callable[[], datetime] = utc_now,
) -> SQLiteStore:
    """Open (creating and migrating as needed) the store file at ``path`` and return it.

    The options are :class:`SQLiteStore`'s. Raises :class:`~interactions.store.StoreSchemaError`
    for a file this version cannot use. Close the store (or use ``async with``) when done.
    """
    store = SQLiteStore(path, busy_timeout=busy_timeout, poll_interval=poll_interval, clock=clock)
    return await store.open()
