"""Bounded retries with exponential backoff and jitter, honouring ``Retry-After``.

:func:`retrying` drives a provider's *attempt* (an async generator of events) and retries it only
while nothing has been yielded to the caller yet: once a text or tool-call delta has left, a
failure is raised, never papered over by a silent second stream.
"""

from __future__ import annotations

import logging
import math
import random
import re
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from contextlib import aclosing
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final, TypeVar

import anyio

from interactions.errors import UsageError
from recipes.models._errors import ErrorClass, ModelError, scrub_error
from recipes.models._secrets import Secrets

__all__ = [
    "RESET_HEADERS",
    "RetryPolicy",
    "parse_reset",
    "parse_retry_after",
    "retry_after_from_headers",
    "retry_policy",
    "retrying",
]

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


def parse_retry_after(value: str, *, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` value: delta-seconds or an HTTP date.

    Returns a finite number ``>= 0``, or ``None`` when the value is neither, or is negative, or
    is a date already past: such a value gives no wait to go by (a skewed clock, a stale cached
    header), and the retry waits the policy's backoff, not 0 s. ``now`` (epoch seconds, default
    the current time) is for dates.
    """
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            import email.utils  # only an HTTP-date Retry-After needs it

            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
        if when.tzinfo is None:  # "-0000" dates: UTC per RFC 5322
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    return _wait(seconds)


def _wait(seconds: float) -> float | None:
    """``seconds`` as a wait: ``None`` when it is not finite or is negative (a moment past)."""
    if not math.isfinite(seconds) or seconds < 0:
        return None
    return seconds + 0.0  # -0.0 is 0.0


_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")
_GO_DURATION = re.compile(r"(?:[0-9]+(?:\.[0-9]+)?(?:ms|us|µs|ns|h|m|s))+")
_GO_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)(ms|us|µs|ns|h|m|s)")
_GO_UNIT = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
RESET_HEADERS: Final = (
    "x-ratelimit-reset-requests",
    "x-ratelimit-reset-tokens",
    "anthropic-ratelimit-requests-reset",
    "anthropic-ratelimit-tokens-reset",
    "anthropic-ratelimit-input-tokens-reset",
    "anthropic-ratelimit-output-tokens-reset",
)
"""The rate-limit reset headers read when a response gives no ``Retry-After``: OpenAI's (a
duration, ``6m0s``) and Anthropic's (an RFC 3339 time)."""


def parse_reset(value: str, *, now: float | None = None) -> float | None:
    """Seconds until a rate-limit reset header's moment: a duration (``1s``, ``6m0s``,
    ``250ms``, plain seconds) or an RFC 3339 time. ``None`` when the value is neither, or a time
    already past (as for :func:`parse_retry_after`)."""
    text = value.strip()
    if _GO_DURATION.fullmatch(text):
        return _wait(sum(float(n) * _GO_UNIT[u] for n, u in _GO_PART.findall(text)))
    if "T" in text:
        try:
            when = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            return None
        if when.tzinfo is None:
            return None
        return _wait(when.timestamp() - (time.time() if now is None else now))
    return parse_retry_after(text, now=now) if text[:1].isdigit() else None


def retry_after_from_headers(
    headers: Mapping[str, str], *, now: float | None = None, rate_limited: bool = True
) -> float | None:
    """The wait a response asks for: OpenAI's ``retry-after-ms``, else ``Retry-After``, else,
    for a ``rate_limited`` response (a 429), the latest of the rate-limit reset headers
    (:data:`RESET_HEADERS`): once it has passed, every window the response names has reopened.
    Other failures carry those headers too (OpenAI sends them on every response), where they
    describe quota windows, not the failure: a 503 is not a wait of minutes."""
    millis = headers.get("retry-after-ms", "").strip()
    if _NUMBER.fullmatch(millis):  # milliseconds, never a date
        seconds = _wait(float(millis) / 1000)
        if seconds is not None:
            return seconds
    value = headers.get("retry-after")
    if value is not None:
        seconds = parse_retry_after(value, now=now)
        if seconds is not None:
            return seconds
    if not rate_limited:
        return None
    resets = [parse_reset(headers[name], now=now) for name in RESET_HEADERS if name in headers]
    known = [r for r in resets if r is not None]
    return max(known) if known else None


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
