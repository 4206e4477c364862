"""The update validators' decisions: the runner's own rules, on the run as last written.

A validator refuses an update before anything is written to the workflow's history, with the
typed error the other engines raise for the same request (the same class, ``reason``, message
and exit code), because it calls the same pure functions the :class:`~recipes.runs.Runner`
calls: :func:`~interactions.resume.plan_answer` for an answer,
:func:`~interactions.resume.plan_resume` for a resume. The few rules left here are the runner's
one-line status checks, written as it writes them. Each function returns when the update may
go on, or raises. An update that passes and then loses a race to another one in the same
instant is refused by the write itself, with the same error: the run's store decides inside
its one write, as every store does.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from interactions import (
    ConflictError,
    IllegalTransitionError,
    InvalidPayloadError,
    UnknownRunError,
    UsageError,
)
from interactions.async_questions import open_for_pause
from interactions.people import required_approvals_of
from interactions.reminders import reached_of
from interactions.resume import AnswerPlan, parse_resume_entries, plan_answer, plan_resume
from interactions.store import RunRecord, RunStatus, is_terminal
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


def check_answer(state: RunState, run_id: str, request: AnswerRequest, now: datetime) -> AnswerPlan:
    """An answer to one interaction, decided as ``Runner.answer`` decides it
    (:func:`~interactions.resume.plan_answer` on the run and its interactions): returns the
    plan (``replay`` when it repeats the stored answer), or raises its refusal. An approval
    that needs several approvals is refused (``UsageError``): this engine keeps no votes."""
    plan = plan_answer(
        require_run(state, run_id),
        list(state.interactions.values()),
        request.interaction_id,
        request.status,
        request.payload,
        now=now,
        answered_by=request.answered_by,
        via=request.via,
        groups=request.groups,
        escalated=_escalated(state),
    )
    if plan.vote:
        raise _no_votes(plan.record.id, plan.required)
    return plan


def _escalated(state: RunState) -> set[str]:
    """The interactions whose escalation the run's events hold (their ``escalate_to`` may
    answer too), read from the state the update validator sees."""
    return {i for i in state.interactions if reached_of(state.events, i).escalated}


def _no_votes(interaction_id: str, required: int) -> UsageError:
    """The refusal of a vote: the Temporal engine counts no votes (its store keeps none), and
    settling on the first approval would skip the others."""
    return UsageError(
        f"{interaction_id} needs {required} approvals, and the Temporal engine keeps no votes: "
        "run the recipe on a SQLite or PostgreSQL store (--store) instead"
    )


def check_resume(state: RunState, run_id: str, request: ResumeRequest, now: datetime) -> bool:
    """A resume, decided as ``Runner.resume`` decides it: the entries' plan
    (:func:`~interactions.resume.plan_resume`), and a paused run unless every entry repeats
    what is stored (``ConflictError``, reason ``not_paused``). Returns whether it is such a
    replay."""
    run = require_run(state, run_id)
    entries: list[Any] = parse_resume_entries(request.entries)
    plan = plan_resume(
        list(state.interactions.values()),
        entries,
        now=now,
        answered_by=request.answered_by,
        via=request.via,
        groups=request.groups,
        escalated=_escalated(state),
    )
    for interaction_id in plan.new_answers:
        required = required_approvals_of(state.interactions[interaction_id].interrupt.metadata)
        if required > 1:
            raise _no_votes(interaction_id, required)
    if not plan.replay and run.status is not RunStatus.PAUSED_WAITING_HUMAN:
        raise ConflictError(
            f"run {run_id} is {run.status.value}, not paused; nothing to resume",
            run_id=run_id,
            reason="not_paused",
        )
    return plan.replay


def check_resume_answered(state: RunState, run_id: str) -> None:
    """A resume with the answers given: of a paused run only once it waits for nothing
    (``InvalidPayloadError``, reason ``incomplete_resume``, naming what it waits for); any
    other run is returned as it stands."""
    run = require_run(state, run_id)
    still_open = [r.id for r in open_for_pause(list(state.interactions.values()))]
    if run.status is RunStatus.PAUSED_WAITING_HUMAN and still_open:
        raise InvalidPayloadError(
            f"run {run_id} still waits for answers to {still_open}",
            run_id=run_id,
            reason="incomplete_resume",
        )


def check_retry(state: RunState, run_id: str) -> None:
    """A retry, or a claim to retry: only of a ``failed_resumable`` run (``ConflictError``,
    reason ``not_resumable``)."""
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
