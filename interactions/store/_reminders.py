"""Reminders and escalations as the store keeps them: the rules every backend shares.

A notice (a reminder, an escalation) of one interaction is written with
:meth:`~interactions.store.ReminderStore.record_reminder`: its event appended, and its number
kept per ``(run, interaction, kind)``, in one transaction. What to write and which error to
raise are the pure functions below; nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from interactions._errors import UsageError
from interactions.store._records import InteractionRecord, RunRecord, check_event_inputs
from interactions.store._refusals import unknown_interaction
from interactions.store._rules import Event
from interactions.store._status import is_terminal

__all__ = ["NOTICE_KINDS", "check_notice", "plan_notice"]

NOTICE_KINDS = ("reminded", "escalated")
"""The notices a store keeps; each is written as the event ``interaction_<kind>``."""


def check_notice(kind: str, number: int, data: Mapping[str, Any]) -> Event:
    """The event a notice is written as; ``UsageError`` for a kind that is not one of
    :data:`NOTICE_KINDS`, a number that is not a whole number from 1, or data that is not an
    event's (a JSON object)."""
    if kind not in NOTICE_KINDS:
        raise UsageError(f"a notice's kind is one of {', '.join(NOTICE_KINDS)}, got {kind!r}")
    if not isinstance(number, int) or isinstance(number, bool) or not 1 <= number < 2**62:
        raise UsageError(f"a notice's number is a whole number from 1, got {number!r}")
    if not isinstance(data, Mapping):
        raise UsageError(f"a notice's data is a JSON object, got {type(data).__name__}")
    [event] = check_event_inputs([(f"interaction_{kind}", dict(data))])
    return event


def plan_notice(
    run: RunRecord,
    interaction_id: str,
    stored: InteractionRecord | None,
    last: int,
    number: int,
    now: datetime,
) -> bool:
    """Whether to write a notice numbered ``number`` of interaction ``interaction_id`` of
    ``run``, whose last stored notice of that kind is numbered ``last`` (``0``: none): only
    while it is pending and open at ``now`` in a run that has not ended, and above ``last``.
    Raises ``UnknownInteractionError`` when the run has no such interaction."""
    if stored is None:
        raise unknown_interaction(run.id, interaction_id)
    if is_terminal(run.status) or stored.answer is not None or now > stored.expires_at:
        return False
    return number > last
