"""Requests that reach a run whose workflow has ended: decided from the run as it stands.

An ended run (finished, failed, cancelled) takes no more updates, but a request to it still
gets the answer the other engines give: an identical replay of a stored answer is accepted
(nothing changes), anything else is the typed error of the same request on a stored run. The
decisions are the validators' own (:mod:`._checks`).
"""

from __future__ import annotations

from datetime import datetime

from interactions import ConflictError
from interactions.store import utc_now
from recipes.runs import AnswerResult
from recipes.temporal._checks import check_answer, check_cancel, check_resume, check_retry
from recipes.temporal._run_store import RunState
from recipes.temporal._wire import AnswerRequest, ResumeRequest, Snapshot

__all__ = ["closed_answer", "closed_cancel", "closed_resume", "closed_retry", "state_of"]


def state_of(snapshot: Snapshot) -> RunState:
    """The validators' view of a run read back from its workflow."""
    return RunState(
        run=snapshot.run,
        interactions={r.id: r for r in snapshot.interactions},
        events=list(snapshot.events),
    )


def closed_answer(snapshot: Snapshot, request: AnswerRequest) -> AnswerResult:
    """An answer to an ended run: an identical replay (``created=False``), else the refusal
    the runner's rules give (:func:`~recipes.temporal._checks.check_answer`); an answer those
    rules would take is refused all the same (``ConflictError``, reason ``run_ended``): an
    ended workflow takes no more writes."""
    state = state_of(snapshot)
    assert state.run is not None
    run = state.run
    plan = check_answer(state, run.id, request, utc_now())
    if plan.replay:
        return AnswerResult(interaction=plan.record, created=False, run_status=run.status)
    raise ConflictError(
        f"run {run.id} is {run.status.value}; it takes no more answers",
        run_id=run.id,
        interaction_id=plan.record.id,
        reason="run_ended",
    )


def closed_resume(snapshot: Snapshot, request: ResumeRequest, now: datetime) -> None:
    """A resume of an ended run: returns for an identical replay, else raises."""
    state = state_of(snapshot)
    assert state.run is not None
    check_resume(state, state.run.id, request, now)


def closed_retry(snapshot: Snapshot) -> None:
    """A retry of an ended run: always refused (``ConflictError``)."""
    state = state_of(snapshot)
    assert state.run is not None
    check_retry(state, state.run.id)


def closed_cancel(snapshot: Snapshot) -> None:
    """A cancel of an ended run: always refused (``IllegalTransitionError``)."""
    state = state_of(snapshot)
    assert state.run is not None
    check_cancel(state, state.run.id)
