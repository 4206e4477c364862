"""Other processes' writes, seen through PostgreSQL ``LISTEN``: one listener thread per store.

Every write that appends events sends ``NOTIFY <channel>, '<run id>'`` in its transaction, so the
notification goes out exactly when the write commits. :class:`Wakeups` turns notifications into
rings of the store's in-process doorbell, for the runs someone waits on, in the event loop they
wait in (via ``anyio.from_thread`` and the loop's token). A :class:`Listener` holds its own
connection (``LISTEN`` needs a connection that is not busy with queries) in a daemon thread,
waits (``selectors``) on that socket and on a wake-up socket (so :meth:`Listener.stop` is
immediate), and hands each batch of notified run ids to ``deliver``.

A notification is only a hint to look again: the waiters re-read the store. If the connection
drops, the thread reconnects with a capped backoff and then delivers ``None`` ("anything may
have changed"), because notifications sent while it was away are lost. The store's fallback
poll bounds the rest, so a lost notification can delay a waiter but never hang it.
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import anyio.from_thread
import anyio.lowlevel

from interactions._errors import UsageError
from interactions.store._doorbell import ANY_RUN, Doorbell

if TYPE_CHECKING:
    import psycopg

__all__ = ["Listener", "Wakeups"]

HEALTH_CHECK = 30.0
"""Seconds of silence after which the listener pings its connection (so a dead one is noticed)."""
_MAX_BACKOFF = 5.0


class Listener:
    """``LISTEN`` on ``channel`` at ``dsn``; call ``deliver(run_ids)`` from the listener thread.

    ``deliver`` receives a set of run ids, or ``None`` after a reconnect; it must not raise.
    """

    def __init__(
        self, dsn: str, channel: str, deliver: Callable[[frozenset[str] | None], None]
    ) -> None:
        self._dsn = dsn
        self._channel = channel
        self._deliver = deliver
        self._stopping = threading.Event()
        self._wake_r: socket.socket | None = None
        self._wake_w: socket.socket | None = None
        self._conn: psycopg.Connection[tuple[object, ...]] | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Connect and ``LISTEN`` now (blocking), then listen in a thread.

        Every write committed after this returns is notified. Raises psycopg's errors when the
        server cannot be reached (nothing keeps running then).
        """
        self._conn = self._connect()
        self._wake_r, self._wake_w = socket.socketpair()
        name = f"pi-recipes listener {self._channel}"
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the thread and close its connection (blocking, at most ``timeout`` seconds)."""
        self._stopping.set()
        if self._thread is None:
            return
        with contextlib.suppress(OSError):  # the thread may have closed the sockets already
            assert self._wake_w is not None
            self._wake_w.send(b"x")
        self._thread.join(timeout)

    def _connect(self) -> psycopg.Connection[tuple[object, ...]]:
        import psycopg  # here, not at the top: psycopg is an optional dependency
        from psycopg import sql

        conn = psycopg.connect(self._dsn, autocommit=True, application_name="pi-recipes listener")
        try:
            conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self._channel)))
        except BaseException:
            conn.close()
            raise
        return conn

    def _run(self) -> None:
        import psycopg

        backoff = 0.1
        try:
            while not self._stopping.is_set():
                if self._conn is None:
                    try:
                        self._conn = self._connect()
                    except psycopg.Error:
                        self._stopping.wait(backoff)
                        backoff = min(backoff * 2, _MAX_BACKOFF)
                        continue
                    backoff = 0.1
                    self._deliver(None)  # what was notified while disconnected is lost
                try:
                    self._receive(self._conn)
                except (psycopg.Error, OSError):
                    self._conn.close()
                    self._conn = None
        finally:
            if self._conn is not None:
                self._conn.close()
            self._close_sockets()

    def _receive(self, conn: psycopg.Connection[tuple[object, ...]]) -> None:
        """Wait for traffic (or a wake-up), then deliver the notifications received."""
        assert self._wake_r is not None
        with selectors.DefaultSelector() as selector:  # not select(): fds may exceed 1024
            selector.register(conn.fileno(), selectors.EVENT_READ, "conn")
            selector.register(self._wake_r, selectors.EVENT_READ, "wake")
            ready = {key.data for key, _ in selector.select(HEALTH_CHECK)}
        if "wake" in ready:
            return
        if not ready:
            conn.execute("SELECT 1")  # raises if the connection died silently
        run_ids = frozenset(notify.payload for notify in conn.notifies(timeout=0))
        if run_ids:
            self._deliver(run_ids)

    def _close_sockets(self) -> None:
        for sock in (self._wake_r, self._wake_w):
            if sock is not None:
                sock.close()


class Wakeups:
    """Who waits on which run in this process, and the listener that wakes them.

    The store calls :meth:`start` (blocking, in a worker thread) before a wait's first look,
    holds :meth:`waiting` around the wait (in its event loop), and :meth:`stop` on close.
    """

    def __init__(self, bell: Doorbell) -> None:
        self._bell = bell
        self._lock = threading.Lock()
        self._listener: Listener | None = None
        self._stopped = False
        self._waiting: dict[str, int] = {}
        self._token: anyio.lowlevel.EventLoopToken | None = None

    def start(self, dsn: str, channel: str) -> None:
        """Listen on ``channel`` at ``dsn`` from now on (blocking, idempotent); ``UsageError``
        if stopped."""
        with self._lock:
            if self._stopped:
                raise UsageError("this PostgresStore is closed; open a new one")
            if self._listener is None:
                listener = Listener(dsn, channel, self._notified)
                listener.start()
                self._listener = listener

    def stop(self) -> None:
        """Stop listening for good (blocking, idempotent)."""
        with self._lock:
            self._stopped = True
            listener, self._listener = self._listener, None
        if listener is not None:
            listener.stop()

    @contextlib.contextmanager
    def waiting(self, run_id: str) -> Iterator[None]:
        """Mark ``run_id`` as waited on from the current event loop while inside."""
        with self._lock:
            self._token = anyio.lowlevel.current_token()
            self._waiting[run_id] = self._waiting.get(run_id, 0) + 1
        try:
            yield
        finally:
            with self._lock:
                self._waiting[run_id] -= 1
                if not self._waiting[run_id]:
                    del self._waiting[run_id]

    def _notified(self, run_ids: frozenset[str] | None) -> None:
        """In the listener thread: ring the waited-on runs among ``run_ids`` (``None``: all)."""
        with self._lock:
            waited = set(self._waiting) if run_ids is None else run_ids & self._waiting.keys()
            if ANY_RUN in self._waiting:  # a watcher of the whole store hears every write
                waited |= {ANY_RUN}
            wanted, token = sorted(waited), self._token
        if wanted and token is not None:
            # RuntimeError: an asyncio loop closing right now. Either way that loop's waits ended.
            with contextlib.suppress(anyio.RunFinishedError, RuntimeError):
                anyio.from_thread.run_sync(self._ring, wanted, token=token)

    def _ring(self, run_ids: list[str]) -> None:
        for run_id in run_ids:
            self._bell.ring(run_id)
