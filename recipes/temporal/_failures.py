"""How a failed activity is retried: one table for the model failure classes, two policies.

A model call is an activity. Its provider has already retried what it retries itself (short
waits, a ``Retry-After`` up to a minute); what reaches Temporal is a ``ModelError`` with its
class, and :data:`MODEL_FAILURES` says what Temporal does next:

- ``usage_window``: wait for the window, on a durable timer (the provider's ``retry_after``,
  else :data:`DEFAULT_WINDOW`; a window longer than :data:`WINDOW_CAP` is not waited for);
- ``unavailable``, ``transient_exhausted``: try again with backoff;
- ``auth``, ``unclassified``: never retried (a key or a fix is needed).

Anything else a model raises (a custom model's bug, a scripted model out of turns) is never
retried either: another attempt meets the same, and the other engines fail the run at once;
it carries its class, message and fields, so the run records it as they do.

When the attempts of :data:`MODEL_RETRY` run out, or the class is not retried, the leg ends
the way it ends on the other engines: ``failed_resumable`` for ``usage_window``,
``unavailable`` and ``transient_exhausted``, ``failed`` otherwise, and ``runs retry``
continues it. A tool body is an activity too; what it raises is a result the model reads, never
retried; only a lost worker (no heartbeat, a crash) makes Temporal run it again
(:data:`TOOL_RETRY`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Literal

from temporalio.common import RetryPolicy
from temporalio.exceptions import ApplicationError

from recipes.models import ModelError
from recipes.temporal._errors import error_data

__all__ = [
    "DEFAULT_WINDOW",
    "MODEL_FAILURES",
    "MODEL_RETRY",
    "TOOL_RETRY",
    "WINDOW_CAP",
    "FailurePolicy",
    "model_failure",
]

DEFAULT_WINDOW = 60.0
"""Seconds waited for a usage window whose end the provider did not say."""
WINDOW_CAP = 6 * 3600.0
"""The longest usage window a run waits for on a timer; past it the run ends
``failed_resumable`` at once, for a person to retry."""

MODEL_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=2),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(minutes=2),
    maximum_attempts=4,
)
"""Attempts of one model call in all (a usage window's wait replaces the backoff)."""

TOOL_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=30),
    maximum_attempts=3,
)
"""Attempts of one tool body: only a lost worker or a timeout starts another one."""


@dataclass(frozen=True)
class FailurePolicy:
    """What Temporal does with a model failure of one class."""

    retry: bool
    wait: Literal["backoff", "window", "none"]


MODEL_FAILURES: dict[str, FailurePolicy] = {
    "usage_window": FailurePolicy(retry=True, wait="window"),
    "unavailable": FailurePolicy(retry=True, wait="backoff"),
    "transient_exhausted": FailurePolicy(retry=True, wait="backoff"),
    "auth": FailurePolicy(retry=False, wait="none"),
    "unclassified": FailurePolicy(retry=False, wait="none"),
}


def model_failure(error: Exception, *, scrub: Callable[[str], str] = str) -> ApplicationError:
    """The activity failure for what a model call raised: for a ``ModelError``, non-retryable
    or retryable after its wait, by its class; for anything else, non-retryable, its message
    put through ``scrub`` (a provider's ``ModelError`` is scrubbed already)."""
    if not isinstance(error, ModelError):
        data = error_data(error)
        data = data.model_copy(update={"message": scrub(data.message)})
        return ApplicationError(
            data.message, data.model_dump(mode="json"), type=data.type, non_retryable=True
        )
    policy = MODEL_FAILURES.get(error.error_class, MODEL_FAILURES["unclassified"])
    delay: timedelta | None = None
    retry = policy.retry
    if policy.wait == "window":
        window = error.retry_after if error.retry_after is not None else DEFAULT_WINDOW
        retry = error.retryable and 0 <= window <= WINDOW_CAP
        delay = timedelta(seconds=window) if retry else None
    data = error_data(error)
    return ApplicationError(
        data.message,
        data.model_dump(mode="json"),
        type="ModelError",
        non_retryable=not retry,
        next_retry_delay=delay,
    )
