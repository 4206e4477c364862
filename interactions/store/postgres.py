"""The PostgreSQL :class:`~interactions.store.Store`: many processes, many machines.

Concurrency: every write is one transaction that first locks the run's row
(``SELECT ... FOR UPDATE``), then reads what it decides on, asks :mod:`._rules`, and writes. So
the writers of one run (tasks, threads, processes, machines) serialize: a compare-and-set on the
version or an answer sees the winner's commit and refuses with ``ConflictError``, and event
``seq`` stays gapless. The ``UPDATE``\\s carry their own guards (``version = %s``,
``answer_status IS NULL``) as a second line. A new run's id is claimed by
``INSERT ... ON CONFLICT DO NOTHING``. ``lock_timeout`` bounds any wait for a lock. Statements
are pipelined: an update waits for the server three times (the locked run with what it reads;
the guards; the commit, which the events travel with), and holds the ``feed`` row, which hands
out the store-wide cursors in commit order, for little more than its commit.

One wait, mostly: the store remembers the runs it last wrote, or last read whole with all their
interactions, as answering does (``_last_written``), and an update of a run at the version it
remembers is decided on that, without reading first. Its guards are
then strict: they fail inside the server (``_postgres_rows._strict``), which aborts the
transaction before anything of it is applied, so the whole update, commit included, is one
wait for the server. A guard that fails (another process moved the run, or answered one of
its interactions) costs that one refused transaction: the update is decided again on what the
store holds, as above, and refused or written as it would have been. Creating a run is one
wait too.

On the event loop, not in threads: psycopg's ``AsyncConnection`` runs on asyncio only, and the
store must serve trio too. So each store owns one sync connection whose waits for the server are
awaited on the event loop (``_evented``: the statements stay sync code, run in a greenlet that
the loop resumes when the socket is ready, on asyncio and trio alike), guarded by a
``threading.Lock``; a call that finds the connection busy waits for it in a worker thread
(``anyio.to_thread.run_sync``), as every call does without ``greenlet``. One connection rather
than a pool: a store belongs to one event loop, the writers of one run serialize on its row lock
anyway, the server sees a predictable two connections per store (queries, and the listener once
someone waits), and ``close()`` stays simple. Processes and machines scale out with a store each.

Waiting: a write through this store rings the in-process doorbell at once; other processes'
writes are seen through ``LISTEN``/``NOTIFY`` (see :mod:`._postgres_listen`): the ``NOTIFY`` is
sent in the writing transaction, with the run id as payload. A fallback poll every
``poll_interval`` seconds bounds the cost of a lost notification.

psycopg is the optional ``postgres`` extra: importing this module does not need it; opening a
store does.
"""

from __future__ import annotations

import math
import re
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Self, TypeVar

import anyio.to_thread

from interactions._errors import StoreUnavailableError, UsageError
from interactions.store._checks import MAX_LOCK_WAIT, check_interval, check_lock_wait
from interactions.store._postgres_listen import Wakeups
from interactions.store._postgres_rows import (
    CONSUMERS,
    DECISIONS,
    REMINDERS,
    ROWS,
    VOTES,
)
from interactions.store._records import utc_now
from interactions.store._rows import Stale
from interactions.store._sql_store import SqlStore

if TYPE_CHECKING:
    from interactions.store._postgres_schema import Conn

__all__ = ["PostgresStore", "open_postgres_store", "redact_dsn"]

T = TypeVar("T")


class PostgresStore(SqlStore["Conn"]):
    """A :class:`~interactions.store.Store` in a PostgreSQL database (libpq ``dsn``).

    The tables live in ``schema`` (created if missing), else in the connection's
    ``current_schema()``. The database is connected and migrated on first use, or by
    :meth:`open` / ``async with`` (which surface a :class:`~interactions.store.StoreSchemaError`
    early). ``lock_timeout`` (seconds) bounds a wait for another writer's lock;
    ``poll_interval`` (seconds) is how often a waiter re-reads in case a notification was lost;
    ``connect_timeout`` (seconds, at least 2: libpq's floor) bounds connecting, unless the DSN
    or ``PGCONNECT_TIMEOUT`` sets libpq's ``connect_timeout``; ``clock`` supplies "now" when a
    method is not given ``now``; an option out of range is a ``UsageError``. The DSN (it may
    hold a password) is never put in messages.

    No call waits for ever on a server that stopped answering: connecting is bounded by
    ``connect_timeout``, and a connection whose server went silent (its machine down, the
    network cut) is given up about 30 s on (TCP keepalives and ``tcp_user_timeout``, see
    ``_postgres_schema.TCP_BOUNDS``; the DSN's own settings of these win). The call fails with
    ``StoreUnavailableError`` (reason ``unreachable``) and the next one connects again.
    """

    def __init__(
        self,
        dsn: str,
        *,
        schema: str | None = None,
        lock_timeout: float = 10.0,
        poll_interval: float = 5.0,
        connect_timeout: float = 10.0,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        check_lock_wait("lock_timeout", lock_timeout)
        check_interval("poll_interval", poll_interval)
        _check_connect_timeout(connect_timeout)
        super().__init__(
            ROWS, DECISIONS, VOTES, CONSUMERS, REMINDERS, poll_interval=poll_interval, clock=clock
        )
        self._dsn = dsn
        self._conninfo = ""  # the DSN with the bounds on waiting for the server (on connecting)
        self._schema = schema
        self._lock_timeout = lock_timeout
        self._connect_timeout = max(2, math.ceil(connect_timeout))  # whole seconds, libpq's floor
        self._wakeups = Wakeups(self._bell)

    async def open(self) -> Self:
        """Connect and migrate now (idempotent); return the store."""
        return await super().open()

    def _connect(self) -> Conn:
        try:
            from psycopg import ProgrammingError

            from interactions.store._postgres_schema import (
                LOOP_DRIVEN,
                bounded_conninfo,
                channel_name,
                connect,
            )
        except ImportError as exc:
            raise UsageError(
                f"PostgresStore needs psycopg 3 ({exc}): pip install 'pi-recipes[postgres]'"
            ) from exc
        try:  # libpq's own parse, before anything is sent
            self._conninfo = bounded_conninfo(self._dsn, self._connect_timeout)
        except ProgrammingError as exc:
            raise UsageError(
                f"{redact_dsn(self._dsn)} is not a valid PostgreSQL URL or key=value DSN "
                f"({redact_dsn(str(exc).strip())})"
            ) from None
        conn, schema = connect(self._conninfo, self._schema, lock_timeout=self._lock_timeout)
        self._channel = channel_name(schema)
        self._loop_driven = LOOP_DRIVEN
        return conn

    async def _drive_on_loop(self, fn: Callable[[], T]) -> T:
        from interactions.store._evented import run_evented

        return await run_evented(fn)

    def _translate(self, exc: Exception) -> Exception | None:
        try:
            import psycopg  # loaded by the connection that failed, if there was one
        except ImportError:
            return None

        if isinstance(exc, psycopg.errors.DivisionByZero):
            return Stale()  # a strict guard failed (see _postgres_rows._strict)
        where = redact_dsn(self._dsn)
        if isinstance(exc, psycopg.errors.LockNotAvailable):
            return StoreUnavailableError(
                f"the PostgreSQL store at {where} kept a lock past lock_timeout; try again",
                reason="busy",
            )
        if isinstance(exc, psycopg.errors.ReadOnlySqlTransaction):
            return StoreUnavailableError(
                f"the PostgreSQL store at {where} is read-only here: {exc.diag.message_primary}",
                reason="read_only",
            )
        if isinstance(exc, psycopg.OperationalError):
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            return StoreUnavailableError(
                f"cannot reach the PostgreSQL store at {where}: {redact_dsn(first)}",
                reason="unreachable",
            )
        return None

    def _usable(self, conn: Conn) -> bool:
        return not (conn.closed or conn.broken)

    def _transaction(self, conn: Conn, fn: Callable[[Conn], T], durable: bool = True) -> T:
        """Run ``fn`` in one transaction: commit, or roll back on any error.

        Statements go out pipelined: the client waits for the server only where ``fn`` reads a
        result, and once for the commit. ``BEGIN`` travels with the first statements and
        ``COMMIT`` with the last ones (psycopg's ``transaction()`` in a pipeline would wait for
        its ``BEGIN``, and twice more at its end). A commit that need not be durable does not
        wait for the server's disk (``synchronous_commit = off``, one more statement in the
        same trip): the next durable commit makes it durable too.

        The session plans a prepared statement once (``plan_cache_mode``, see
        ``_postgres_schema.connect``), so a write costs no statement of its own for it.
        """
        refused: BaseException | None = None
        try:
            with conn.pipeline():
                try:
                    conn.execute("BEGIN", prepare=False)
                    if not durable:
                        conn.execute("SET LOCAL synchronous_commit = off", prepare=False)
                    result = fn(conn)
                    conn.execute("COMMIT", prepare=False)
                except BaseException as exc:  # raised once the pipeline is left (see below)
                    refused = exc
            # Leaving the pipeline sends a sync and reads every result left: the commit's too.
        except BaseException:
            if refused is None:
                _roll_back(conn)
                raise
        if refused is not None:
            # ``fn`` refused (a conflict, an unknown run) or a statement failed: what was sent
            # is rolled back. It is raised out here, not through the pipeline, which would log
            # the statements left unread as an error it ignored.
            _roll_back(conn)
            raise refused
        return result

    def _on_close(self) -> None:
        self._wakeups.stop()

    @asynccontextmanager
    async def _waiting(self, run_id: str) -> AsyncIterator[None]:
        # LISTEN before the first look, so nothing committed after that look goes unnoticed.
        await anyio.to_thread.run_sync(self._start_listener)
        with self._wakeups.waiting(run_id):
            yield

    def _start_listener(self) -> None:
        """Connect (so the channel is known), then make sure the listener runs; a failure to
        connect either is typed as any call's."""
        with self._lock:
            self._run(lambda conn: None, patient=True)
        try:
            self._wakeups.start(self._conninfo, self._channel)
        except Exception as exc:
            typed = self._translate(exc)
            if typed is None:
                raise
            raise typed from None


def _check_connect_timeout(seconds: float) -> None:
    if not (isinstance(seconds, int | float) and 0 < seconds <= MAX_LOCK_WAIT):
        raise UsageError(
            f"connect_timeout must be a finite number of seconds above 0, got {seconds!r}: "
            "connecting to a server that does not answer needs a bound"
        )


def _roll_back(conn: Conn) -> None:
    """End the transaction a failed write left open (a failed statement, a refusal, a failed
    ``COMMIT`` leave it open or not). A connection that cannot roll back is closed: the next
    call opens a new one."""
    from psycopg.pq import TransactionStatus  # loaded: the connection exists

    if conn.closed or conn.info.transaction_status == TransactionStatus.IDLE:
        return
    try:
        conn.rollback()
    except Exception:
        conn.close()


_URL_PASSWORD = re.compile(r"(//[^/?#@\s:]*:)\S*@")
"""A URL's ``//user:password@`` (up to the last ``@``: a password may hold one, unencoded)."""
_KEY_PASSWORD = re.compile(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'?|[^\s&]+)", re.IGNORECASE)
"""A key=value DSN's ``password=secret`` or ``password='a secret'``, a URL's ``?password=``."""


def redact_dsn(text: str) -> str:
    """``text`` (a DSN, or a message quoting one, even malformed) with every password in it
    replaced by ``***``: how a PostgreSQL URL is printed, logged or shown."""
    return _KEY_PASSWORD.sub(r"\1***", _URL_PASSWORD.sub(r"\1***@", text))


async def open_postgres_store(
    dsn: str,
    *,
    schema: str | None = None,
    lock_timeout: float = 10.0,
    poll_interval: float = 5.0,
    connect_timeout: float = 10.0,
    clock: Callable[[], datetime] = utc_now,
) -> PostgresStore:
    """Connect to ``dsn``, create or migrate the store's tables, and return the store.

    The options are :class:`PostgresStore`'s. Raises :class:`~interactions.store.StoreSchemaError`
    for a schema this version cannot use, and psycopg's ``OperationalError`` when the server
    cannot be reached. Close the store (or use ``async with``) when done.
    """
    store = PostgresStore(
        dsn,
        schema=schema,
        lock_timeout=lock_timeout,
        poll_interval=poll_interval,
        connect_timeout=connect_timeout,
        clock=clock,
    )
    return await store.open()
