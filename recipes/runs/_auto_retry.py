"""Automatic retries of ``failed_resumable`` runs: the schedule a run carries, and the next retry.

A run opts in when it starts (``pi-recipes graph run --auto-resume N``): its checkpoint keeps a
:class:`RetrySchedule` under the top-level key ``auto_resume`` (as every kind's checkpoint keeps
``expiry_policy``). When a leg ends ``failed_resumable``, the run's driver plans the next retry
with :func:`plan_retry` and writes it in the same transaction as the status, with a
``run_retry_scheduled`` event; ``Runner.retry_due`` (a sweeper, or the command that started the
run) continues each run once its retry is due. A run is retried at most ``max`` times; a
retry is due when the provider said its window reopens (``Retry-After`` or a reset header),
and, when it said nothing, after waits that double at each retry (backoff).

Pure: no store, no clock of its own (``now`` is given).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = [
    "AUTO_RESUME_KEY",
    "RETRY_SCHEDULED",
    "RETRY_SKIPPED",
    "RetrySchedule",
    "plan_retry",
    "retry_schedule_of",
]

AUTO_RESUME_KEY = "auto_resume"
"""The top-level checkpoint key a run's :class:`RetrySchedule` is kept under."""
RETRY_SCHEDULED = "run_retry_scheduled"
"""The event a driver writes with a planned retry: ``attempt``, ``max``, ``delay_ms``,
``due_at``, ``reason`` (the failure's code), ``retry_after`` (what the provider asked)."""
RETRY_SKIPPED = "run_retry_skipped"
"""The event a driver writes when a resumable failure gets no retry: ``reason``
(``budget_spent``), ``attempts``, ``max``."""


class RetrySchedule(BaseModel):
    """How often a run may be retried on its own, and when the next retry is due.

    ``max``: retries allowed in all; ``attempts``: retries planned so far; ``due_at``: when the
    next one is due (``None``: none is planned). ``backoff``: the wait before the first retry
    when the provider gave no time (doubling at each retry); ``max_delay`` caps any wait
    (no silent infinity), the provider's included.
    """

    model_config = ConfigDict(extra="forbid")

    max: int = Field(ge=1, le=1000)
    attempts: int = Field(default=0, ge=0)
    due_at: datetime | None = None
    backoff: float = Field(default=30.0, gt=0, le=86_400)
    max_delay: float = Field(default=86_400.0, gt=0, le=7 * 86_400)


def retry_delay(schedule: RetrySchedule, attempt: int, retry_after: float | None) -> float:
    """The wait before retry ``attempt`` (1-based): what the provider asked for when it asked
    for a positive wait, else the backoff (``backoff * 2**(attempt-1)``); never longer than
    ``max_delay``."""
    if retry_after is not None and retry_after > 0:
        return min(schedule.max_delay, retry_after)
    return min(schedule.max_delay, schedule.backoff * 2.0 ** min(attempt - 1, 40))


def plan_retry(
    schedule: RetrySchedule, *, retry_after: float | None, now: datetime
) -> tuple[RetrySchedule, dict[str, Any]] | None:
    """The schedule with the next retry planned, and the ``run_retry_scheduled`` event's data;
    ``None`` when every retry has been spent."""
    if schedule.attempts >= schedule.max:
        return None
    attempt = schedule.attempts + 1
    delay = retry_delay(schedule, attempt, retry_after)
    due = now + timedelta(seconds=delay)
    planned = schedule.model_copy(update={"attempts": attempt, "due_at": due})
    event = {
        "attempt": attempt,
        "max": schedule.max,
        "delay_ms": round(delay * 1000),
        "due_at": due.isoformat(),
        "retry_after": retry_after,
    }
    return planned, event


def retry_schedule_of(checkpoint: Mapping[str, Any]) -> RetrySchedule | None:
    """A run's retry schedule, from its checkpoint's ``auto_resume`` key (``None``: the run did
    not opt in, or the value is unreadable)."""
    data = checkpoint.get(AUTO_RESUME_KEY)
    if not isinstance(data, Mapping):
        return None
    try:
        return RetrySchedule.model_validate(data)
    except ValidationError:
        return None
