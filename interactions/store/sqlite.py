"""The SQLite :class:`~interactions.store.Store`: the embedded default, one file, many processes.

Concurrency: the file is in WAL mode (readers never block the writer) and every write runs in
``BEGIN IMMEDIATE``, which takes the write lock before reading what it will decide on, so two
racing writers (tasks, threads or processes) serialize and exactly one wins a compare-and-set.
``busy_timeout`` bounds how long a writer waits for the lock. An update of a run at the version
this store last wrote is decided on what it wrote (``_last_written``), without reading the run:
its guards (the version, each answer's absence) then refuse, and the update is decided again on
what the file holds, if another process moved the run meanwhile.

Threads: each store owns one ``sqlite3`` connection, used only from worker threads
(``anyio.to_thread.run_sync``) and guarded by a ``threading.Lock``. One connection (rather than
one per call) avoids re-opening the file and re-running the PRAGMAs per call, keeps ``close()``
simple, and makes writers of the same store queue on the lock instead of spinning in SQLite's
busy handler; reads are short, and other processes still read concurrently under WAL.
Other processes' writes wake :meth:`SQLiteStore.wait_for_events` and :meth:`SQLiteStore.watch`
through ``PRAGMA data_version``, which changes when another connection commits. One waiter of
the store watches it for all (``_changes``): on Linux it sleeps until inotify tells of a write to
the file or its WAL and then reads the counter until the commit shows; elsewhere it reads it
every ``change_interval`` (5 ms; a read of a counter, microseconds). The store is read again
only by the waiters whose last read is older than the counter.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Self, TypeVar

from interactions._errors import StoreUnavailableError
from interactions.store._changes import ChangeWatch, file_hints
from interactions.store._checks import check_interval, check_lock_wait
from interactions.store._records import utc_now
from interactions.store._sql_store import SqlStore
from interactions.store._sqlite_rows import (
    CONSUMERS,
    DECISIONS,
    REMINDERS,
    ROWS,
    VOTES,
)
from interactions.store._sqlite_schema import connect, damaged, translate
from interactions.store._threaded import WouldBlock

__all__ = ["DEFAULT_STORE_PATH", "SQLiteStore", "open_sqlite_store"]

DEFAULT_STORE_PATH = Path(".pi-recipes") / "state.db"
"""Where the store lives unless told otherwise (relative to the working directory)."""

T = TypeVar("T")
Conn = sqlite3.Connection


class SQLiteStore(SqlStore[Conn]):
    """A :class:`~interactions.store.Store` in one SQLite file (created with its directory).

    The file is opened and migrated on first use, or by :meth:`open` / ``async with`` (which
    surface a :class:`~interactions.store.StoreSchemaError` early). ``busy_timeout`` (seconds)
    bounds a wait for another writer; ``change_interval`` (seconds) is how often the store looks
    whether another process committed where the system cannot tell it (not Linux),
    ``poll_interval`` how often a waiter reads the store anyway;
    ``clock`` supplies "now" when a method is not given ``now``. An option out of range (a lock
    wait that is not finite, an interval not above 0) is a ``UsageError``.
    """

    _changes: ChangeWatch  # always watched: other processes write the file

    def __init__(
        self,
        path: str | os.PathLike[str] = DEFAULT_STORE_PATH,
        *,
        busy_timeout: float = 10.0,
        poll_interval: float = 0.1,
        change_interval: float = 0.005,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        check_lock_wait("busy_timeout", busy_timeout)
        check_interval("poll_interval", poll_interval)
        check_interval("change_interval", change_interval)
        super().__init__(
            ROWS, DECISIONS, VOTES, CONSUMERS, REMINDERS, poll_interval=poll_interval, clock=clock
        )
        self.path = Path(path)
        self._busy_timeout = busy_timeout
        self._changes = ChangeWatch(
            self._version, interval=change_interval, hints=lambda: file_hints(self.path)
        )
        self._relaxed: Conn | None = None  # the connection left at synchronous = NORMAL

    async def open(self) -> Self:
        """Open and migrate the file now (idempotent); return the store."""
        return await super().open()

    def _connect(self) -> Conn:
        return connect(self.path, self._busy_timeout)

    def _connect_at_once(self) -> Conn:
        try:
            return connect(self.path, 0)
        except StoreUnavailableError as exc:
            if exc.reason == "busy":
                raise WouldBlock from exc
            raise

    def _transaction(self, conn: Conn, fn: Callable[[Conn], T], durable: bool = True) -> T:
        """Run ``fn`` in one ``BEGIN IMMEDIATE`` transaction: commit, or roll back on error.

        A durable commit is flushed to disk (``synchronous = FULL``, as the connection opens);
        another is not (``NORMAL``), and becomes durable with the next flushed commit of the WAL.
        The setting is changed only when the next commit needs the other one.
        """
        relaxed = self._relaxed is conn
        if durable and relaxed:
            conn.execute("PRAGMA synchronous = FULL")
            self._relaxed = None
        elif not durable and not relaxed:
            conn.execute("PRAGMA synchronous = NORMAL")
            self._relaxed = conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            result = fn(conn)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        self._changes.wrote()
        return result

    _reads_inline = True  # in WAL mode a read never waits for a writer
    _writes_inline = True  # BEGIN IMMEDIATE without a busy timeout fails at once when locked

    @contextmanager
    def _waiting_for_locks(self, conn: Conn, patient: bool) -> Iterator[None]:
        if patient:
            conn.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout * 1000):d}")
            try:
                yield
            finally:
                conn.execute("PRAGMA busy_timeout = 0")
            return
        try:
            yield
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise WouldBlock from exc
            raise

    async def close(self) -> None:
        await super().close()  # no write runs after this: the hints can go
        self._changes.close()

    async def _version(self) -> int:
        """``PRAGMA data_version``: it moves when another connection commits."""
        return await self._read(_data_version)

    def _translate(self, exc: Exception) -> Exception | None:
        if isinstance(exc, sqlite3.DatabaseError) and (
            isinstance(exc, sqlite3.OperationalError) or damaged(exc)
        ):
            return translate(exc, str(self.path))
        return None

    def _closed_message(self) -> str:
        return f"this SQLiteStore ({self.path}) is closed; open a new one"


def _data_version(conn: Conn) -> int:
    version: int = conn.execute("PRAGMA data_version").fetchone()[0]
    return version


async def open_sqlite_store(
    path: str | os.PathLike[str] = DEFAULT_STORE_PATH,
    *,
    busy_timeout: float = 10.0,
    poll_interval: float = 0.1,
    change_interval: float = 0.005,
    clock: Callable[[], datetime] = utc_now,
) -> SQLiteStore:
    """Open (creating and migrating as needed) the store file at ``path`` and return it.

    The options are :class:`SQLiteStore`'s. Raises :class:`~interactions.store.StoreSchemaError`
    for a file this version cannot use. Close the store (or use ``async with``) when done.
    """
    store = SQLiteStore(
        path,
        busy_timeout=busy_timeout,
        poll_interval=poll_interval,
        change_interval=change_interval,
        clock=clock,
    )
    return await store.open()
