"""Delivering webhooks from the store's own event log, the durable outbox: each webhook target
is a consumer with a cursor in the store (:class:`~interactions.store.ConsumerStore`), leased
to one server at a time.

A :class:`WebhookDeliverer` takes its consumer's lease, follows the store-wide feed from the
consumer's cursor, and posts each interaction event (:func:`~hosts._kit._webhooks.message_for`)
signed, one at a time, in feed order (so in order per run). An attempt that fails (refused,
timed out, any answer but 2xx) is tried again after a delay that doubles up to a bound, for as
long as it takes: an event is never skipped. The cursor moves past an event once the receiver
took it (2xx); events that post nothing are passed over, and the cursor moves past them when
the lease is renewed. So each event reaches the receiver at least once: exactly once while one
server holds the lease, and twice only when a server that posted it dies (or stalls past its
lease) before its cursor moved.

Several servers on one store each run a deliverer per target: one holds the lease, renewing it
every ``renew_every`` seconds; the others look every ``renew_every`` seconds whether it lapsed
and go on from the cursor when it did. The secret and the URL (which may carry a credential)
are never logged: a log line names the consumer (``webhook:HOST:HASH``).
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc

from hosts._kit._webhooks import (
    WebhookMessage,
    WebhookSecret,
    consumer_name,
    message_for,
    webhook_type,
)
from interactions import ConflictError, UnknownInteractionError, UsageError
from interactions.store import ConsumerStore, EventRecord, InteractionRecord, Store, utc_now

if TYPE_CHECKING:  # httpx is imported when a deliverer runs: a command that only answers never
    import httpx

__all__ = ["BACKOFF", "Webhook", "WebhookDeliverer", "delivering"]

logger = logging.getLogger("hosts")

BACKOFF = (1.0, 300.0)
"""Seconds before a failed post is tried again: the first delay, then doubled up to this bound."""


@dataclass(frozen=True)
class Webhook:
    """A webhook target: where its events are posted and the secret they are signed with."""

    url: str
    secret: WebhookSecret

    def __repr__(self) -> str:
        return f"Webhook({consumer_name(self.url)})"


class WebhookDeliverer:
    """Posts the interaction events of ``store`` to one ``webhook`` (see the module docstring).

    ``owner`` names this server in the consumer's lease (default: host, process and a random
    part); ``lease`` (seconds) is how long it holds the lease unrenewed, ``renew_every`` how
    often it renews it, or looks whether another's lapsed (default a third of the lease);
    ``timeout`` bounds each request, ``backoff`` is the first delay after a failed post and its
    bound. ``clock`` stamps the leases and the ``webhook-timestamp``. ``client`` (default: a new
    one) sends the requests. Raises ``UsageError`` for a store that keeps no consumers (an
    engine's).
    """

    def __init__(
        self,
        store: Store,
        webhook: Webhook,
        *,
        owner: str | None = None,
        lease: float = 30.0,
        renew_every: float | None = None,
        timeout: float = 10.0,
        backoff: tuple[float, float] = BACKOFF,
        clock: Callable[[], datetime] = utc_now,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        if not isinstance(store, ConsumerStore):
            raise UsageError(
                "webhooks are delivered from a store (SQLite or PostgreSQL), which keeps their "
                f"cursors; {type(store).__name__} keeps none"
            )
        self.store = store
        self._consumers: ConsumerStore = store
        self.webhook = webhook
        self.name = consumer_name(webhook.url)
        """The consumer's name in the store."""
        self.owner = owner or f"{socket.gethostname()}/{os.getpid()}/{secrets.token_hex(4)}"
        self.lease = lease
        self.renew_every = lease / 3 if renew_every is None else renew_every
        self.timeout = timeout
        self.backoff = backoff
        self._clock = clock
        self._client = client
        self.cursor = 0
        """The consumer's cursor as this deliverer last stored it."""
        self.delivered = 0
        """Messages the receiver took (2xx) from this deliverer."""
        self._seen = 0  # the last event handled (posted or passed over)
        self._lock = anyio.Lock()  # one lease or cursor write at a time
        self._moved = anyio.Event()

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Deliver until cancelled. A consumer new to the store starts after the store's latest
        event (read before ``task_status`` is told it started): a new webhook is not sent the
        store's past. A store that fails is tried again after a delay (logged)."""
        start = await self.store.latest_cursor()
        task_status.started()
        async with self._http() as http:
            delay = self.backoff[0]
            while True:
                try:
                    if await self._hold(http, start):
                        delay = self.backoff[0]
                    await anyio.sleep(self.renew_every)  # another server holds it: look again
                except Exception as exc:  # the store went away: the outbox outlives it
                    while isinstance(exc, ExceptionGroup) and len(exc.exceptions) == 1:
                        exc = exc.exceptions[0]
                    logger.warning("webhook %s: the store failed (%s); trying again in %g s",
                                   self.name, type(exc).__name__, delay)  # fmt: skip
                    await anyio.sleep(delay)
                    delay = min(delay * 2, self.backoff[1])

    @asynccontextmanager
    async def _http(self) -> AsyncIterator[httpx.AsyncClient]:
        if self._client is not None:
            yield self._client
            return
        import httpx

        async with httpx.AsyncClient(timeout=self.timeout, follow_redirects=False) as client:
            yield client

    async def _hold(self, http: httpx.AsyncClient, start: int) -> bool:
        """Hold the consumer's lease and deliver until it is lost; ``False`` when another
        server holds it, ``True`` when this one held it for a while."""
        async with self._lock:
            cursor = await self._consumers.lease_consumer(
                self.name, self.owner, lease=self.lease, start=start, now=self._clock()
            )
        if cursor is None:
            return False
        logger.info("webhook %s: delivering from event %d", self.name, cursor)
        self.cursor = self._seen = cursor
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(self._keep, group.cancel_scope)
                async with self.store.watch(after=cursor) as feed:
                    async for event in feed:
                        await self._deliver(http, event)
        except* ConflictError:  # another server took it over (our lease had lapsed)
            pass
        logger.info("webhook %s: another server delivers now", self.name)
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
        """Wait, at most ``within`` seconds, until this deliverer stored the consumer's cursor
        at ``cursor`` or past it (every event up to it delivered or passed over); return
        whether it did."""
        with anyio.move_on_after(within):
            while self.cursor < cursor:
                await self._moved.wait()
        return self.cursor >= cursor

    async def _advance(self, cursor: int) -> None:
        await self._consumers.advance_consumer(self.name, self.owner, cursor, now=self._clock())
        self.cursor = cursor
        self._moved.set()
        self._moved = anyio.Event()

    async def _deliver(self, http: httpx.AsyncClient, event: EventRecord) -> None:
        message = None
        if webhook_type(event) is not None:
            message = message_for(event, await self._interaction(event))
        if message is not None:
            await self._post(http, message)
            async with self._lock:
                await self._advance(event.cursor)
            self.delivered += 1
        self._seen = event.cursor

    async def _interaction(self, event: EventRecord) -> InteractionRecord | None:
        interaction_id = event.data.get("interaction_id")
        if not isinstance(interaction_id, str):
            return None
        try:
            return await self.store.get_interaction(event.run_id, interaction_id)
        except UnknownInteractionError:
            return None

    async def _post(self, http: httpx.AsyncClient, message: WebhookMessage) -> None:
        """Post ``message`` until the receiver takes it (2xx), signed anew on each attempt."""
        import httpx

        body = message.body()
        delay = self.backoff[0]
        while True:
            headers = self.webhook.secret.headers(message.id, self._clock(), body)
            try:
                answer = await http.post(
                    self.webhook.url, content=body, headers=headers, timeout=self.timeout
                )
                if answer.is_success:
                    return
                why = f"HTTP {answer.status_code}"
            except httpx.HTTPError as exc:
                why = type(exc).__name__
            logger.warning("webhook %s: %s (%s) not taken (%s); trying again in %g s",
                           self.name, message.id, message.type, why, delay)  # fmt: skip
            await anyio.sleep(delay)
            delay = min(delay * 2, self.backoff[1])


@asynccontextmanager
async def delivering(
    store: Store, webhooks: Sequence[Webhook], **options: Any
) -> AsyncIterator[list[WebhookDeliverer]]:
    """Run a :class:`WebhookDeliverer` per webhook (``options``: its keywords) while the block
    runs; they stop when it ends. Raises ``UsageError`` for a store that keeps no consumers,
    before the block runs."""
    deliverers = [WebhookDeliverer(store, hook, **options) for hook in webhooks]
    async with anyio.create_task_group() as group:
        for deliverer in deliverers:
            await group.start(deliverer.run)
        try:
            yield deliverers
        finally:
            group.cancel_scope.cancel()
