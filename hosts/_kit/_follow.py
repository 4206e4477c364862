"""Following the store's feed for a host: every event of every run, in commit order, however
it was written (this process, the CLI, another server), through the store's failures.

A host follows one feed (:class:`StoreFeed`) and hands each event to its own ``handle``: the
web host turns it into frames for its clients, Slack into cards and replies. The follower
keeps the cursor of the last event handled; when the feed fails (a database gone away, a
restart) it follows again from there after a delay that doubles up to a bound, so a host that
reconnects misses nothing and shows nothing twice. Reading what an event means is
:class:`~hosts._kit.Reader`'s; rendering it is the host's.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import anyio
import anyio.abc

from interactions.errors import StoreUnavailableError
from interactions.store import EventRecord, Store

__all__ = ["RETRY", "Handle", "StoreFeed"]

logger = logging.getLogger("hosts")

RETRY = (0.2, 5.0)
"""Seconds before following a failed feed again: the first delay, then doubled up to this
bound (back to the first once an event is handled)."""

Handle = Callable[[EventRecord], Awaitable[None]]
"""What a host does with one event of the feed."""


class StoreFeed:
    """Follows ``store.watch`` and hands each event to ``handle``, one at a time, in commit
    order (see the module docstring). ``retry`` is the first delay and its bound."""

    def __init__(self, store: Store, handle: Handle, *, retry: tuple[float, float] = RETRY) -> None:
        self.store = store
        self.retry = retry
        self._handle = handle
        self.cursor = 0
        """The cursor of the last event handled (where the feed follows again from)."""
        self._moved = anyio.Event()
        self._scope: anyio.CancelScope | None = None
        self._stopped = False

    async def run(
        self,
        *,
        after: int | None = None,
        task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Follow the feed from the event after ``after`` (``None``: from what comes next,
        the store's latest cursor read before ``task_status`` is told it started) until
        :meth:`stop` (then return) or a cancel.

        A feed that fails or ends is followed again from :attr:`cursor` after a delay (logged:
        a store away for good is retried for as long as the host runs). A ``handle`` that
        raises ``StoreUnavailableError`` has its event handed again when the feed follows
        again; one that raises anything else has it logged and skipped, so the feed never
        sticks on one event. Raises what reading the store's latest cursor raises.
        """
        self.cursor = await self.store.latest_cursor() if after is None else after
        task_status.started()
        with anyio.CancelScope() as self._scope:
            if self._stopped:
                self._scope.cancel()
            await self._follow()
        self._scope = None

    def stop(self) -> None:
        """Stop following: :meth:`run` returns (at once, or as soon as it starts)."""
        self._stopped = True
        if self._scope is not None:
            self._scope.cancel()

    async def reached(self, cursor: int, *, within: float) -> bool:
        """Wait, at most ``within`` seconds, until the event at ``cursor`` (and every one
        before it) was handled; return whether it was."""
        with anyio.move_on_after(within):
            while self.cursor < cursor:
                await self._moved.wait()
        return self.cursor >= cursor

    async def _follow(self) -> None:
        delay = self.retry[0]
        while True:
            try:
                async with self.store.watch(after=self.cursor) as feed:
                    async for event in feed:
                        await self._hand(event)
                        delay = self.retry[0]
                why = "it ended"
            except Exception as exc:  # the database went away: the feed outlives it
                why = f"{type(exc).__name__}: {exc}"
            logger.warning("the store feed failed (%s); following it again after event %d in "
                           "%g s", why, self.cursor, delay)  # fmt: skip
            await anyio.sleep(delay)
            delay = min(delay * 2, self.retry[1])

    async def _hand(self, event: EventRecord) -> None:
        """Hand ``event`` over and move the cursor past it (not when the store is away)."""
        try:
            await self._handle(event)
        except StoreUnavailableError:
            raise  # the store is away for now: handed again when the feed follows again
        except Exception:
            logger.exception("skipped store event %s of %s", event.type, event.run_id)
        self.cursor = event.cursor
        self._moved.set()
        self._moved = anyio.Event()
