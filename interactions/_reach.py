"""Reaching people who have not answered: reminders and escalation, decided without I/O.

An ask may say ``remind_after`` (a duration: repeated every that long until it is answered or
expires), ``escalate_after`` with ``escalate_to`` (names and ``group:NAME`` entries, added as
approvers once it is due, and notified). The interrupt carries them in its ``metadata``
(:data:`REMIND_AFTER` and :data:`ESCALATE_AFTER` as seconds, :data:`ESCALATE_TO`), as it
carries its approvers, so an interrupt stored without them behaves as before.

Each reminder and the escalation is an event of the run (:data:`INTERACTION_REMINDED`,
:data:`INTERACTION_ESCALATED`), written once by whichever server's sweep finds it due
(:func:`due_notices` decides, the store's ``record_reminder`` writes). Who may answer is derived
from what is stored: the interrupt's approvers, plus ``escalate_to`` once its escalation event
is (:func:`approvers_now`). Nothing rewrites the interrupt.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from interactions._errors import UsageError
from interactions._people import approvers_of, check_approvers

__all__ = [
    "ESCALATE_AFTER",
    "ESCALATE_TO",
    "INTERACTION_ESCALATED",
    "INTERACTION_REMINDED",
    "REMIND_AFTER",
    "Due",
    "Reach",
    "Reached",
    "approvers_now",
    "check_reach_window",
    "due_notices",
    "next_due",
    "reach_metadata",
    "reach_of",
    "reached_of",
]

REMIND_AFTER = "remind_after"
"""The key, in an interrupt's ``metadata``, of the seconds between reminders."""

ESCALATE_AFTER = "escalate_after"
"""The key, in an interrupt's ``metadata``, of the seconds after the ask it escalates."""

ESCALATE_TO = "escalate_to"
"""The key, in an interrupt's ``metadata``, of who it escalates to (names, ``group:NAME``)."""

INTERACTION_REMINDED = "interaction_reminded"
"""A reminder's event: ``{interaction_id, count, approvers}``."""

INTERACTION_ESCALATED = "interaction_escalated"
"""An escalation's event: ``{interaction_id, added, approvers}``."""

NoticeKind = Literal["reminded", "escalated"]

_MAX_SECONDS = 10 * 366 * 24 * 3600.0  # nothing waits longer (the longest expiry)


def _seconds(name: str, value: object) -> float:
    """``value`` (a ``timedelta`` or a number of seconds) as positive finite seconds."""
    if isinstance(value, timedelta):
        seconds = value.total_seconds()
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = float(value)
    else:
        raise UsageError(
            f"{name} is a duration: a datetime.timedelta or a number of seconds, got {value!r}"
        )
    if not 0 < seconds <= _MAX_SECONDS or math.isnan(seconds):
        raise UsageError(f"{name} must be a positive duration of at most ten years, got {value!r}")
    return seconds


def reach_metadata(
    remind_after: timedelta | float | None = None,
    escalate_after: timedelta | float | None = None,
    escalate_to: Iterable[str] | None = None,
) -> dict[str, Any]:
    """The metadata entries an ask adds for its reminders and escalation (none when it asks for
    neither). Raises :class:`~interactions.UsageError` for a duration that is not positive,
    ``escalate_to`` without ``escalate_after`` (or the reverse), or a bad name in it."""
    out: dict[str, Any] = {}
    if remind_after is not None:
        out[REMIND_AFTER] = _seconds("remind_after", remind_after)
    targets = check_approvers(escalate_to)
    if escalate_to is not None and not targets:
        raise UsageError("escalate_to names no one; give names or group:NAME entries")
    if targets and escalate_after is None:
        raise UsageError("escalate_to needs escalate_after: how long after the ask to escalate")
    if escalate_after is not None:
        if not targets:
            raise UsageError(
                "escalate_after needs escalate_to: the names or group:NAME entries to add"
            )
        out[ESCALATE_AFTER] = _seconds("escalate_after", escalate_after)
        out[ESCALATE_TO] = list(targets)
    return out


def check_reach_window(metadata: Mapping[str, Any], asked_at: datetime, expires_at: str) -> None:
    """Refuse (:class:`~interactions.UsageError`) an escalation or a first reminder due after
    the ask expires at ``expires_at``: it would never happen."""
    expires = datetime.fromisoformat(expires_at)
    reach = reach_of(metadata)
    for name, seconds in (
        (REMIND_AFTER, reach.remind_after),
        (ESCALATE_AFTER, reach.escalate_after),
    ):
        if seconds is not None and asked_at + timedelta(seconds=seconds) > expires:
            raise UsageError(
                f"{name} ({seconds:g} s) is beyond the ask's expiry at {expires_at}; give a "
                "shorter duration or a later expires_at"
            )


@dataclass(frozen=True)
class Reach:
    """What an interrupt's metadata asks for: seconds between reminders, seconds to the
    escalation and who it adds (``None``/empty: not asked for)."""

    remind_after: float | None = None
    escalate_after: float | None = None
    escalate_to: tuple[str, ...] = ()

    @property
    def any(self) -> bool:
        """Whether it asks for a reminder or an escalation."""
        return self.remind_after is not None or (
            self.escalate_after is not None and bool(self.escalate_to)
        )


def _stored_seconds(value: object) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return float(value) if math.isfinite(value) else None
    return None


def reach_of(metadata: Mapping[str, Any] | None) -> Reach:
    """What an interrupt's ``metadata`` asks for (values it cannot read are left out)."""
    data = metadata or {}
    targets = data.get(ESCALATE_TO)
    return Reach(
        _stored_seconds(data.get(REMIND_AFTER)),
        _stored_seconds(data.get(ESCALATE_AFTER)),
        tuple(t for t in targets if isinstance(t, str)) if isinstance(targets, list) else (),
    )


@dataclass(frozen=True)
class Reached:
    """What a run's events say was done for one interaction: the last reminder's count, and
    whom its escalation added (``escalated``: whether it happened)."""

    reminded: int = 0
    escalated: bool = False
    added: tuple[str, ...] = ()


def reached_of(events: Iterable[Any], interaction_id: str) -> Reached:
    """What the events (``EventRecord``s, or anything with ``type`` and ``data``) of a run say
    was done for ``interaction_id``."""
    reminded, escalated, added = 0, False, tuple[str, ...]()
    for event in events:
        data = event.data
        if data.get("interaction_id") != interaction_id:
            continue
        if event.type == INTERACTION_REMINDED and isinstance(data.get("count"), int):
            reminded = max(reminded, data["count"])
        elif event.type == INTERACTION_ESCALATED:
            escalated = True
            found = data.get("added")
            added = tuple(a for a in found if isinstance(a, str)) if isinstance(found, list) else ()
    return Reached(reminded, escalated, added)


def approvers_now(metadata: Mapping[str, Any] | None, escalated: bool) -> tuple[str, ...]:
    """Who may answer an interrupt with ``metadata``: its approvers, and once its escalation
    is stored (``escalated``) the ones it escalates to. An interrupt naming no approvers stays
    open to anyone who may reach it (its escalation only notifies)."""
    approvers = approvers_of(metadata)
    if not escalated or not approvers:
        return approvers
    return tuple(dict.fromkeys((*approvers, *reach_of(metadata).escalate_to)))


@dataclass(frozen=True)
class Due:
    """A notice due for an interaction: ``kind`` (``reminded``, ``escalated``), its number (a
    reminder's count; ``1`` for the escalation), and the event's ``data``."""

    kind: NoticeKind
    number: int
    data: dict[str, Any]

    @property
    def event_type(self) -> str:
        """The event it is written as."""
        return INTERACTION_REMINDED if self.kind == "reminded" else INTERACTION_ESCALATED


def due_notices(
    interaction_id: str,
    metadata: Mapping[str, Any] | None,
    requested_at: datetime,
    expires_at: datetime,
    reached: Reached,
    now: datetime,
) -> list[Due]:
    """The notices due at ``now`` for a pending interaction asked at ``requested_at``, given
    what was ``reached`` already: its escalation once ``escalate_after`` passed (first), then a
    reminder whose count is the number of ``remind_after`` periods passed, when above the last
    one (several periods missed make one reminder, not a burst). None after ``expires_at``."""
    reach = reach_of(metadata)
    if now > expires_at or now < requested_at:
        return []
    due: list[Due] = []
    escalated = reached.escalated
    if (
        reach.escalate_after is not None
        and reach.escalate_to
        and not escalated
        and now >= requested_at + timedelta(seconds=reach.escalate_after)
    ):
        before = approvers_of(metadata)
        after = approvers_now(metadata, True)
        added = [t for t in reach.escalate_to if t not in before]
        data: dict[str, Any] = {
            "interaction_id": interaction_id, "added": added, "approvers": list(after),
        }  # fmt: skip
        due.append(Due("escalated", 1, data))
        escalated = True
    if reach.remind_after is not None:
        count = (now - requested_at) // timedelta(seconds=reach.remind_after)
        if count > reached.reminded:
            approvers = list(approvers_now(metadata, escalated))
            reminder: dict[str, Any] = {
                "interaction_id": interaction_id, "count": count, "approvers": approvers,
            }  # fmt: skip
            due.append(Due("reminded", count, reminder))
    return due


def next_due(record: Any, reached: Reached) -> datetime | None:
    """When the next notice of a pending interaction (an ``InteractionRecord``) is due, given
    what was ``reached`` already: its escalation, or its next reminder, whichever comes first
    (``None``: none before it expires). What a timer waits for."""
    reach = reach_of(record.interrupt.metadata)
    due: list[datetime] = []
    if reach.escalate_after is not None and reach.escalate_to and not reached.escalated:
        due.append(record.requested_at + timedelta(seconds=reach.escalate_after))
    if reach.remind_after is not None:
        period = timedelta(seconds=reach.remind_after)
        due.append(record.requested_at + (reached.reminded + 1) * period)
    due = [when for when in due if when <= record.expires_at]
    return min(due) if due else None
