"""Consumers of the store's feed: what the :class:`~interactions.store.ConsumerStore` decides,
written once for every store (pure: nothing here reads or writes).

A consumer (a webhook target, say) is a name with a durable cursor into the store-wide feed
(:meth:`~interactions.store.Store.watch`): the cursor of the last event it has dealt with. One
owner (a server) holds it at a time, for a lease of some seconds it renews by leasing again;
an owner whose lease lapsed lets another take it over, from the cursor. So several servers on
one store share each consumer's work without doing it twice, and one that dies hands it on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta

from interactions._errors import ConflictError, UsageError
from interactions.store._checks import MAX_POSITION

__all__ = [
    "MAX_LEASE",
    "MAX_NAME",
    "ConsumerState",
    "check_consumer",
    "check_cursor",
    "check_lease",
    "not_held",
    "plan_advance",
    "plan_lease",
]

MAX_NAME = 200
"""The longest consumer or owner name (characters)."""

MAX_LEASE = 86_400.0
"""The longest lease (seconds): a day. A lease is a bound on how long a dead owner holds on."""


@dataclass(frozen=True)
class ConsumerState:
    """A consumer as stored: its ``cursor``, who holds it and until when."""

    name: str
    cursor: int
    owner: str
    lease_until: datetime


def check_consumer(name: str, owner: str) -> None:
    """Refuse a consumer or owner name that is not 1 to :data:`MAX_NAME` characters of text
    without NUL (``UsageError``)."""
    for what, value in (("consumer name", name), ("owner", owner)):
        if not isinstance(value, str) or not 0 < len(value) <= MAX_NAME or "\x00" in value:
            raise UsageError(
                f"a {what} must be 1 to {MAX_NAME} characters without NUL, got {value!r}"
            )


def check_lease(lease: float) -> None:
    """Refuse a lease that is not a finite number of seconds above 0, up to :data:`MAX_LEASE`."""
    if (
        isinstance(lease, bool)
        or not isinstance(lease, int | float)
        or not (math.isfinite(lease) and 0 < lease <= MAX_LEASE)
    ):
        raise UsageError(f"lease must be seconds above 0 and at most {MAX_LEASE:g}, got {lease!r}")


def check_cursor(cursor: int) -> None:
    """Refuse a cursor that is not an integer from 0 to the largest a store holds."""
    if isinstance(cursor, bool) or not isinstance(cursor, int) or not 0 <= cursor <= MAX_POSITION:
        raise UsageError(f"a consumer's cursor must be an integer >= 0, got {cursor!r}")


def plan_lease(
    stored: ConsumerState | None, name: str, owner: str, lease: float, start: int, now: datetime
) -> ConsumerState | None:
    """The consumer ``name`` as it must be stored once ``owner`` leased it at ``now`` (its
    lease renewed to ``now + lease``), or ``None`` when another owner holds it. A consumer not
    yet stored starts at ``start``."""
    until = now + timedelta(seconds=lease)
    if stored is None:
        return ConsumerState(name, start, owner, until)
    if stored.owner != owner and stored.lease_until > now:
        return None
    return ConsumerState(name, stored.cursor, owner, until)


def plan_advance(
    stored: ConsumerState | None, name: str, owner: str, cursor: int, now: datetime
) -> ConsumerState | None:
    """The consumer once ``owner`` moved its cursor to ``cursor`` at ``now``: ``None`` when
    there is nothing to write (the cursor is there already). Raises ``ConflictError`` (reason
    ``not_holder``) unless ``owner`` holds the lease at ``now``, (reason ``cursor_behind``)
    for a cursor behind the stored one."""
    if stored is None or stored.owner != owner or stored.lease_until <= now:
        raise not_held(name, owner)
    if cursor < stored.cursor:
        raise ConflictError(
            f"consumer {name!r} is at cursor {stored.cursor}, past {cursor}: a cursor only "
            "moves forward",
            reason="cursor_behind",
        )
    if cursor == stored.cursor:
        return None
    return ConsumerState(name, cursor, owner, stored.lease_until)


def not_held(name: str, owner: str) -> ConflictError:
    """``owner`` does not hold the lease of consumer ``name`` (reason ``not_holder``)."""
    return ConflictError(
        f"{owner!r} does not hold consumer {name!r} (its lease lapsed, or another owner took "
        "it); lease it again before moving its cursor",
        reason="not_holder",
    )
