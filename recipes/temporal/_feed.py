"""The store-wide feed of a Temporal engine: every run's new events, polled from visibility.

Temporal has no feed across workflows; the runs' search attributes do: each write sets
``PiUpdatedAt``. The feed lists the runs updated lately, asks each changed one for its events
past the last one seen, and yields them. A cursor is an event's time (microseconds, then its
sequence number modulo 1000), so a watcher that reconnects with the last cursor it saw starts
where it stopped; visibility is eventually consistent, so each poll looks
:data:`LOOKBACK` seconds back and a run's events are followed by their sequence numbers, never
twice and never skipped once the run was seen.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable
from datetime import UTC, datetime, timedelta

import anyio
from temporalio.client import Client

from interactions.store import EventRecord, utc_now
from recipes.temporal._address import EngineAddress
from recipes.temporal._run_store import UPDATED
from recipes.temporal._wire import Snapshot

__all__ = ["LOOKBACK", "feed_cursor", "follow", "time_cursor", "visible_runs"]

LOOKBACK = 30.0
"""Seconds each poll looks back for runs that changed (visibility lag and clock skew)."""

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICRO = timedelta(microseconds=1)


def time_cursor(at: datetime) -> int:
    """The cursor of the first event that could come at ``at`` or later."""
    return ((at - _EPOCH) // _MICRO) * 1000


def feed_cursor(event: EventRecord) -> int:
    """An event's cursor on the feed: its time, then its sequence number."""
    return time_cursor(event.at) + event.seq % 1000


def _cursor_time(cursor: int) -> datetime:
    return _EPOCH + (cursor // 1000) * _MICRO


async def visible_runs(
    client: Client, address: EngineAddress, extra: str = ""
) -> list[tuple[str, datetime, datetime | None]]:
    """The engine's runs on its task queue (``id``, start time, ``PiUpdatedAt``), as
    visibility lists them, maybe narrowed by ``extra`` (a query clause)."""
    query = f"TaskQueue = '{address.task_queue}' AND PiRunStatus IS NOT NULL" + extra
    found: list[tuple[str, datetime, datetime | None]] = []
    async for execution in client.list_workflows(query, page_size=1000):
        updated = execution.typed_search_attributes.get(UPDATED)
        found.append((execution.id, execution.start_time, updated))
    return found


async def follow(
    client: Client,
    address: EngineAddress,
    after: int,
    read: Callable[[str, int], Awaitable[Snapshot]],
    poll: float,
) -> AsyncGenerator[EventRecord, None]:
    """Every event with a cursor past ``after``, then every new one, until cancelled."""
    marks: dict[str, int] = {}
    seen: dict[str, datetime | None] = {}
    since = _cursor_time(after) - timedelta(seconds=LOOKBACK) if after else _EPOCH
    first = True
    while True:
        started = utc_now()
        clause = f" AND PiUpdatedAt >= '{since.isoformat().replace('+00:00', 'Z')}'"
        for run_id, _, updated in sorted(
            await visible_runs(client, address, clause), key=lambda r: r[2] or _EPOCH
        ):
            if run_id in seen and seen[run_id] == updated:
                continue
            snapshot = await read(run_id, marks.get(run_id, 0))
            seen[run_id] = updated
            for event in snapshot.events:
                marks[run_id] = event.seq
                cursor = feed_cursor(event)
                if cursor > after or not first:
                    yield event.model_copy(update={"cursor": cursor})
        first = False
        since = max(since, started - timedelta(seconds=LOOKBACK))
        await anyio.sleep(poll)
