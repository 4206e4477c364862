"""The Store methods shared by the SQL backends: one sync connection, driven from worker threads.

:class:`ThreadedStore` owns the connection, the ``threading.Lock`` that guards it, and the
in-process doorbell; it runs every call in a worker thread (``anyio.to_thread.run_sync``) and
every write in one transaction. What it decides with is :mod:`._rules`; what it runs is a
:class:`~._rows.Rows` (``_sqlite_rows``, ``_postgres_rows``). A backend subclass says only how to
connect, how to run a transaction, what else to stop on close, and how to get ready to wait.

A write sends everything it reads before it asks for any result, decides, then sends its
guarded writes before it checks any guard, and its events last: a backend that pipelines
(PostgreSQL) waits for the server once for the reads, once for the guards, and once for the
commit, which the events travel with. A backend may also let ``update_run`` decide on what the
store last wrote of the run (:class:`~interactions.store._last_written.LastWritten`) and send it
all at once with guards that fail the transaction (:meth:`ThreadedStore._send_decided`): for
PostgreSQL one wait for the server, for SQLite no read; a decision on what the store holds only
when a guard finds the run moved on.
"""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import aclosing, asynccontextmanager, contextmanager
from datetime import datetime
from typing import Any, Generic, Protocol, Self, TypeVar

import anyio.lowlevel
import anyio.to_thread

from interactions._errors import PiRecipesError, UsageError
from interactions.store._checks import check_limit, check_timeout, position
from interactions.store._doorbell import ANY_RUN, Doorbell, wait_level
from interactions.store._last_written import LastWritten, Written
from interactions.store._protocol import Store
from interactions.store._records import (
    EventInput,
    EventRecord,
    InteractionAnswer,
    InteractionRecord,
    NewInteraction,
    NewRun,
    RunRecord,
    canonical_json,
    check_event_inputs,
)
from interactions.store._refusals import run_taken, unknown_interaction
from interactions.store._rows import Rows, Stale
from interactions.store._rules import (
    UpdatePlan,
    closing_answers,
    new_run_record,
    plan_answer,
    plan_update,
)
from interactions.store._status import RunStatus

__all__ = ["Closable", "ThreadedStore", "WouldBlock"]


class WouldBlock(Exception):
    """A call made without waiting met another writer's lock: make it again, patiently."""


T = TypeVar("T")

_WATCH_ROUND = 3600.0
"""Seconds one round of a watch waits before it looks again on its own."""


class Closable(Protocol):
    """What the base needs of a connection itself: a way to close it."""

    def close(self) -> None: ...


ConnT = TypeVar("ConnT", bound=Closable)


class ThreadedStore(Store, Generic[ConnT]):
    """The :class:`~interactions.store.Store` methods over one connection and a :class:`Rows`.

    Subclasses implement :meth:`_connect` and :meth:`_transaction`, and may override
    :meth:`_usable`, :meth:`_on_close`, :meth:`_closed_message` and :meth:`_waiting`.
    ``_channel`` is handed to ``Rows.append_events`` (the backend sets it when it has one,
    e.g. on connecting).
    """

    def __init__(
        self, rows: Rows[ConnT], *, poll_interval: float, clock: Callable[[], datetime]
    ) -> None:
        self._rows = rows
        self._poll_interval = poll_interval
        self._clock = clock
        self._lock = threading.Lock()
        self._conn: ConnT | None = None
        self._channel = ""
        self._closed = False
        self._bell = Doorbell()
        self._written = LastWritten()  # what update_run may decide on without reading first

    async def open(self) -> Self:
        """Connect now (idempotent); return the store."""
        await anyio.lowlevel.checkpoint_if_cancelled()
        if self._conn is None and self._lock.acquire(blocking=False):
            try:  # on the event loop's thread when connecting need not wait for anyone
                if not self._closed and self._conn is None:
                    self._conn = self._connect_at_once()
            except WouldBlock:
                pass  # another process is migrating the file: wait for it in a thread
            finally:
                self._lock.release()
        if self._conn is None:
            await self._call(lambda conn: None)
        return self

    # -- runs ---------------------------------------------------------------------------------

    async def create_run(self, new: NewRun) -> RunRecord:
        rows = self._rows
        checkpoint_json = canonical_json(new.checkpoint)  # written, and measured, once

        def tx(conn: ConnT) -> RunRecord:
            run, event = new_run_record(new, self._clock())
            if not rows.insert_run(conn, run, checkpoint_json)():
                raise run_taken(new.id)
            rows.append_events(conn, run.id, [event], run.created_at, channel=self._channel)
            return run

        try:
            run = await self._write(tx, durable=False)  # made durable by the run's next write
        except Stale:
            raise run_taken(new.id) from None
        self._written.keep(run, [], size=len(checkpoint_json))
        self._bell.ring(run.id)
        return run

    async def get_run(self, run_id: str) -> RunRecord:
        run = await self._read(lambda conn: self._rows.get_run(conn, run_id))
        self._written.read_run(run)
        return run

    async def list_runs(
        self,
        status: RunStatus | None = None,
        limit: int = 100,
        *,
        oldest_first: bool = False,
        after: str | None = None,
        thread_id: str | None = None,
    ) -> list[RunRecord]:
        check_limit(limit)
        return await self._read(
            lambda conn: self._rows.select_runs(conn, status, limit, oldest_first, after, thread_id)
        )

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
        close_open: InteractionAnswer | None = None,
        events: Sequence[EventInput] = (),
        now: datetime | None = None,
        durable: bool = True,
    ) -> RunRecord:
        def decide(run: RunRecord, stored: list[InteractionRecord], at: datetime) -> UpdatePlan:
            pending = [record for record in stored if record.answer is None]
            return plan_update(
                run,
                expected_version=expected_version,
                status=status,
                checkpoint=checkpoint,
                error=error,
                new_interactions=new_interactions,
                answers=closing_answers(answers or {}, close_open, pending),
                events=events,
                stored={record.id: record for record in stored},
                now=at,
            )

        written = self._written.at(run_id, expected_version)
        if written is not None:
            updated = await self._update_as_written(written, decide, now, durable)
            if updated is not None:
                self._bell.ring(run_id)
                return updated

        rows = self._rows

        def tx(conn: ConnT) -> tuple[UpdatePlan, list[InteractionRecord]]:
            # What the decision reads, sent together: the run, and all its interactions (what
            # close_open closes, and what the store remembers for the next update).
            locked = rows.lock_run(conn, run_id, checkpoint=checkpoint is None)
            found = rows.find_interactions(conn, run_id, None)
            run = locked()
            stored = found()
            at = now or self._clock()
            plan = decide(run, stored, at)
            # The guarded writes, sent together, then their guards; the events go with the commit.
            guards = [rows.update_run_row(conn, plan.run, checkpoint_json=plan.checkpoint_json)]
            for record in plan.inserts:
                rows.insert_interaction(conn, record)
            guards += [rows.store_answer(conn, record) for record in plan.answered]
            for guard in guards:
                guard()
            rows.append_events(conn, run_id, plan.events, at, channel=self._channel)
            return plan, stored

        plan, stored = await self._write(tx, durable=durable)
        size = None if plan.checkpoint_json is None else len(plan.checkpoint_json)
        self._written.keep(plan.run, [*stored, *plan.inserts, *plan.answered], size)
        self._bell.ring(run_id)
        return plan.run

    async def _update_as_written(
        self,
        written: Written,
        decide: Callable[[RunRecord, list[InteractionRecord], datetime], UpdatePlan],
        now: datetime | None,
        durable: bool,
    ) -> RunRecord | None:
        """Update the run as decided on what this store last wrote of it, without reading it
        first: the guards fail the transaction if the run moved on since (on PostgreSQL, the
        write is one wait for the server instead of three). ``None``: not written; decide on
        what the store holds (a refusal, too, is left to that decision, on data that cannot be
        behind).
        """
        at = now or self._clock()
        try:
            plan = decide(written.run, written.in_request_order(), at)
        except PiRecipesError:
            return None

        def tx(conn: ConnT) -> None:
            self._send_decided(conn, plan, at)

        try:
            await self._write(tx, durable=durable)
        except Stale:
            self._written.forget(plan.run.id)
            return None
        interactions = [*written.interactions.values(), *plan.inserts, *plan.answered]
        size = written.size if plan.checkpoint_json is None else len(plan.checkpoint_json)
        if size is None:  # a run read, with the checkpoint it was read with: still unmeasured
            self._written.keep_unmeasured(plan.run, interactions)
        else:
            self._written.keep(plan.run, interactions, size)
        return plan.run

    # -- interactions -------------------------------------------------------------------------

    async def get_interaction(self, run_id: str, interaction_id: str) -> InteractionRecord:
        record = await self._read(
            lambda conn: self._rows.find_interaction(conn, run_id, interaction_id)
        )
        if record is None:
            raise unknown_interaction(run_id, interaction_id)
        return record

    async def list_interactions(
        self, run_id: str | None = None, *, pending: bool | None = None
    ) -> list[InteractionRecord]:
        def read(conn: ConnT) -> list[InteractionRecord]:
            found = self._rows.select_interactions(conn, run_id, pending)
            if run_id is not None and not found:
                self._rows.get_run(conn, run_id, checkpoint=False)  # unknown: refused, not []
            return found

        found = await self._read(read)
        if run_id is not None and pending is None:
            self._written.read_interactions(run_id, found)
        return found

    async def answer_interaction(
        self,
        run_id: str,
        interaction_id: str,
        answer: InteractionAnswer,
        *,
        now: datetime | None = None,
    ) -> tuple[InteractionRecord, bool]:
        rows = self._rows

        def tx(conn: ConnT) -> tuple[InteractionRecord, bool]:
            at = now or self._clock()
            rows.lock_run(conn, run_id, checkpoint=False)  # no run: no interaction, refused below
            found = rows.find_interactions(conn, run_id, [interaction_id])()
            record, event = plan_answer(run_id, interaction_id, next(iter(found), None), answer, at)
            if event is None:
                return record, False
            rows.store_answer(conn, record)()
            rows.append_events(conn, run_id, [event], at, channel=self._channel)
            return record, True

        record, stored_now = await self._write(tx)
        if stored_now:
            self._written.answered(record)
            self._bell.ring(run_id)
        return record, stored_now

    # -- events -------------------------------------------------------------------------------

    async def append_events(self, run_id: str, events: Sequence[EventInput]) -> list[EventRecord]:
        checked = check_event_inputs(events)

        def tx(conn: ConnT) -> list[EventRecord]:
            locked = self._rows.lock_run(conn, run_id, checkpoint=False)
            appended = self._rows.append_events(
                conn, run_id, checked, self._clock(), channel=self._channel
            )
            locked()  # no run: UnknownRunError, and nothing was appended
            return appended()

        appended = await self._write(tx)
        if appended:
            self._bell.ring(run_id)
        return appended

    async def list_events(self, run_id: str, after_seq: int = 0) -> list[EventRecord]:
        after_seq = position("after_seq", after_seq)
        return await self._read(lambda conn: self._rows.select_events(conn, run_id, after_seq))

    async def wait_for_events(
        self, run_id: str, *, after_seq: int, timeout: float
    ) -> list[EventRecord]:
        check_timeout(timeout)
        async with self._waiting(run_id):
            return await wait_level(
                self._bell,
                run_id,
                lambda: self.list_events(run_id, after_seq),
                timeout=timeout,
                poll_interval=self._poll_interval,
                version=self._version if self._version_interval < math.inf else None,
                version_interval=self._version_interval,
            )

    @asynccontextmanager
    async def watch(self, *, after: int = 0) -> AsyncIterator[AsyncIterator[EventRecord]]:
        feed = self._follow(position("after", after))
        async with aclosing(feed), self._waiting(ANY_RUN):
            yield feed

    async def _follow(self, after: int) -> AsyncGenerator[EventRecord, None]:
        # A wait is bounded; a watch is not: it waits in bounded rounds until cancelled.
        cursor = after
        while True:
            found = await wait_level(
                self._bell,
                ANY_RUN,
                functools.partial(self._feed_after, cursor),
                timeout=_WATCH_ROUND,
                poll_interval=self._poll_interval,
                version=self._version if self._version_interval < math.inf else None,
                version_interval=self._version_interval,
            )
            for event in found:
                cursor = event.cursor
                yield event

    async def latest_cursor(self) -> int:
        return await self._read(self._rows.last_cursor)

    async def _feed_after(self, cursor: int) -> list[EventRecord]:
        return await self._read(lambda conn: self._rows.select_feed(conn, cursor, 500))

    # -- lifecycle ----------------------------------------------------------------------------

    async def close(self) -> None:
        def close_all(locked: bool) -> None:
            if not locked:
                self._lock.acquire()
            try:
                self._closed = True
                conn, self._conn = self._conn, None
            finally:
                self._lock.release()
            self._on_close()
            if conn is not None:
                conn.close()

        if self._writes_inline and self._lock.acquire(blocking=False):
            close_all(locked=True)  # nothing runs: close here (closing may flush the log)
            return
        await anyio.to_thread.run_sync(close_all, False)

    async def __aenter__(self) -> Self:
        return await self.open()

    # -- backend hooks ------------------------------------------------------------------------

    def _connect(self) -> ConnT:
        """Open (and migrate) a new connection. Called in a worker thread, under the lock."""
        raise NotImplementedError

    def _transaction(self, conn: ConnT, fn: Callable[[ConnT], T], durable: bool = True) -> T:
        """Run ``fn(conn)`` in one transaction: commit, or roll back on any error."""
        raise NotImplementedError

    _reads_inline = False
    """Whether reads may run on the event loop's thread (a backend whose reads never wait)."""

    def _send_decided(self, conn: ConnT, plan: UpdatePlan, at: datetime) -> None:
        """Send the writes of ``plan`` (the run's row, new interactions, answers, then the
        events stamped ``at``), decided without reading the run: with strict guards, so the
        transaction raises :class:`Stale` and writes nothing if the run's version moved or an
        interaction it answers was answered."""
        rows = self._rows
        rows.update_run_row(conn, plan.run, checkpoint_json=plan.checkpoint_json, strict=True)
        for record in plan.inserts:
            rows.insert_interaction(conn, record)
        for record in plan.answered:
            rows.store_answer(conn, record, strict=True)
        rows.append_events(conn, plan.run.id, plan.events, at, channel=self._channel)

    @contextmanager
    def _waiting_for_locks(self, conn: ConnT, patient: bool) -> Iterator[None]:
        """Wait for other writers' locks (``patient``), or raise :class:`WouldBlock`."""
        yield

    def _translate(self, exc: Exception) -> Exception | None:
        """The typed error for a driver's failure (a lock wait past its bound, a read-only
        file, a lost server), or ``None`` to let ``exc`` through unchanged."""
        return None

    def _connect_at_once(self) -> ConnT:
        """Connect without waiting for another process (raise :class:`WouldBlock`), or raise
        :class:`WouldBlock` when the backend cannot (then :meth:`_connect` runs in a thread)."""
        raise WouldBlock

    def _usable(self, conn: ConnT) -> bool:
        """Whether ``conn`` can still serve a call (else a new one is opened)."""
        return True

    def _on_close(self) -> None:
        """Stop whatever else the store runs. Called once the connection is taken, unlocked."""

    def _closed_message(self) -> str:
        return f"this {type(self).__name__} is closed; open a new one"

    @asynccontextmanager
    async def _waiting(self, run_id: str) -> AsyncIterator[None]:
        """Be ready to see other processes' writes to ``run_id`` while this waits."""
        yield

    # -- plumbing -----------------------------------------------------------------------------

    async def _call(self, fn: Callable[[ConnT], T]) -> T:
        """Run ``fn(connection)`` holding the connection lock, in a worker thread."""

        def locked() -> T:
            with self._lock:
                return self._run(fn, patient=True)

        return await anyio.to_thread.run_sync(locked)

    _version_interval = math.inf
    """How often a waiter reads :meth:`_version` (never, unless the backend has one)."""

    async def _version(self) -> int:
        """A counter other processes' commits move (see :func:`wait_level`)."""
        return 0

    _writes_inline = False
    """Whether a write may run on the event loop's thread when the lock is free and the
    backend need not wait for another writer (it then raises :class:`WouldBlock`)."""

    async def _read(self, fn: Callable[[ConnT], T]) -> T:
        """Run the read ``fn(connection)`` on the event loop's thread when that cannot block
        (the backend reads without waiting and the lock is free), else as :meth:`_call` does."""
        await anyio.lowlevel.checkpoint_if_cancelled()
        if self._conn is not None and self._reads_inline and self._lock.acquire(blocking=False):
            try:
                return self._run(fn, patient=False)
            except WouldBlock:
                pass  # another process holds what the read needs: wait for it in a thread
            finally:
                self._lock.release()
        return await self._call(fn)

    def _run(self, fn: Callable[[ConnT], T], *, patient: bool) -> T:
        """``fn(connection)`` (connecting if needed; call holding the lock), its failures typed;
        ``patient`` waits for other writers' locks (up to the store's bound), else
        :class:`WouldBlock` is raised at once."""
        try:
            conn = self._connection()
            with self._waiting_for_locks(conn, patient):
                return fn(conn)
        except WouldBlock:
            raise
        except UnicodeEncodeError:
            raise UsageError(
                "a value given to the store is not valid Unicode (a lone surrogate, as "
                "invalid UTF-8 decodes to); nothing was written"
            ) from None
        except Exception as exc:
            typed = self._translate(exc)
            if typed is None:
                raise
            raise typed from None

    async def _write(self, fn: Callable[[ConnT], T], *, durable: bool = True) -> T:
        """Run ``fn`` in one transaction (:meth:`_transaction`) in a worker thread (a commit may
        wait for the disk). ``durable=False`` lets the backend skip the flush to disk: the next
        durable write makes it durable too (only a power loss between them loses it)."""

        def transaction(conn: ConnT) -> T:
            return self._transaction(conn, fn, durable)

        await anyio.lowlevel.checkpoint_if_cancelled()
        if self._conn is not None and self._writes_inline and self._lock.acquire(blocking=False):
            try:
                return self._run(transaction, patient=False)
            except WouldBlock:
                pass  # another writer holds the lock: wait for it in a thread
            finally:
                self._lock.release()
        return await self._call(transaction)

    def _connection(self) -> ConnT:
        """The open connection (connecting if needed). Call holding the lock."""
        if self._closed:
            raise UsageError(self._closed_message())
        if self._conn is not None and not self._usable(self._conn):
            # The connection broke (the server went away); the call that failed raised. Reconnect.
            self._conn = None
        if self._conn is None:
            self._conn = self._connect()
        return self._conn
