"""Bounded retries with exponential backoff and jitter, honouring ``Retry-After`` (read from a
response by ``_retry_after``: a failure carries it as ``ModelError.retry_after``).

:func:`retrying` drives a provider's *attempt* (an async generator of events) and retries it only
while nothing has been yielded to the caller yet: once a text or tool-call delta has left, a
failure is raised, never papered over by a silent second stream.
"""

from __future__ import annotations

import logging
import math
import random
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import TypeVar

import anyio

from interactions.errors import UsageError
from recipes.models._errors import ErrorClass, ModelError, scrub_error
from recipes.models._secrets import Secrets

__all__ = ["RetryPolicy", "retry_policy", "retrying"]

logger = logging.getLogger("recipes.models")

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """How a provider retries a failed call.

    - ``max_retries``: retries after the first attempt (default 2, so 3 attempts in all; 0
      disables retrying).
    - ``backoff_base`` / ``backoff_max``: the wait before retry *n* is
      ``min(backoff_max, backoff_base * 2**(n-1))`` scaled by a jitter factor in ``[0.5, 1]``.
    - ``retry_after_cap``: a provider's ``Retry-After`` is waited as given up to this many
      seconds; a longer one is not waited at all: the call fails with ``usage_window`` and
      ``retry_after`` set, for the caller to schedule.
    - ``sleep`` / ``jitter``: injectable for hosts and tests (``anyio.sleep``, ``random.random``).

    Raises ``UsageError`` naming the setting and its value when ``max_retries`` is not a whole
    number ``>= 0`` (a ``bool`` or a ``float`` included), a wait is not a finite number of
    seconds ``>= 0``, or ``sleep`` / ``jitter`` is not callable.
    """

    max_retries: int = 2
    backoff_base: float = 0.5
    backoff_max: float = 8.0
    retry_after_cap: float = 60.0
    sleep: Callable[[float], Awaitable[None]] = field(default=anyio.sleep, repr=False)
    jitter: Callable[[], float] = field(default=random.random, repr=False)

    def __post_init__(self) -> None:
        retries = self.max_retries
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            raise UsageError(
                f"RetryPolicy max_retries must be a whole number >= 0 (the retries after the "
                f"first attempt; 0 disables retrying), got {retries!r}"
            )
        for name in ("backoff_base", "backoff_max", "retry_after_cap"):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not math.isfinite(value)
                or value < 0
            ):
                raise UsageError(
                    f"RetryPolicy {name} must be a finite number of seconds >= 0, got {value!r}"
                )
        for name in ("sleep", "jitter"):
            if not callable(getattr(self, name)):
                raise UsageError(
                    f"RetryPolicy {name} must be callable, got {getattr(self, name)!r}"
                )

    def backoff(self, retry_number: int) -> float:
        """The jittered wait before retry ``retry_number`` (1-based), without a Retry-After."""
        raw = min(self.backoff_max, self.backoff_base * 2.0 ** (retry_number - 1))
        factor: float = min(1.0, max(0.0, self.jitter()))
        return raw * (0.5 + 0.5 * factor)


def retry_policy(retry: RetryPolicy | None) -> RetryPolicy:
    """A provider's ``retry=`` setting: the policy given, or the default one for ``None``.

    Raises ``UsageError`` for anything else (``retry=0`` meant as "no retries" would otherwise
    get the default policy's retries in silence).
    """
    if retry is None:
        return RetryPolicy()
    if not isinstance(retry, RetryPolicy):
        raise UsageError(
            f"retry must be a RetryPolicy or None (RetryPolicy(max_retries=0) disables "
            f"retrying), got {retry!r}"
        )
    return retry


async def retrying(
    attempt: Callable[[], AsyncGenerator[T, None]],
    policy: RetryPolicy,
    *,
    provider: str,
    secrets: Secrets,
) -> AsyncGenerator[T, None]:
    """Yield the events of ``attempt()``, calling it again on a retryable :class:`ModelError`.

    Every attempt's error is scrubbed with ``secrets`` (the provider's), its chain included,
    before anything logs, wraps or raises it: its text was decoded from what the provider sent,
    and decoding can re-form a secret the wire text only spelled (``\\u0073k-...``).

    Retries happen only before the first event reached the caller. Raises:

    - the attempt's own error when it is not retryable;
    - ``transient_exhausted`` (``last_error_class``, ``__cause__``) when every attempt failed;
    - ``usage_window`` when the provider's Retry-After exceeds ``policy.retry_after_cap``;
    - ``unclassified`` (``last_error_class`` set) for a retryable failure after events were
      yielded.
    """
    attempts = policy.max_retries + 1
    for number in range(1, attempts + 1):
        delivered = False
        try:
            async with aclosing(attempt()) as events:
                async for event in events:
                    delivered = True
                    yield event
            return
        except ModelError as exc:
            scrub_error(exc, secrets)
            exc.attempts = number
            if not exc.retryable:
                raise
            final = _final_error(
                exc, policy, provider=provider, delivered=delivered, last=number == attempts
            )
            if final is not None:
                raise final from exc
            delay = exc.retry_after if exc.retry_after is not None else policy.backoff(number)
            logger.warning(
                "%s: attempt %d of %d failed (%s); retrying in %.3fs",
                provider,
                number,
                attempts,
                exc,
                delay,
            )
            await policy.sleep(delay)


def _final_error(
    exc: ModelError, policy: RetryPolicy, *, provider: str, delivered: bool, last: bool
) -> ModelError | None:
    """The error that ends the retries of ``exc`` (retryable, scrubbed, its attempts counted), or
    ``None`` to retry it: ``unclassified`` once output was ``delivered``, ``usage_window`` for a
    Retry-After over the policy's cap, ``transient_exhausted`` after the ``last`` attempt. Each
    keeps ``exc``'s status code, attempt count and class (as ``last_error_class``), and is not
    retryable itself."""
    error_class: ErrorClass
    if delivered:
        message = f"{exc} (the stream failed after output was delivered; not retried)"
        error_class, retry_after = "unclassified", None
    elif exc.retry_after is not None and exc.retry_after > policy.retry_after_cap:
        message = (
            f"{exc} (Retry-After {exc.retry_after:g}s exceeds the "
            f"{policy.retry_after_cap:g}s cap; not waiting)"
        )
        error_class, retry_after = "usage_window", exc.retry_after
    elif last:
        message = f"{provider}: gave up after {exc.attempts} attempt(s); last failure: {exc}"
        error_class, retry_after = "transient_exhausted", exc.retry_after
    else:
        return None
    return ModelError(
        message,
        error_class=error_class,
        provider=provider,
        status_code=exc.status_code,
        retry_after=retry_after,
        last_error_class=exc.error_class,
        retryable=False,
        attempts=exc.attempts,
    )
