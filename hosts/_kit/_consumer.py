"""A consumer of the store's feed with a durable, leased cursor: the outbox of a host that tells
people or systems what happened (a mail sent per question, say), kept in the store itself.

A :class:`LeasedConsumer` takes its consumer's lease (:class:`~interactions.store.ConsumerStore`),
follows the store-wide feed from the consumer's cursor and hands each event to ``handle``, one
at a time, in feed order. ``handle`` returns once the event is dealt with: ``True`` when it did
something for it (the cursor is stored past it at once), ``False`` when it passed it over (the
cursor moves past such events when the lease is renewed). ``handle`` retries what fails on its
own side; should it raise, the consumer logs it and takes the event again after a delay. So
each event is handled at least once: exactly once while one server holds the lease, and twice
only when a server that handled it dies (or stalls past its lease) before its cursor moved.

Several servers on one store each run a consumer of the same name: one holds the lease,
renewing it every ``renew_every`` seconds; the others look every ``renew_every`` seconds
whether it lapsed and go on from the cursor when it did. The webhooks'
:class:`~hosts._kit.WebhookDeliverer` and the email host's outbox run on it.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
from collections.abc import Awaitable, Callable
from datetime import datetime

import anyio
import anyio.abc

from interactions import ConflictError, UsageError
from interactions.store import ConsumerStore, EventRecord, Store, utc_now

__all__ = ["BACKOFF", "Handle", "LeasedConsumer", "new_owner"]

logger = logging.getLogger("hosts")

BACKOFF = (1.0, 300.0)
"""Seconds before a failed attempt is tried again: the first delay, then doubled up to this
bound."""

Handle = Callable[[EventRecord], Awaitable[bool]]
"""Deals with one event; ``True`` when it did something for it, ``False`` when it passed it
over."""


def new_owner() -> str:
    """A name for this server in a consumer's lease: host, process and a random part."""
    return f"{socket.gethostname()}/{os.getpid()}/{secrets.token_hex(4)}"


class LeasedConsumer:
    """The consumer ``name`` of ``store``, handing each event after its cursor to ``handle``
    (see the module docstring).

    ``owner`` names this server in the lease (default :func:`new_owner`); ``lease`` (seconds)
    is how long it holds the lease unrenewed, ``renew_every`` how often it renews it or looks
    whether another's lapsed (default a third of the lease); ``backoff`` is the first delay
    after the store (or ``handle``) failed and its bound; ``clock`` stamps the leases. Raises
    ``UsageError`` for a store that keeps no consumers (an engine's).
    """

    def __init__(
        self,
        store: Store,
        name: str,
        handle: Handle,
        *,
        owner: str | None = None,
        lease: float = 30.0,
        renew_every: float | None = None,
        backoff: tuple[float, float] = BACKOFF,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        if not isinstance(store, ConsumerStore):
            raise UsageError(
                f"{name} follows a store (SQLite or PostgreSQL), which keeps its cursor; "
                f"{type(store).__name__} keeps none"
            )
        self.store = store
        self._consumers: ConsumerStore = store
        self.name = name
        self._handle = handle
        self.owner = owner or new_owner()
        self.lease = lease
        self.renew_every = lease / 3 if renew_every is None else renew_every
        self.backoff = backoff
        self._clock = clock
        self.cursor = 0
        """The consumer's cursor as this server last stored it."""
        self._seen = 0  # the last event handled (acted on or passed over)
        self._lock = anyio.Lock()  # one lease or cursor write at a time
        self._moved = anyio.Event()

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Consume until cancelled. A consumer new to the store starts after the store's latest
        event (read before ``task_status`` is told it started): it is not handed the store's
        past. A store that fails (or a ``handle`` that raises: it reads the store) is tried again
        after a delay (logged)."""
        start = await self.store.latest_cursor()
        task_status.started()
        delay = self.backoff[0]
        while True:
            try:
                if await self._hold(start):
                    delay = self.backoff[0]
                await anyio.sleep(self.renew_every)  # another server holds it: look again
            except Exception as exc:  # the store went away: the outbox outlives it
                while isinstance(exc, ExceptionGroup) and len(exc.exceptions) == 1:
                    exc = exc.exceptions[0]
                logger.warning("%s: the store failed (%s); trying again in %g s",
                               self.name, type(exc).__name__, delay)  # fmt: skip
                await anyio.sleep(delay)
                delay = min(delay * 2, self.backoff[1])

    async def _hold(self, start: int) -> bool:
        """Hold the lease and consume until it is lost; ``False`` when another server holds
        it, ``True`` when this one held it for a while."""
        async with self._lock:
            cursor = await self._consumers.lease_consumer(
                self.name, self.owner, lease=self.lease, start=start, now=self._clock()
            )
        if cursor is None:
            return False
        logger.info("%s: consuming from event %d", self.name, cursor)
        self.cursor = self._seen = cursor
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(self._keep, group.cancel_scope)
                async with self.store.watch(after=cursor) as feed:
                    async for event in feed:
                        if await self._handle(event):
                            async with self._lock:
                                await self._advance(event.cursor)
                        self._seen = event.cursor
        except* ConflictError:  # another server took it over (our lease had lapsed)
            pass
        logger.info("%s: another server consumes now", self.name)
        return True

    async def _keep(self, scope: anyio.CancelScope) -> None:
        """Renew the lease every ``renew_every`` seconds and store the cursor of the events
        passed over; cancel ``scope`` when the lease is lost."""
        while True:
            await anyio.sleep(self.renew_every)
            async with self._lock:
                cursor = await self._consumers.lease_consumer(
                    self.name, self.owner, lease=self.lease, now=self._clock()
                )
                if cursor != self.cursor:  # taken over (and maybe moved on) meanwhile
                    scope.cancel()
                    return
                if self._seen > self.cursor:
                    await self._advance(self._seen)

    async def reached(self, cursor: int, *, within: float) -> bool:
        """Wait, at most ``within`` seconds, until this server stored the consumer's cursor at
        ``cursor`` or past it (every event up to it dealt with); return whether it did."""
        with anyio.move_on_after(within):
            while self.cursor < cursor:
                await self._moved.wait()
        return self.cursor >= cursor

    async def _advance(self, cursor: int) -> None:
        await self._consumers.advance_consumer(self.name, self.owner, cursor, now=self._clock())
        self.cursor = cursor
        self._moved.set()
        self._moved = anyio.Event()
