"""One answer, decided and written once: :meth:`Runner.answer <recipes.runs.Runner.answer>`.

The run is read with its interactions (one store call) and :func:`~interactions.resume.
plan_answer` decides. When the answer is the last a paused run waits for and the caller
continues the run, the answer is written together with the run's move to ``running``: the
claim. Otherwise the answer is written alone: guarded by the run's version while no leg holds
it (a paused run), so that two answers racing for a run's last two questions
cannot both be stored as "not the last" (the second's write fails, it decides again on what
the first stored, and claims the run); while a leg runs, an async question's answer is stored
without touching the run's version, which the leg holds. A write that meets another writer's
is decided again on what that writer left, a bounded number of times.

An answer to an approval that needs several approvals is a vote (:mod:`._voting`): the store
counts it and settles the approval in one write, and the run is claimed after that write when
the vote settled the last thing it waited for.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from interactions import ConflictError
from interactions.async_questions import ASYNC_KIND, MESSAGE_QUEUED
from interactions.people import Identity, who
from interactions.reminders import escalated_ids
from interactions.resume import AnswerPlan, plan_answer
from interactions.store import (
    InteractionAnswer,
    InteractionRecord,
    RunRecord,
    RunStatus,
    Store,
    is_terminal,
)
from recipes.runs._drivers import driver_for
from recipes.runs._results import AnswerResult, Claim, Surface
from recipes.runs._voting import answer_by_vote

if TYPE_CHECKING:
    from recipes.runs._runner import Runner

__all__ = ["BeforeClaim", "answer", "claim_write"]

BeforeClaim = Callable[[], object]
"""Called once an answer is known to claim its run, before anything is written: a host
reserves the worker that will continue it there, and refuses the answer (raises) when none
is free."""

_TRIES = 5
"""Times an answer is decided again when another writer moved the run under it."""


async def claim_write(
    store: Store,
    run: RunRecord,
    records: Sequence[InteractionRecord],
    answers: Mapping[str, InteractionAnswer],
    prepared: object,
) -> Claim | None:
    """The claim's write: ``answers`` and the move to ``running`` at the version read; the
    :class:`Claim`, or ``None`` when another writer moved the run first."""
    try:
        moved = await store.update_run(
            run.id,
            expected_version=run.version,
            status=RunStatus.RUNNING,
            answers=answers,
            durable=False,  # the leg's end, written durably before it returns, follows
        )
    except ConflictError:
        return None
    return Claim(moved, interactions=_known(records, answers, moved), prepared=prepared)


def _known(
    records: Sequence[InteractionRecord],
    answers: Mapping[str, InteractionAnswer],
    written: RunRecord,
) -> tuple[InteractionRecord, ...]:
    """The run's interactions once ``answers`` are stored by the write that left ``written``:
    known without reading them again (all were read at the version the write moved on from,
    answers are never taken back, and each is stamped with the write's time)."""
    stamp = {"answered_at": written.updated_at}
    return tuple(
        r.model_copy(update={"answer": answers[r.id], **stamp}) if r.id in answers else r
        for r in records
    )


async def answer(
    runner: Runner,
    run_id: str,
    interaction_id: str,
    payload: Any,
    *,
    status: str,
    answered_by: str | Identity | None,
    resume: bool,
    claim: bool,
    before_claim: BeforeClaim | None,
    surface: Surface,
) -> AnswerResult:
    """See :meth:`Runner.answer <recipes.runs.Runner.answer>`."""
    continuing = claim or resume
    claiming = _Claiming(runner, before_claim)
    name, groups = who(answered_by)
    for _ in range(_TRIES):
        run, records = await runner._read(run_id)
        plan = plan_answer(
            run, records, interaction_id, status, payload,
            now=runner.clock(), answered_by=name, via=runner.host, groups=groups,
            escalated=await escalated_ids(runner.store, records),
        )  # fmt: skip
        if plan.vote:  # one vote of several: the store counts it, and settles it once
            return await answer_by_vote(
                runner, run, plan, continuing=continuing, resume=resume,
                before=claiming.before, surface=surface,
            )  # fmt: skip
        paused = run.status is RunStatus.PAUSED_WAITING_HUMAN
        if plan.replay:
            claimed = None
            if continuing and paused and not plan.still_open:  # its claim was lost before
                claimed = await runner._claim(run, records, before=claiming.before)
            return await _answered(runner, plan.record, False, run, plan, claimed, resume, surface)
        if continuing and plan.last:
            prepared = await claiming.prepare(run, plan)
            claimed = await claim_write(runner.store, run, records, plan.answers(), prepared)
            if claimed is None:
                continue  # another writer moved the run: decide again on what it left
            stored = next(r for r in claimed.interactions or () if r.id == plan.record.id)
            return await _answered(runner, stored, True, run, plan, claimed, resume, surface)
        written = await _store_alone(runner.store, run, plan)
        if written is not None:
            return await _answered(runner, written, True, run, plan, None, resume, surface)
    raise ConflictError(
        f"run {run_id} kept changing while {interaction_id} was being answered; try again",
        run_id=run_id,
        interaction_id=interaction_id,
        reason="version",
    )


async def _store_alone(store: Store, run: RunRecord, plan: AnswerPlan) -> InteractionRecord | None:
    """Store ``plan``'s answer without moving the run on; ``None`` when another writer got in
    first (the caller decides again). A paused run's answer is guarded by the run's version;
    another's (a leg may hold the version: an async answer while it runs) is not."""
    answer = plan.answer
    assert answer is not None
    try:
        if run.status is not RunStatus.PAUSED_WAITING_HUMAN:  # a leg may hold the version
            stored, created = await store.answer_interaction(run.id, plan.record.id, answer)
            return stored if created else None  # not created: decided again, a replay
        written = await store.update_run(
            run.id, expected_version=run.version, answers={plan.record.id: answer}
        )
    except ConflictError:
        return None
    return plan.record.model_copy(update={"answer": answer, "answered_at": written.updated_at})


class _Claiming:
    """What an answer that claims its run does once, however often it is decided again: the
    driver's check (:meth:`~recipes.runs.drivers.RunDriver.prepare`) and the caller's
    ``before_claim``."""

    def __init__(self, runner: Runner, before_claim: BeforeClaim | None) -> None:
        self._runner = runner
        self._before = before_claim
        self._prepared: tuple[object] | None = None
        self._called = False

    def before(self) -> None:
        """Call ``before_claim`` (once)."""
        if self._before is not None and not self._called:
            self._called = True
            self._before()

    async def prepare(self, run: RunRecord, plan: AnswerPlan) -> object:
        """The driver's check of ``run`` (once), then ``before_claim``. Should the check fail
        (a missing key, a recipe gone), the answer is stored all the same, then that is
        raised: the human's answer is kept."""
        if self._prepared is None:
            try:
                self._prepared = (await driver_for(run.kind).prepare(self._runner, run),)
            except Exception:
                await _store_alone(self._runner.store, run, plan)
                raise
        self.before()
        return self._prepared[0]


async def _answered(
    runner: Runner,
    stored: InteractionRecord,
    created: bool,
    run: RunRecord,
    plan: AnswerPlan,
    claimed: Claim | None,
    resume: bool,
    surface: Surface,
) -> AnswerResult:
    """What an answer did, continuing the claimed run when the caller asked to."""
    result = None
    if resume and claimed is not None:
        result = await runner.proceed(claimed, surface=surface)
    elif resume and not plan.still_open and not (
        stored.kind == ASYNC_KIND and run.status is RunStatus.RUNNING
    ):  # nothing left to wait for, and no claim: a cancel, a resume or the sweep was first
        result = await runner.status(run.id)
    queued = False
    goes_on = claimed is None and not is_terminal(run.status)
    if created and goes_on and stored.kind == ASYNC_KIND:
        data = {"interaction_id": stored.id, "node_id": stored.node_id}
        await runner.store.append_events(run.id, [(MESSAGE_QUEUED, data)])
        queued = True
    return AnswerResult(
        interaction=stored,
        created=created,
        run_status=run.status,
        claim=None if resume else claimed,
        run=result,
        still_open=[] if claimed is not None else list(plan.still_open),
        queued=queued,
        resumed=resume and claimed is not None,
    )
