"""Reminders and escalations against a store: what the hosts' sweeps and the answer planners
read and write (the decisions are :mod:`interactions._reach`'s, pure).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import datetime

from interactions._errors import RunError
from interactions._reach import approvers_now, due_notices, reach_of, reached_of
from interactions.store._protocol import ReminderStore, Store
from interactions.store._records import EventRecord, InteractionRecord

__all__ = ["current_approvers", "escalated_ids", "remind_due"]

logger = logging.getLogger("interactions")


async def remind_due(store: Store, *, now: datetime) -> list[EventRecord]:
    """Write every reminder and escalation due at ``now`` for the pending interactions of
    ``store``, and return the events written (by this call: a notice another server wrote
    first is not written again). A store that keeps no reminders (not a
    :class:`~interactions.store.ReminderStore`) is left alone: ``[]``.

    Reads the pending interactions, then the events of each run with one whose interrupt
    asks for a reminder or an escalation; the store's ``record_reminder`` decides, inside its
    write, that the notice is still due and not written yet. A run that went away meanwhile
    is skipped, as is an interaction this version cannot read (its ``unreadable``).
    """
    if not isinstance(store, ReminderStore):
        return []
    asking: dict[str, list[InteractionRecord]] = {}
    for record in await store.list_interactions(pending=True):
        asks = reach_of(record.metadata).any and now <= record.expires_at
        if asks and record.unreadable is None:
            asking.setdefault(record.run_id, []).append(record)
    written: list[EventRecord] = []
    for run_id, records in asking.items():
        try:
            events = await store.list_events(run_id)
            for record in records:
                reached = reached_of(events, record.id)
                dues = due_notices(
                    record.id, record.metadata, record.requested_at,
                    record.expires_at, reached, now,
                )  # fmt: skip
                for due in dues:
                    event = await store.record_reminder(
                        run_id, record.id, due.kind, due.number, due.data, now=now
                    )
                    if event is not None:
                        written.append(event)
        except RunError as exc:  # the run or the interaction went away meanwhile
            logger.info("no reminder for run %s: %s", run_id, exc)
    return written


async def escalated_ids(store: Store, interactions: Iterable[InteractionRecord]) -> set[str]:
    """The ids, among ``interactions`` (of one run), whose escalation is stored: what the
    answer planners take as ``escalated`` (:func:`~interactions.reminders.approvers_now`).
    Reads the run's events only when one of them asks for an escalation and is pending (its
    stored metadata says so: the pause record itself is not read)."""
    records = [r for r in interactions if r.pending and reach_of(r.metadata).escalate_to]
    if not records:
        return set()
    events = await store.list_events(records[0].run_id)
    return {r.id for r in records if reached_of(events, r.id).escalated}




async def current_approvers(store: Store, record: InteractionRecord) -> tuple[str, ...]:
    """Who may answer ``record`` now: its approvers, and its ``escalate_to`` once its
    escalation is stored (``()``: anyone who may reach it), from its stored metadata (so one
    this version cannot read shows to whom it was meant for). Reads the run's events only for
    a pending ask that escalates."""
    escalated = record.id in await escalated_ids(store, [record])
    return approvers_now(record.metadata, escalated)
