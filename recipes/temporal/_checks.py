"""The update validators' decisions, as pure functions of the run as last written.

A validator refuses an update before anything is written to the workflow's history, with the
typed error the other engines raise for the same request (the same class, ``reason`` and exit
code). Each function returns when the update may go on, or raises. An update that passes and
then loses a race to another one in the same instant is refused by the write itself, with the
same error: the run's store decides inside its one write, as every store does.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from interactions import (
    ConflictError,
    IllegalTransitionError,
    InvalidPayloadError,
    UnknownInteractionError,
    UnknownRunError,
)
from interactions.resume import (
    new_answer,
    parse_resume_entries,
    plan_resume,
    same_as_stored,
    validate_answer,
)
from interactions.store import (
    RunRecord,
    RunStatus,
    is_terminal,
)
from recipes.temporal._run_store import RunState
from recipes.temporal._wire import AnswerRequest, ResumeRequest

__all__ = [
    "check_answer",
    "check_cancel",
    "check_resume",
    "check_resume_answered",
    "check_retry",
    "require_run",
]


def require_run(state: RunState, run_id: str) -> RunRecord:
    """The run, or ``UnknownRunError`` while its start has not written it (or was refused)."""
    if state.run is None:
        raise UnknownRunError(
            f"no run {run_id!r} on this engine (its start was refused or has not written it)",
            run_id=run_id,
            reason="unknown_run",
        )
    return state.run


def check_answer(state: RunState, run_id: str, request: AnswerRequest, now: datetime) -> None:
    """An answer to one interaction: it exists; a stored answer is repeated identically (a
    replay) or refused (``ConflictError``); an open one is not expired and fits its schema."""
    run = require_run(state, run_id)
    record = state.interactions.get(request.interaction_id)
    if record is None:
        raise UnknownInteractionError(
            f"run {run_id!r} has no interaction {request.interaction_id!r}; answer one of its "
            f"open ids: {state.open_ids()}",
            run_id=run_id,
            interaction_id=request.interaction_id,
            reason="unknown_interaction",
        )
    answer = new_answer(
        record, request.status, request.payload, answered_by=request.answered_by, via=request.via
    )
    if record.answer is None:
        validate_answer(record, answer, now=now)
        return
    if same_as_stored(record, answer):
        return
    if run.status is RunStatus.CANCELLED:
        raise ConflictError(
            f"run {run_id} was cancelled before this answer; nothing was stored",
            run_id=run_id,
            interaction_id=record.id,
            reason="run_cancelled",
        )
    raise ConflictError(
        f"interaction {record.id!r} of run {run_id!r} was already answered "
        f"({record.answer.status}) with a different answer; the first answer stands",
        run_id=run_id,
        interaction_id=record.id,
        reason="already_answered",
    )


def check_resume(state: RunState, run_id: str, request: ResumeRequest, now: datetime) -> bool:
    """A resume: the entries plan (:func:`~interactions.resume.plan_resume`) and a paused run
    unless every entry repeats what is stored. Returns whether it is such a replay."""
    run = require_run(state, run_id)
    entries: list[Any] = parse_resume_entries(request.entries)
    plan = plan_resume(
        list(state.interactions.values()),
        entries,
        now=now,
        answered_by=request.answered_by,
        via=request.via,
    )
    if not plan.replay and run.status is not RunStatus.PAUSED_WAITING_HUMAN:
        raise ConflictError(
            f"run {run_id} is {run.status.value}, not paused; nothing to resume",
            run_id=run_id,
            reason="not_paused",
        )
    return plan.replay


def check_resume_answered(state: RunState, run_id: str) -> None:
    """A resume with the answers given: of a paused run only once nothing is open
    (``InvalidPayloadError``, reason ``incomplete_resume``); any other run is returned as it
    stands."""
    run = require_run(state, run_id)
    still_open = state.blocking_ids()
    if run.status is RunStatus.PAUSED_WAITING_HUMAN and still_open:
        raise InvalidPayloadError(
            f"run {run_id} still waits for answers to {still_open}",
            run_id=run_id,
            reason="incomplete_resume",
        )


def check_retry(state: RunState, run_id: str) -> None:
    """A retry: only of a ``failed_resumable`` run (``ConflictError``, reason
    ``not_resumable``)."""
    run = require_run(state, run_id)
    if run.status is not RunStatus.FAILED_RESUMABLE:
        raise ConflictError(
            f"run {run_id} is {run.status.value}; only a failed_resumable run can be retried",
            run_id=run_id,
            reason="not_resumable",
        )


def check_cancel(state: RunState, run_id: str) -> None:
    """A cancel: of a run that has not ended (``IllegalTransitionError`` otherwise)."""
    run = require_run(state, run_id)
    if is_terminal(run.status):  # as the stores refuse any update of an ended run
        raise IllegalTransitionError(
            f"run {run.id!r} is {run.status.value} (terminal) and can no longer be updated",
            run_id=run.id,
            reason=f"{run.status.value}->update",
        )
