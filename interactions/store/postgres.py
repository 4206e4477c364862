"""The PostgreSQL :class:`~interactions.store.Store`: many processes, many machines.

Concurrency: every write is one transaction that first locks the run's row
(``SELECT ... FOR UPDATE``), then reads what it decides on, asks :mod:`._rules`, and writes. So
the writers of one run (tasks, threads, processes, machines) serialize: a compare-and-set on the
version or an answer sees the winner's commit and refuses with ``ConflictError``, and event
``seq`` stays gapless. The ``UPDATE``\\s carry their own guards (``version = %s``,
``answer_status IS NULL``) as a second line. A new run's id is claimed by
``INSERT ... ON CONFLICT DO NOTHING``. ``lock_timeout`` bounds any wait for a lock.

Threads, not the async driver: psycopg's ``AsyncConnection`` runs on asyncio only, and the store
must serve trio too. So, like :class:`~interactions.store.SQLiteStore`, each store owns one sync
connection, used only from worker threads (``anyio.to_thread.run_sync``) under a
``threading.Lock``. One connection rather than a pool: a store belongs to one event loop, the
writers of one run serialize on its row lock anyway, the server sees a predictable two
connections per store (queries, and the listener once someone waits), and ``close()`` stays
simple. Processes and machines scale out with a store each.

Waiting: a write through this store rings the in-process doorbell at once; other processes'
writes are seen through ``LISTEN``/``NOTIFY`` (see :mod:`._postgres_listen`): the ``NOTIFY`` is
sent in the writing transaction, with the run id as payload. A fallback poll every
``poll_interval`` seconds bounds the cost of a lost notification.

psycopg is the optional ``postgres`` extra: importing this module does not need it; opening a
store does.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, TypeVar

import anyio.to_thread

from interactions._errors import ConflictError, UnknownInteractionError, UsageError
from interactions.store import _postgres_rows as rows
from interactions.store._doorbell import Doorbell, wait_level
from interactions.store._postgres_listen import Wakeups
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
from interactions.store._rules import check_timeout, new_run_record, plan_answer, plan_update
from interactions.store._status import RunStatus

if TYPE_CHECKING:
    from interactions.store._postgres_schema import Conn

__all__ = ["PostgresStore", "open_postgres_store"]

T = TypeVar("T")


class PostgresStore:
    """A :class:`~interactions.store.Store` in a PostgreSQL database (libpq ``dsn``).

    The tables live in ``schema`` (created if missing), else in the connection's
    ``current_schema()``. The database is connected and migrated on first use, or by
    :meth:`open` / ``async with`` (which surface a :class:`~interactions.store.StoreSchemaError`
    early). ``lock_timeout`` (seconds) bounds a wait for another writer's lock;
    ``poll_interval`` (seconds) is how often a waiter re-reads in case a notification was lost;
    ``clock`` supplies "now" when a method is not given ``now``. The DSN (it may hold a
    password) is never put in messages.
    """

    def __init__(
        self,
        dsn: str,
        *,
        schema: str | None = None,
        lock_timeout: float = 10.0,
        poll_interval: float = 5.0,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self._dsn = dsn
        self._schema = schema
        self._lock_timeout = lock_timeout
        self._poll_interval = poll_interval
        self._clock = clock
        self._lock = threading.Lock()
        self._conn: Conn | None = None
        self._channel = ""
        self._closed = False
        self._bell = Doorbell()
        self._wakeups = Wakeups(dsn, self._bell)

    async def open(self) -> Self:
        """Connect and migrate now (idempotent); return the store."""
        await self._call(lambda conn: None)
        return self

    # -- runs ---------------------------------------------------------------------------------

    async def create_run(self, new: NewRun) -> RunRecord:
        def tx(conn: Conn) -> RunRecord:
            run, event = new_run_record(new, self._clock())
            if not rows.insert_run(conn, run):
                raise ConflictError(
                    f"a run with id {new.id!r} already exists; choose another id",
                    run_id=new.id,
                    reason="duplicate_run",
                )
            rows.append_events(conn, run.id, [event], run.created_at, channel=self._channel)
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
            run = rows.get_run(conn, run_id, lock=True)
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
            rows.append_events(conn, run_id, plan.events, at, channel=self._channel)
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
            found = rows.lock_run(conn, run_id)  # no run: no interaction, refused just below
            stored = rows.find_interaction(conn, run_id, interaction_id) if found else None
            record, event = plan_answer(run_id, interaction_id, stored, answer, at)
            if event is None:
                return record, False
            rows.store_answer(conn, record)
            rows.append_events(conn, run_id, [event], at, channel=self._channel)
            return record, True

        record, stored_now = await self._write(tx)
        if stored_now:
            self._bell.ring(run_id)
        return record, stored_now

    # -- events -------------------------------------------------------------------------------

    async def append_events(self, run_id: str, events: Sequence[EventInput]) -> list[EventRecord]:
        checked = check_event_inputs(events)

        def tx(conn: Conn) -> list[EventRecord]:
            rows.get_run(conn, run_id, lock=True)
            return rows.append_events(conn, run_id, checked, self._clock(), channel=self._channel)

        appended = await self._write(tx)
        if appended:
            self._bell.ring(run_id)
        return appended

    async def list_events(self, run_id: str, after_seq: int = 0) -> list[EventRecord]:
        return await self._call(lambda conn: rows.select_events(conn, run_id, after_seq))

    async def wait_for_events(
        self, run_id: str, *, after_seq: int, timeout: float
    ) -> list[EventRecord]:
        check_timeout(timeout)
        # LISTEN before the first look, so nothing committed after that look goes unnoticed.
        await anyio.to_thread.run_sync(self._start_listener)
        with self._wakeups.waiting(run_id):
            return await wait_level(
                self._bell,
                run_id,
                lambda: self.list_events(run_id, after_seq),
                timeout=timeout,
                poll_interval=self._poll_interval,
            )

    # -- lifecycle ----------------------------------------------------------------------------

    async def close(self) -> None:
        def close_all() -> None:
            with self._lock:
                self._closed = True
                conn, self._conn = self._conn, None
            self._wakeups.stop()
            if conn is not None:
                conn.close()

        await anyio.to_thread.run_sync(close_all)

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
        """Run ``fn`` in one transaction: commit, or roll back on any error."""

        def transaction(conn: Conn) -> T:
            with conn.transaction():
                return fn(conn)

        return await self._call(transaction)

    def _connection(self) -> Conn:
        if self._closed:
            raise UsageError("this PostgresStore is closed; open a new one")
        if self._conn is not None and (self._conn.closed or self._conn.broken):
            # The server went away; the call that failed raised. Reconnect on this one.
            self._conn = None
        if self._conn is None:
            try:
                from interactions.store._postgres_schema import channel_name, connect
            except ImportError as exc:
                raise UsageError(
                    f"PostgresStore needs psycopg 3 ({exc}); install pi-recipes[postgres]"
                ) from exc
            self._conn, schema = connect(self._dsn, self._schema, lock_timeout=self._lock_timeout)
            self._channel = channel_name(schema)
        return self._conn

    def _start_listener(self) -> None:
        """Connect (so the channel is known), then make sure the listener runs."""
        with self._lock:
            self._connection()
        self._wakeups.start(self._channel)


async def open_postgres_store(
    dsn: str,
    *,
    schema: str | None = None,
    lock_timeout: float = 10.0,
    poll_interval: float = 5.0,
    clock: Callable[[], datetime] = utc_now,
) -> PostgresStore:
    """Connect to ``dsn``, create or migrate the store's tables, and return the store.

    The options are :class:`PostgresStore`'s. Raises :class:`~interactions.store.StoreSchemaError`
    for a schema this version cannot use, and psycopg's ``OperationalError`` when the server
    cannot be reached. Close the store (or use ``async with``) when done.
    """
    store = PostgresStore(
        dsn, schema=schema, lock_timeout=lock_timeout, poll_interval=poll_interval, clock=clock
    )
    return await store.open()
