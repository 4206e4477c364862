"""One answer, decided: a pure function from (the run, its interactions, the answer) to a plan.

Every place an answer can arrive (the runner, an engine's update validator) calls
:func:`plan_answer` on what it last read of the run, and writes what the plan says; nothing is
decided twice, and what is refused is refused with the same typed error everywhere. The write
itself still guards the decision (compare-and-set): a plan made on a run that moved since is
refused by the store, never applied to the new state.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from interactions._async import ASYNC_KIND, AWAIT_KIND, awaited_ids, open_for_pause, settle_awaits
from interactions._errors import ConflictError, ExpiredError, UnknownInteractionError
from interactions._people import check_not_allowed, required_approvals_of
from interactions._reach import approvers_now
from interactions._resume import _resolved, check_vote, new_answer, same_as_stored, validate_answer
from interactions.store._records import InteractionAnswer, InteractionRecord, RunRecord
from interactions.store._status import RunStatus, is_terminal

__all__ = ["RUN_ENDED", "AnswerPlan", "plan_answer"]

RUN_ENDED = InteractionAnswer(status="cancelled", answered_by="system", via="run_end")
"""How a run that ends closes the questions still open (async ones no one answered): no later
answer can reach its agent, so none is taken."""


@dataclass(frozen=True)
class AnswerPlan:
    """An accepted answer to one interaction of a run.

    ``answer`` is what to store (``None``: the answer repeats the stored one, a replay that
    writes nothing). ``last``: once it is stored, the paused run waits for nothing more, so
    the write that stores it may also move the run on (``settles``: the ``await_answers``
    waits it settles, stored with it). ``still_open``: what the run's pause waits for besides.

    ``required``: the distinct approvals the interaction needs. Above one, the answer is a
    *vote* (:attr:`vote`): cast it (:meth:`~interactions.store.VoteStore.cast_vote`), which
    stores it once per person and settles the interaction when it is decided; ``last`` then
    says the run waits for nothing more once the vote settles it, and ``settles`` is empty
    (the claim settles the waits). A vote on an interaction already settled is planned too
    (the store tells the voter's replay from a late vote).
    """

    record: InteractionRecord
    answer: InteractionAnswer | None
    last: bool = False
    settles: dict[str, InteractionAnswer] = field(default_factory=dict)
    still_open: tuple[str, ...] = ()
    required: int = 1

    @property
    def vote(self) -> bool:
        """The answer is one vote of several (the interaction needs more than one approval)."""
        return self.required > 1

    @property
    def replay(self) -> bool:
        """The answer repeats what is stored: nothing is written."""
        return self.answer is None

    def answers(self) -> dict[str, InteractionAnswer]:
        """Everything the write stores: the answer and the waits it settles."""
        assert self.answer is not None, "a replay stores nothing"
        return {self.record.id: self.answer, **self.settles}


def plan_answer(
    run: RunRecord,
    interactions: Sequence[InteractionRecord],
    interaction_id: str,
    status: str = "resolved",
    payload: Any = None,
    *,
    now: datetime,
    answered_by: str | None = None,
    via: str | None = None,
    groups: Iterable[str] = (),
    escalated: Collection[str] = (),
) -> AnswerPlan:
    """Decide one answer to ``interaction_id`` of ``run``, whose interactions are
    ``interactions`` (all of them, as read with the run).

    Refusals: an unknown id (:class:`UnknownInteractionError`); the run's own wait for its
    async questions, which the system settles (:class:`ConflictError`, reason ``await``); a
    value no answer holds or a payload off the interrupt's schema
    (:class:`~interactions.InvalidPayloadError`); a question past ``expires_at``, or settled
    ``expired`` by the sweep (:class:`ExpiredError`); a run that was cancelled or ended before
    the answer, closing its open questions (:class:`ConflictError`, reasons ``run_cancelled``,
    ``run_ended``); a different answer than the one stored (:class:`ConflictError`, reason
    ``already_answered``: the first answer stands); an interrupt naming approvers answered
    by someone else (``answered_by`` in ``groups``), :class:`~interactions.NotAllowedError`;
    ``escalated`` names the interactions whose escalation is stored (their ``escalate_to`` may
    answer too: :func:`~interactions.reminders.escalated_ids` reads them).

    An approval that needs several approvals (``required_approvals`` in its metadata) is
    answered by votes (:attr:`AnswerPlan.vote`): the same refusals, but for ``args`` and
    ``remember``, which a vote does not carry (:class:`~interactions.InvalidPayloadError`,
    reason ``not_a_vote``), and for a settled one, whose votes decide (the store's).
    """
    by_id = {record.id: record for record in interactions}
    record = by_id.get(interaction_id)
    if record is None:
        open_ = [r.id for r in open_for_pause(interactions)]
        raise UnknownInteractionError(
            f"run {run.id!r} has no interaction {interaction_id!r}; answer one of its open "
            f"ids: {open_}",
            run_id=run.id,
            interaction_id=interaction_id,
            reason="unknown_interaction",
        )
    if record.kind == AWAIT_KIND:
        raise ConflictError(
            f"{interaction_id} is the run's wait for its async questions; answer those "
            f"instead: {', '.join(awaited_ids(record))}",
            run_id=run.id,
            interaction_id=interaction_id,
            reason="await",
        )
    approvers = approvers_now(record.interrupt.metadata, record.id in escalated)
    if approvers:
        check_not_allowed(approvers, answered_by, groups, run_id=run.id, interaction_id=record.id)
    answer = new_answer(record, status, payload, answered_by=answered_by, via=via)
    waiting = [r.id for r in open_for_pause(interactions) if r.id != interaction_id]
    required = required_approvals_of(record.interrupt.metadata)
    if record.answer is not None:
        if required > 1 and _voted_on(run, record.answer):  # the votes tell a replay
            _, answer = _resolved(record, answer)
            check_vote(record, answer)
            return AnswerPlan(record, answer, still_open=tuple(waiting), required=required)
        _against_stored(run, record, answer)
        return AnswerPlan(record, None, still_open=tuple(waiting))
    _, answer = validate_answer(record, answer, now=now)
    check_vote(record, answer)
    if record.kind == ASYNC_KIND and is_terminal(run.status):  # no agent would ever read it
        raise _ended_before(run, interaction_id)
    paused = run.status is RunStatus.PAUSED_WAITING_HUMAN
    last = paused and not waiting and record.id in _waited_on(interactions)
    settles = {}
    if last and required == 1:
        settles = settle_awaits(interactions, {record.id: answer}, via=via)
    return AnswerPlan(record, answer, last, settles, tuple(waiting), required)


def _voted_on(run: RunRecord, stored: InteractionAnswer) -> bool:
    """Whether ``stored``, the answer of an approval that needs several, was given by its
    votes (not a close by the system, the expiry sweep, or a cancel)."""
    return not (_closed_by_system(stored) or stored.status == "expired") and (
        run.status is not RunStatus.CANCELLED
    )


def _waited_on(interactions: Sequence[InteractionRecord]) -> set[str]:
    return {r.id for r in open_for_pause(interactions)}


def _against_stored(run: RunRecord, record: InteractionRecord, answer: InteractionAnswer) -> None:
    """An answer to an interaction that has one: a replay (returns), or a refusal saying why."""
    stored = record.answer
    assert stored is not None
    if _closed_by_system(stored) and is_terminal(run.status):
        raise _ended_before(run, record.id)  # no one answered: a cancel or the run's end closed it
    if same_as_stored(record, answer):
        return
    if stored.status == "expired":  # settled by the expiry sweep: no one answered
        raise ExpiredError(
            f"interaction {record.id} expired at {record.expires_at.isoformat()} and was "
            "settled as expired; it can no longer be answered",
            run_id=run.id,
            interaction_id=record.id,
            reason="expired",
        )
    if run.status is RunStatus.CANCELLED:
        raise _ended_before(run, record.id)
    raise ConflictError(
        f"interaction {record.id!r} of run {run.id!r} was already answered "
        f"({stored.status}) with a different answer; the first answer stands",
        run_id=run.id,
        interaction_id=record.id,
        reason="already_answered",
    )


def _closed_by_system(answer: InteractionAnswer) -> bool:
    """Whether ``answer`` is the close a cancel or a run's end gave a question still open."""
    return answer.status == "cancelled" and answer.answered_by == RUN_ENDED.answered_by


def _ended_before(run: RunRecord, interaction_id: str) -> ConflictError:
    """The refusal of an answer that came after its run ended (a cancel, or the run's end,
    closed the question first)."""
    if run.status is RunStatus.CANCELLED:
        return ConflictError(
            f"run {run.id} was cancelled before this answer; nothing was stored",
            run_id=run.id,
            interaction_id=interaction_id,
            reason="run_cancelled",
        )
    return ConflictError(
        f"run {run.id} {run.status.value} before this answer: its open questions closed with "
        "it, and no agent will read the answer; nothing was stored",
        run_id=run.id,
        interaction_id=interaction_id,
        reason="run_ended",
    )
