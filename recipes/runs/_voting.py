"""Answers that are votes: an approval that needs several people (``required_approvals``).

:func:`~interactions.resume.plan_answer` checks a vote as it checks any answer (who may give
it, the payload, the expiry) and marks it a vote; the store then counts it and settles the
approval in the same transaction (:meth:`~interactions.store.VoteStore.cast_vote`: one vote
per person; a decline or a revision request settles it at once, the required approvals as one
approval naming the approvers). When the vote settles the last thing a paused run waited for,
the run is claimed as any answered run is (:meth:`Runner._claim`): the settling write moved the
run's version, so of the vote's claim and any other writer's, exactly one continues it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from interactions import NotAllowedError, UsageError
from interactions.async_questions import open_for_pause, settle_awaits
from interactions.people import required_approvals_of
from interactions.resume import AnswerPlan
from interactions.store import (
    InteractionAnswer,
    InteractionRecord,
    NewVote,
    RunRecord,
    RunStatus,
    Store,
    VoteOutcome,
    VoteStore,
)
from recipes.runs._drivers import driver_for
from recipes.runs._results import AnswerResult, Claim, RunResult, Surface

if TYPE_CHECKING:
    from recipes.runs._answering import BeforeClaim
    from recipes.runs._runner import Runner

__all__ = ["answer_by_vote", "cast", "resume_with_votes", "votes_of"]


def _vote_store(store: Store, record: InteractionRecord, required: int) -> VoteStore:
    """``store`` as the vote store a vote needs; ``UsageError`` for one that keeps no votes."""
    if not isinstance(store, VoteStore):
        raise UsageError(
            f"{record.id} needs {required} approvals, and this store "
            f"({type(store).__name__}) keeps no votes: run it on a SQLite or PostgreSQL store"
        )
    return store


def _ballot(store: Store, run: RunRecord, plan: AnswerPlan) -> tuple[VoteStore, NewVote]:
    """The store that counts ``plan``'s vote and the vote: refused before anything is written
    when the store keeps no votes (``UsageError``) or the answer came from no one
    (``NotAllowedError``, reason ``no_voter``: a vote counts a person)."""
    answer = plan.answer
    assert answer is not None and plan.vote
    votes = _vote_store(store, plan.record, plan.required)
    if answer.answered_by is None:
        raise NotAllowedError(
            f"{plan.record.id} needs {plan.required} approvals from distinct people, and this "
            "answer came from no one signed in; answer as yourself",
            run_id=run.id,
            interaction_id=plan.record.id,
            reason="no_voter",
        )
    assert answer.status in ("resolved", "cancelled"), "an expired answer is the sweep's"
    vote = NewVote(
        voter=answer.answered_by, status=answer.status, payload=answer.payload, via=answer.via
    )
    return votes, vote


async def cast(
    store: Store, run: RunRecord, plan: AnswerPlan
) -> tuple[InteractionRecord, VoteOutcome]:
    """Cast the vote ``plan`` holds (its answer, by its ``answered_by``), refused as
    :func:`_ballot` says before anything is written."""
    votes, vote = _ballot(store, run, plan)
    return await votes.cast_vote(run.id, plan.record.id, vote, required=plan.required)


async def answer_by_vote(
    runner: Runner,
    run: RunRecord,
    plan: AnswerPlan,
    *,
    continuing: bool,
    resume: bool,
    before: BeforeClaim,
    surface: Surface,
) -> AnswerResult:
    """Cast the vote of an answer (:meth:`Runner.answer` on an approval that needs several)
    and, when it settles the last thing the paused run waited for and the caller continues
    the run, claim it (``resume``: and continue it)."""
    record, outcome = await cast(runner.store, run, plan)
    claimed: Claim | None = None
    result: RunResult | None = None
    if continuing and outcome.settled and run.status is RunStatus.PAUSED_WAITING_HUMAN:
        fresh, records = await runner._read(run.id)
        if fresh.status is RunStatus.PAUSED_WAITING_HUMAN and not open_for_pause(records):
            claimed = await runner._claim(fresh, records, before=before)
    if resume and claimed is not None:
        result = await runner.proceed(claimed, surface=surface)
    still_open = list(plan.still_open) if claimed is None else []
    return AnswerResult(
        interaction=record,
        created=outcome.counted,
        run_status=run.status,
        claim=None if resume else claimed,
        run=result,
        still_open=still_open,
        resumed=resume and claimed is not None,
        settled=outcome.settled,
        approvals=list(outcome.approvals),
        required_approvals=outcome.required,
    )


def votes_of(
    records: Sequence[InteractionRecord], answers: Mapping[str, InteractionAnswer]
) -> dict[str, int]:
    """Which of ``answers`` are votes: their interaction ids and the approvals each needs."""
    by_id = {record.id: record for record in records}
    needed = {iid: required_approvals_of(by_id[iid].interrupt.metadata) for iid in answers}
    return {iid: required for iid, required in needed.items() if required > 1}


async def resume_with_votes(
    runner: Runner,
    run: RunRecord,
    records: Sequence[InteractionRecord],
    answers: Mapping[str, InteractionAnswer],
    votes: Mapping[str, int],
    surface: Surface,
) -> RunResult:
    """A resume whose entries hold votes (``votes``: their ids and the approvals each needs):
    each vote is cast (one resume is one vote per approval), then, when every approval is
    settled, the other answers are stored with the run's claim and the run continues; while
    an approval waits for more votes, the other answers are stored alone and the run stays
    paused (returned as it stands)."""
    by_id = {record.id: record for record in records}
    plans = [AnswerPlan(by_id[iid], answers[iid], required=n) for iid, n in votes.items()]
    ballots = [_ballot(runner.store, run, plan) for plan in plans]  # refused before any write
    for plan, (store, vote) in zip(plans, ballots, strict=True):
        await store.cast_vote(run.id, plan.record.id, vote, required=plan.required)
    fresh, now_records = await runner._read(run.id)
    pending = {r.id for r in now_records if r.answer is None}
    others = {iid: a for iid, a in answers.items() if iid not in votes and iid in pending}
    if fresh.status is not RunStatus.PAUSED_WAITING_HUMAN:
        return runner._result(fresh, now_records)
    open_ = [r.id for r in open_for_pause(now_records) if r.id not in others]
    if open_:  # an approval waits for more votes: keep the other answers, stay paused
        if others:
            await runner.store.update_run(run.id, expected_version=fresh.version, answers=others)
        return await runner.status(run.id)
    from recipes.runs._answering import claim_write  # it answers by these votes

    settled = {**others, **settle_awaits(now_records, others, via=runner.host)}
    prepared = await driver_for(fresh.kind).prepare(runner, fresh)
    claimed = await claim_write(runner.store, fresh, now_records, settled, prepared)
    if claimed is None:
        return await runner.status(run.id)
    return await runner.proceed(claimed, surface=surface)
