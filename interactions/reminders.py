"""Reminders and escalation of an ask nobody has answered yet.

An ask says ``remind_after=`` (a ``timedelta`` or seconds; repeated until it is answered or
expires), ``escalate_after=`` with ``escalate_to=[names or "group:NAME"]`` (added as approvers
when due, and notified); a policy rule says the same keys. The interrupt carries them in its
``metadata`` (:data:`REMIND_AFTER`, :data:`ESCALATE_AFTER` as seconds, :data:`ESCALATE_TO`).

The hosts' sweeps write what is due (:func:`remind_due`) as events of the run,
:data:`INTERACTION_REMINDED` ``{interaction_id, count, approvers}`` and
:data:`INTERACTION_ESCALATED` ``{interaction_id, added, approvers}``, each exactly once across
the servers sharing a store (the store's ``record_reminder``: a conditional write in one
transaction). Who may answer after an escalation is derived from its stored event
(:func:`approvers_now`, :func:`escalated_ids`, :func:`current_approvers`).
"""

from interactions._reach import (
    ESCALATE_AFTER,
    ESCALATE_TO,
    INTERACTION_ESCALATED,
    INTERACTION_REMINDED,
    REMIND_AFTER,
    Due,
    Reach,
    Reached,
    approvers_now,
    check_reach_window,
    due_notices,
    next_due,
    reach_metadata,
    reach_of,
    reached_of,
)
from interactions._remind import current_approvers, escalated_ids, remind_due

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
    "current_approvers",
    "due_notices",
    "escalated_ids",
    "next_due",
    "reach_metadata",
    "reach_of",
    "reached_of",
    "remind_due",
]
