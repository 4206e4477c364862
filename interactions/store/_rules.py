"""The decisions every store backend makes, as pure functions (no I/O).

A backend reads what a write touches, asks these functions what to write (or which error to
raise), and persists the answer inside one transaction. So the rules live once, and the
in-memory and SQLite backends cannot drift apart.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from interactions._errors import (
    ConflictError,
    ExpiredError,
    IllegalTransitionError,
    UsageError,
)
from interactions.store._checks import check_now
from interactions.store._records import (
    MAX_JSON_DEPTH,
    EventInput,
    InteractionAnswer,
    InteractionRecord,
    NewInteraction,
    NewRun,
    RunRecord,
    StoreEventType,
    canonical_json,
    check_event_inputs,
    nests_deeper,
    storable_text,
    trusted,
)
from interactions.store._refusals import unknown_interaction
from interactions.store._status import RunStatus, check_transition, is_terminal

__all__ = [
    "RunChange",
    "UpdatePlan",
    "new_run_record",
    "plan_answer",
    "plan_update",
]

Event = tuple[str, dict[str, Any]]


def new_run_record(new: NewRun, now: datetime) -> tuple[RunRecord, Event]:
    """The record a new run starts as (``running``, version 1) and its ``run_created`` event."""
    run = trusted(  # NewRun checked the checkpoint
        RunRecord,
        id=new.id,
        thread_id=new.thread_id,
        kind=new.kind,
        ref=new.ref,
        agent=new.agent,
        model_name=new.model_name,
        parent_run_id=new.parent_run_id,
        node_id=new.node_id,
        status=RunStatus.RUNNING,
        checkpoint=new.checkpoint,
        version=1,
        created_at=now,
        updated_at=now,
    )
    return run, (StoreEventType.RUN_CREATED.value, {})  # what it created is the run's row


def plan_answer(
    run_id: str,
    interaction_id: str,
    stored: InteractionRecord | None,
    answer: InteractionAnswer,
    now: datetime,
) -> tuple[InteractionRecord, Event | None]:
    """Decide one answer: the first wins, an identical replay is a no-op, anything else fails.

    Returns the record to keep and the ``interaction_answered`` event to append, or the stored
    record and ``None`` for an identical replay (nothing to write). Raises
    ``UnknownInteractionError`` (no such interaction in the run), ``ConflictError`` (a different
    answer is stored) or ``ExpiredError`` (pending but past ``expires_at``).
    """
    check_now(now)
    if stored is None:
        raise unknown_interaction(run_id, interaction_id, "; answer one of its open ids")
    if stored.answer is not None:
        if stored.answer.same_answer(answer):
            return stored, None
        raise ConflictError(
            f"interaction {interaction_id!r} of run {run_id!r} was already answered "
            f"({stored.answer.status}) with a different answer; the first answer stands",
            run_id=run_id,
            interaction_id=interaction_id,
            reason="already_answered",
        )
    if now > stored.expires_at:  # open up to and including expires_at
        raise ExpiredError(
            f"interaction {interaction_id!r} of run {run_id!r} expired at "
            f"{stored.expires_at.isoformat()}; it can no longer be answered",
            run_id=run_id,
            interaction_id=interaction_id,
            reason="expired",
        )
    record = stored.model_copy(update={"answer": answer, "answered_at": now})
    data: dict[str, Any] = {"interaction_id": interaction_id, "status": answer.status}
    if not nests_deeper(answer.payload, MAX_JSON_DEPTH - 1):  # else the row alone holds it
        data["payload"] = answer.payload  # the answer itself: the trail reads without the row
    data |= {k: v for k, v in (("answered_by", answer.answered_by), ("via", answer.via)) if v}
    return record, (StoreEventType.INTERACTION_ANSWERED.value, data)


@dataclass(frozen=True)
class UpdatePlan:
    """What one :meth:`Store.update_run` writes, in one transaction."""

    run: RunRecord
    """The run row after the update (version bumped)."""
    inserts: list[InteractionRecord]
    """New interactions, already carrying an answer if the same update answered them."""
    answered: list[InteractionRecord]
    """Previously stored interactions that receive their (first) answer."""
    events: list[Event]
    """Events to append, in order: requested, answered, the caller's, then the status change."""
    checkpoint_json: str | None = None
    """The new checkpoint's canonical JSON text, when the update replaces it."""


@dataclass(frozen=True)
class RunChange:
    """What one :meth:`Store.update_run` asks of a run: its arguments but the run's id, ``now``
    and ``durable``, as the caller gave them (see the protocol for what each means)."""

    expected_version: int
    status: RunStatus | None
    checkpoint: Mapping[str, Any] | None
    error: str | None
    new_interactions: Sequence[NewInteraction]
    answers: Mapping[str, InteractionAnswer] | None
    close_open: InteractionAnswer | None
    events: Sequence[EventInput]


def plan_update(
    run: RunRecord, change: RunChange, interactions: Sequence[InteractionRecord], now: datetime
) -> UpdatePlan:
    """Decide ``change`` of ``run``; raise the first refusal, in this order.

    ``interactions`` are the run's as the writing transaction reads them, in request order (at
    least those still pending and those ``change`` inserts or answers): ``close_open`` answers
    the pending ones, in that order, so an answer that got in first is kept, not overwritten.
    Raises ``ConflictError`` (version mismatch, or a new interaction id already used),
    ``IllegalTransitionError`` (the status table refuses, or the run is terminal),
    ``UsageError`` (bad arguments), or what :func:`plan_answer` raises.
    """
    expected_version, status, error = change.expected_version, change.status, change.error
    stored = {record.id: record for record in interactions}
    answers = dict(change.answers or {})
    if change.close_open is not None:
        closing = {r.id: change.close_open for r in interactions if r.pending}
        answers = closing | answers
    check_now(now)
    if run.version != expected_version:
        raise ConflictError(
            f"run {run.id!r} is at version {run.version}, not {expected_version}; "
            "re-read the run and decide again",
            run_id=run.id,
            reason="version",
        )
    if is_terminal(run.status):
        raise IllegalTransitionError(
            f"run {run.id!r} is {run.status.value} (terminal) and can no longer be updated",
            run_id=run.id,
            reason=f"{run.status.value}->update",
        )
    if error is not None and status is None:
        raise UsageError("error is recorded with a status change; pass status= with error=")
    if error is not None:
        error = storable_text(error)  # a failure is recorded whatever its message holds
    caller_events = check_event_inputs(change.events)
    checkpoint_json = None if change.checkpoint is None else canonical_json(dict(change.checkpoint))
    new_cp = run.checkpoint if checkpoint_json is None else json.loads(checkpoint_json)
    plan_events: list[Event] = []
    pending: dict[str, InteractionRecord] = {}
    for new in change.new_interactions:
        if new.id in stored or new.id in pending:
            raise ConflictError(
                f"run {run.id!r} already has an interaction {new.id!r}; ids are unique per run",
                run_id=run.id,
                interaction_id=new.id,
                reason="duplicate_interaction",
            )
        pending[new.id] = trusted(  # NewInteraction checked the descriptor
            InteractionRecord,
            id=new.id,
            run_id=run.id,
            node_id=new.node_id,
            tool_call_id=new.tool_call_id,
            kind=new.kind,
            requested_at=new.requested_at or now,
            expires_at=new.expires_at,
            descriptor=new.descriptor,
        )
        data = {"interaction_id": new.id} | ({"kind": new.kind} if new.kind else {})
        plan_events.append((StoreEventType.INTERACTION_REQUESTED.value, data))
    answered: dict[str, InteractionRecord] = {}
    for iid, answer in answers.items():
        current = pending.get(iid) or stored.get(iid)
        record, event = plan_answer(run.id, iid, current, answer, now)
        if event is None:
            continue
        plan_events.append(event)
        if iid in pending:
            pending[iid] = record
        else:
            answered[iid] = record
    plan_events.extend(caller_events)
    new_status, new_error = run.status, run.error
    if status is not None:
        check_transition(run.status, status, run_id=run.id)
        new_status, new_error = status, error
        moved = {"from": run.status.value, "to": status.value}
        moved |= {"error": error} if error is not None else {}
        plan_events.append((StoreEventType.RUN_STATUS_CHANGED.value, moved))
    updated = run.model_copy(
        update={
            "status": new_status,
            "error": new_error,
            "checkpoint": new_cp,
            "version": run.version + 1,
            "updated_at": now,
        }
    )
    return UpdatePlan(
        updated, list(pending.values()), list(answered.values()), plan_events, checkpoint_json
    )
