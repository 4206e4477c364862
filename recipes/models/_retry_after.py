"""The wait a provider's response asks for: ``Retry-After`` (seconds or an HTTP date), OpenAI's
``retry-after-ms``, and the rate-limit reset headers of a 429 (OpenAI's durations, Anthropic's
RFC 3339 times). Pure: ``now`` can be given; a value that gives no wait to go by is ``None``.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Mapping
from datetime import datetime
from typing import Final

__all__ = ["RESET_HEADERS", "parse_reset", "parse_retry_after", "retry_after_from_headers"]


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
