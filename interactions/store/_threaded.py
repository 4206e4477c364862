"""One sync database connection, driven from the event loop or worker threads: what the SQL
stores stand on.

:class:`ThreadedStore` owns the connection and the ``threading.Lock`` that guards it. It runs a
call on the event loop's thread when the lock is free and either that cannot block (the backend
says its reads, or writes, need not wait for another process: SQLite) or the backend awaits its
waits for the server on the loop (PostgreSQL with ``greenlet``, ``_evented``); else in a worker
thread (``anyio.to_thread.run_sync``). Every write runs in one transaction. A backend subclass
says only how to connect, how to run a transaction, how to wait for another writer's lock, how
to type a driver's failure, what else to stop on close, and how to get ready to wait. What runs
on the connection is :class:`~._sql_store.SqlStore`'s."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Generic, Protocol, Self, TypeVar

import anyio.lowlevel
import anyio.to_thread

from interactions._errors import UsageError
from interactions.store._base import StoreBase

__all__ = ["Closable", "ConnT", "ThreadedStore", "WouldBlock"]


class WouldBlock(Exception):
    """A call made without waiting met another writer's lock: make it again, patiently."""


T = TypeVar("T")


class Closable(Protocol):
    """What the base needs of a connection itself: a way to close it."""

    def close(self) -> None: ...


ConnT = TypeVar("ConnT", bound=Closable)


class ThreadedStore(StoreBase, Generic[ConnT]):
    """A store over one connection of type ``ConnT`` (see the module docstring).

    Subclasses implement :meth:`_connect` and :meth:`_transaction`, and may override
    :meth:`_usable`, :meth:`_on_close`, :meth:`_closed_message` and :meth:`_waiting`.
    """

    def __init__(self, *, poll_interval: float, clock: Callable[[], datetime]) -> None:
        super().__init__(clock=clock, poll_interval=poll_interval)
        self._lock = threading.Lock()
        self._conn: ConnT | None = None
        self._closed = False

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

    _loop_driven = False
    """Whether calls run on the event loop's thread with their waits for the server awaited
    there (:meth:`_drive_on_loop`), rather than in a worker thread."""

    async def _drive_on_loop(self, fn: Callable[[], T]) -> T:
        """``fn()`` on the event loop's thread, its waits for the server awaited (see
        :attr:`_loop_driven`); it runs to its end even if the caller is cancelled."""
        raise NotImplementedError

    _reads_inline = False
    """Whether reads may run on the event loop's thread (a backend whose reads never wait)."""

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

    # -- plumbing -----------------------------------------------------------------------------

    async def _call(self, fn: Callable[[ConnT], T]) -> T:
        """Run ``fn(connection)`` holding the connection lock, in a worker thread."""

        def locked() -> T:
            with self._lock:
                return self._run(fn, patient=True)

        return await anyio.to_thread.run_sync(locked)

    _writes_inline = False
    """Whether a write may run on the event loop's thread when the lock is free and the
    backend need not wait for another writer (it then raises :class:`WouldBlock`)."""

    async def _read(self, fn: Callable[[ConnT], T]) -> T:
        """Run the read ``fn(connection)`` on the event loop's thread when that cannot block
        (the backend reads without waiting, or its waits can be awaited, and the lock is free),
        else as :meth:`_call` does."""
        await anyio.lowlevel.checkpoint_if_cancelled()
        return await self._on_loop(fn, inline=self._reads_inline)

    async def _on_loop(self, fn: Callable[[ConnT], T], *, inline: bool) -> T:
        """``fn(connection)`` on the event loop's thread if the lock is free and either
        ``inline`` (the backend raises :class:`WouldBlock` rather than wait) or the backend
        drives its connection from the loop (:attr:`_loop_driven`); else in a worker thread."""
        conn = self._conn
        here = inline or self._loop_driven
        if conn is not None and here and self._lock.acquire(blocking=False):
            try:
                if inline:
                    return self._run(fn, patient=False)
                if self._usable(conn):
                    return await self._drive_on_loop(lambda: self._run(fn, patient=True))
            except WouldBlock:
                pass  # another process holds what the call needs: wait for it in a thread
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
        return await self._on_loop(transaction, inline=self._writes_inline)

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
