"""The checks every store makes of its arguments before it reads or writes anything.

Each refuses a bad argument with a ``UsageError`` saying what was expected, so every backend
refuses the same values the same way (and none leaves a driver to fail on them).
"""

from __future__ import annotations

import math
from datetime import datetime

from interactions._errors import UsageError

__all__ = [
    "MAX_LOCK_WAIT",
    "MAX_POSITION",
    "check_interval",
    "check_limit",
    "check_lock_wait",
    "check_now",
    "check_timeout",
    "position",
]


def check_now(now: datetime) -> None:
    """Refuse a naive ``now``: a write's time decides expiry, and must say which zone it is in."""
    if now.tzinfo is None or now.utcoffset() is None:
        raise UsageError(f"now must be a timezone-aware datetime, got naive {now.isoformat()}")


def check_limit(limit: int) -> None:
    """Refuse a page size that is not a whole number from one up (it is written into the
    statement: the server plans a page for its size)."""
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise UsageError(f"limit must be a whole number >= 1, got {limit!r}")
    if not 1 <= limit <= MAX_POSITION:
        raise UsageError(f"limit must be >= 1 and at most {MAX_POSITION}, got {limit}")


MAX_POSITION = 2**63 - 1
"""The largest seq or cursor a store holds: SQL keeps them as signed 64-bit integers."""


def position(name: str, value: int) -> int:
    """``value``, an ``after_seq`` or a cursor to read after, as a bound a query can take: an
    integer (else ``UsageError``), below 0 read as 0 and above :data:`MAX_POSITION` as that
    (nothing comes after it either), so a client's huge number finds nothing, on every store,
    instead of failing in a database driver."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise UsageError(f"{name} must be an integer, got {value!r}")
    return min(max(value, 0), MAX_POSITION)


def check_timeout(timeout: float) -> None:
    """Refuse a wait without a finite, non-negative bound (no silent infinity)."""
    if not (isinstance(timeout, int | float) and math.isfinite(timeout) and timeout >= 0):
        raise UsageError(f"timeout must be a finite number of seconds >= 0, got {timeout!r}")


MAX_LOCK_WAIT = 2_147_483.0
"""The longest wait for a lock a backend can be told (seconds): SQLite's ``busy_timeout`` and
PostgreSQL's ``lock_timeout`` are 32-bit counts of milliseconds."""


def check_lock_wait(name: str, seconds: float) -> None:
    """Refuse a bound on waiting for another writer's lock that is not a finite number of
    seconds from 0 to :data:`MAX_LOCK_WAIT` (no silent infinity)."""
    if not (isinstance(seconds, int | float) and 0 <= seconds <= MAX_LOCK_WAIT):
        raise UsageError(
            f"{name} must be a finite number of seconds from 0 to {MAX_LOCK_WAIT:.0f}, got "
            f"{seconds!r}: a wait for another writer needs a bound"
        )


def check_interval(name: str, seconds: float) -> None:
    """Refuse a polling interval that is not a number of seconds above 0 (``inf``: never)."""
    if not (isinstance(seconds, int | float) and seconds > 0):
        raise UsageError(f"{name} must be a number of seconds above 0, got {seconds!r}")
