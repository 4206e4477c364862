"""Feed cursors: ordered by time, then by an event's number; a time's cursor precedes its
events'."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from interactions.store import EventRecord
from recipes.temporal._feed import feed_cursor, time_cursor


def event(at: datetime, seq: int) -> EventRecord:
    return EventRecord(run_id="r", seq=seq, type="t", data={}, at=at)


def test_cursors_order_events_by_time_then_number() -> None:
    at = datetime(2026, 11, 1, 12, 0, 0, 123456, tzinfo=UTC)
    later = at + timedelta(microseconds=1)
    cursors = [feed_cursor(event(at, 1)), feed_cursor(event(at, 2)), feed_cursor(event(later, 3))]
    assert cursors == sorted(cursors) and len(set(cursors)) == 3
    assert time_cursor(at) < feed_cursor(event(at, 1)) < time_cursor(later)
    assert time_cursor(at) % 1000 == 0 and time_cursor(at) // 1000 % 1_000_000 == 123456
