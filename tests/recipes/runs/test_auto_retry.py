"""Planning automatic retries (pure): the provider's wait when it gave one, backoff otherwise,
capped; at most ``max`` retries; a schedule read back from any kind's checkpoint."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from recipes.runs.drivers import AUTO_RESUME_KEY, RetrySchedule, retry_schedule_of
from recipes.runs.planning import plan_retry, retry_delay

NOW = datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)


@pytest.mark.parametrize(
    ("attempt", "hint", "expected"),
    [(1, None, 30.0), (2, None, 60.0), (3, None, 120.0), (1, 0.0, 30.0), (1, -5.0, 30.0),
     (1, 2.5, 2.5), (4, 2.5, 2.5), (1, 10**9, 3600.0), (30, None, 3600.0)],
)  # fmt: skip
def test_the_delay_is_the_providers_else_backoff_capped(
    attempt: int, hint: float | None, expected: float
) -> None:
    schedule = RetrySchedule(max=50, backoff=30.0, max_delay=3600.0)
    assert retry_delay(schedule, attempt, hint) == expected


def test_plan_retry_counts_and_stops() -> None:
    schedule = RetrySchedule(max=2, backoff=1.0)
    first = plan_retry(schedule, retry_after=90.0, now=NOW)
    assert first is not None
    planned, event = first
    assert (planned.attempts, planned.due_at) == (1, NOW + timedelta(seconds=90))
    due = (NOW + timedelta(seconds=90)).isoformat()
    assert event == {"attempt": 1, "max": 2, "delay_ms": 90_000, "due_at": due,
                     "retry_after": 90.0}  # fmt: skip
    second = plan_retry(planned, retry_after=None, now=NOW)
    assert second is not None and second[0].attempts == 2 and second[1]["delay_ms"] == 2000
    assert plan_retry(second[0], retry_after=None, now=NOW) is None
    assert schedule.attempts == 0, "plans are new values"


def test_a_schedule_reads_back_from_a_checkpoint() -> None:
    planned = plan_retry(RetrySchedule(max=3), retry_after=5.0, now=NOW)
    assert planned is not None
    stored = {AUTO_RESUME_KEY: planned[0].model_dump(mode="json"), "other": 1}
    assert retry_schedule_of(stored) == planned[0]
    assert retry_schedule_of({}) is None
    assert retry_schedule_of({AUTO_RESUME_KEY: "3"}) is None
    assert retry_schedule_of({AUTO_RESUME_KEY: {"max": 0}}) is None


@pytest.mark.parametrize(
    "bad",
    [{"max": 0}, {"max": 1001}, {"max": 1, "backoff": 0}, {"max": 1, "max_delay": -1},
     {"max": 1, "surprise": True}, {"max": 1, "attempts": -1}],
)  # fmt: skip
def test_a_bad_schedule_is_refused(bad: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        RetrySchedule.model_validate(bad)
