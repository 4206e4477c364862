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
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc

from hosts._kit._consumer import BACKOFF, LeasedConsumer
from hosts._kit._webhooks import (
    WebhookMessage,
    WebhookSecret,
    consumer_name,
    message_for,
    webhook_type,
)
from interactions import UnknownInteractionError, UsageError
from interactions.store import ConsumerStore, EventRecord, InteractionRecord, Store, utc_now

if TYPE_CHECKING:  # httpx is imported when a deliverer runs: a command that only answers never
    import httpx

__all__ = ["BACKOFF", "Webhook", "WebhookDeliverer", "delivering"]

logger = logging.getLogger("hosts")


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
    engine's). The lease and the cursor are a :class:`~hosts._kit._consumer.LeasedConsumer`'s.
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
        self.webhook = webhook
        self.name = consumer_name(webhook.url)
        """The consumer's name in the store."""
        self._consumer = LeasedConsumer(
            store, self.name, self._deliver, owner=owner, lease=lease, renew_every=renew_every,
            backoff=backoff, clock=clock,
        )  # fmt: skip
        self.owner = self._consumer.owner
        self.lease = lease
        self.renew_every = self._consumer.renew_every
        self.timeout = timeout
        self.backoff = backoff
        self._clock = clock
        self._client = client
        self._http: httpx.AsyncClient | None = None
        self.delivered = 0
        """Messages the receiver took (2xx) from this deliverer."""

    @property
    def cursor(self) -> int:
        """The consumer's cursor as this deliverer last stored it."""
        return self._consumer.cursor

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Deliver until cancelled. A consumer new to the store starts after the store's latest
        event (read before ``task_status`` is told it started): a new webhook is not sent the
        store's past. A store that fails is tried again after a delay (logged)."""
        async with self._connected() as http:
            self._http = http
            await self._consumer.run(task_status=task_status)

    @asynccontextmanager
    async def _connected(self) -> AsyncIterator[httpx.AsyncClient]:
        if self._client is not None:
            yield self._client
            return
        import httpx

        async with httpx.AsyncClient(timeout=self.timeout, follow_redirects=False) as client:
            yield client

    async def reached(self, cursor: int, *, within: float) -> bool:
        """Wait, at most ``within`` seconds, until this deliverer stored the consumer's cursor
        at ``cursor`` or past it (every event up to it delivered or passed over); return
        whether it did."""
        return await self._consumer.reached(cursor, within=within)

    async def _deliver(self, event: EventRecord) -> bool:
        message = None
        if webhook_type(event) is not None:
            message = message_for(event, await self._interaction(event))
        if message is None:
            return False
        assert self._http is not None, "run() opened the client"
        await self._post(self._http, message)
        self.delivered += 1
        return True

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
