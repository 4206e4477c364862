"""Votes: one person's answer to an approval that needs several, and the rules every store
keeps for them.

An approval may need ``required`` distinct approvals (``required_approvals`` in its metadata).
Each person's answer to it is a *vote* (:class:`NewVote`), stored once per person with an
``interaction_voted`` event (see :class:`~interactions.store.VoteStore`). The vote that settles
the approval answers it in the same transaction: a decline or a revision request at once, as
that answer; approvals once ``required`` distinct people approved, as one approval naming them.
What to write and which error to raise are the pure functions below, shared by every backend;
nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel

from interactions._errors import ConflictError, ExpiredError, UsageError
from interactions.store._checks import check_now
from interactions.store._records import (
    _FROZEN,
    Id,
    InteractionAnswer,
    InteractionRecord,
    Json,
    RunRecord,
    StoreEventType,
    Text,
    UtcDatetime,
    canonical_json,
    check_text,
    normalize_json,
    trusted,
)
from interactions.store._refusals import unknown_interaction
from interactions.store._rules import Event, plan_answer
from interactions.store._status import RunStatus

__all__ = [
    "MAX_REQUIRED",
    "NewVote",
    "VoteOutcome",
    "VotePlan",
    "VoteRecord",
    "check_required",
    "check_vote",
    "joined_feedback",
    "plan_vote",
    "vote_approves",
]

MAX_REQUIRED = 100
"""The most approvals an approval may need (what an ask may name: ``people.MAX_APPROVERS``)."""


def vote_approves(status: str, payload: Any) -> bool:
    """Whether a vote of ``status`` and ``payload`` is an approval (``resolved`` with
    ``approved`` exactly ``true``); anything else settles the approval at once."""
    return status == "resolved" and isinstance(payload, Mapping) and payload.get("approved") is True


class _Vote(BaseModel):
    """What a vote says: who, the answer (``status`` and ``payload``), through which host."""

    model_config = _FROZEN

    voter: Id
    """Who votes (the identity the host established); one vote per person."""
    status: Literal["resolved", "cancelled"]
    payload: Json = None
    via: Text | None = None
    """Which host took the vote (``web``, ``slack``, ``cli``...)."""

    def same_vote(self, other: _Vote) -> bool:
        """Whether ``other`` repeats this vote: the same voter, status and canonical payload
        (through which host does not matter)."""
        return (
            self.voter == other.voter
            and self.status == other.status
            and canonical_json(self.payload) == canonical_json(other.payload)
        )


class NewVote(_Vote):
    """One person's answer to an approval that needs several (what
    :meth:`~interactions.store.VoteStore.cast_vote` needs; the store adds the time).

    ``status`` and ``payload`` are an answer's (checked against the interrupt by the caller):
    ``resolved`` with ``{"approved": true, "feedback"?}`` approves; ``{"approved": false}`` (a
    revision request) or ``cancelled`` (a decline) do not."""

    @property
    def approved(self) -> bool:
        """Whether the vote approves."""
        return vote_approves(self.status, self.payload)


class VoteRecord(_Vote):
    """One vote as stored (:meth:`~interactions.store.VoteStore.list_votes` gives them in the
    order they were cast)."""

    run_id: Id
    interaction_id: Id
    approved: bool
    """Whether the vote approves (``resolved`` with ``approved`` true)."""
    at: UtcDatetime
    """When it was cast."""


@dataclass(frozen=True)
class VoteOutcome:
    """What :meth:`~interactions.store.VoteStore.cast_vote` did.

    ``counted``: this call stored the vote (``False``: it repeats the voter's stored vote,
    nothing written). ``settled``: the approval is answered (by this vote, or before).
    ``approvals``: the names of the people who approved so far, in vote order; ``required``:
    how many distinct approvals settle it."""

    counted: bool
    settled: bool
    approvals: tuple[str, ...] = ()
    required: int = 1


@dataclass(frozen=True)
class VotePlan:
    """What one vote writes, in one transaction: ``vote`` (``None``: nothing, a replay),
    ``answered`` (the interaction with the answer the vote settles it with, if it does),
    ``events`` in order (``interaction_voted``, then ``interaction_answered``), the run row
    to write (see :func:`plan_vote`), and the ``record`` and ``outcome`` to return."""

    record: InteractionRecord
    outcome: VoteOutcome
    vote: VoteRecord | None = None
    answered: InteractionRecord | None = None
    events: list[Event] = field(default_factory=list)
    run: RunRecord | None = None
    """The run with its version moved on, when the vote settles a paused run's question."""


def check_required(required: int) -> int:
    """``required``, a count of approvals from 1 to :data:`MAX_REQUIRED`; else ``UsageError``."""
    if isinstance(required, bool) or not isinstance(required, int):
        raise UsageError(f"required must be a whole number of approvals, got {required!r}")
    if not 1 <= required <= MAX_REQUIRED:
        raise UsageError(f"required must be from 1 to {MAX_REQUIRED} approvals, got {required}")
    return required


def check_vote(vote: NewVote) -> NewVote:
    """Check ``vote`` again, as a store must of a value it did not build (one made with
    ``model_construct`` skips its validators); return it normalized. ``UsageError`` for a
    voter that is no name, a status that is no vote's, or a payload or host a store cannot
    keep."""
    voter = vote.voter
    if not isinstance(voter, str) or not voter:
        raise UsageError(f"a vote's voter must be a non-empty name, got {voter!r}")
    check_text(voter, "voter")
    if vote.status not in ("resolved", "cancelled"):
        raise UsageError(f"a vote is 'resolved' or 'cancelled', got {vote.status!r}")
    if vote.via is not None:
        if not isinstance(vote.via, str):
            raise UsageError(f"via must be text or None, got {type(vote.via).__name__}")
        check_text(vote.via, "via")
    payload = normalize_json(vote.payload)  # UsageError for what is not JSON
    if vote.status == "cancelled" and payload is not None:
        raise UsageError("a decline (status 'cancelled') carries no payload")
    if vote.status == "resolved" and not (
        isinstance(payload, dict) and isinstance(payload.get("approved"), bool)
    ):
        raise UsageError(
            "a resolved vote's payload is an approval's: {'approved': true|false, 'feedback'?}"
        )
    return trusted(NewVote, voter=voter, status=vote.status, payload=payload, via=vote.via)


def _feedback(vote: _Vote) -> str | None:
    text = vote.payload.get("feedback") if isinstance(vote.payload, Mapping) else None
    return text.strip() or None if isinstance(text, str) else None


def joined_feedback(votes: Sequence[_Vote]) -> str | None:
    """The feedback of ``votes`` as one text, ``voter: feedback`` each, joined by ``"; "``
    (``None``: none gave any)."""
    said = [f"{vote.voter}: {text}" for vote in votes if (text := _feedback(vote)) is not None]
    return "; ".join(said) or None


def plan_vote(
    run: RunRecord,
    interaction_id: str,
    stored: InteractionRecord | None,
    votes: Sequence[VoteRecord],
    vote: NewVote,
    *,
    required: int,
    now: datetime,
) -> VotePlan:
    """Decide one vote on the interaction ``stored`` of ``run`` whose votes so far are
    ``votes`` (in order). Call :func:`check_vote` and :func:`check_required` first.

    A vote that settles an interaction of a paused run moves the run's version on
    (``VotePlan.run``), as an answer stored by ``update_run`` does: a writer that decided on
    the run before (an answer to its other question, deciding it was not the last) decides
    again, and so the run's last answer always claims it. Otherwise the run is left as it is.

    Refusals: no such interaction (``UnknownInteractionError``); an answered interaction
    (``ConflictError``, reason ``already_answered``) unless the voter's stored vote is the
    same (a replay); a voter who voted differently (``ConflictError``, reason
    ``already_voted``); a pending interaction past ``expires_at`` (``ExpiredError``).
    """
    check_now(now)
    run_id = run.id
    if stored is None:
        raise unknown_interaction(run_id, interaction_id, "; vote on one of its open ids")
    mine = next((v for v in votes if v.voter == vote.voter), None)
    approvals = tuple(v.voter for v in votes if v.approved)
    if mine is not None and vote.same_vote(mine):  # a replay: nothing to write
        outcome = VoteOutcome(False, stored.answer is not None, approvals, required)
        return VotePlan(stored, outcome)
    if stored.answer is not None:
        raise ConflictError(
            f"interaction {interaction_id!r} of run {run_id!r} was already settled "
            f"({stored.answer.status}); this vote was not counted",
            run_id=run_id,
            interaction_id=interaction_id,
            reason="already_answered",
        )
    if mine is not None:
        raise ConflictError(
            f"{vote.voter} already voted on {interaction_id!r} of run {run_id!r}, otherwise; "
            "a person's first vote stands",
            run_id=run_id,
            interaction_id=interaction_id,
            reason="already_voted",
        )
    if now > stored.expires_at:  # open up to and including expires_at
        raise ExpiredError(
            f"interaction {interaction_id!r} of run {run_id!r} expired at "
            f"{stored.expires_at.isoformat()}; it can no longer be voted on",
            run_id=run_id,
            interaction_id=interaction_id,
            reason="expired",
        )
    record = trusted(
        VoteRecord,
        run_id=run_id,
        interaction_id=interaction_id,
        voter=vote.voter,
        status=vote.status,
        payload=vote.payload,
        via=vote.via,
        approved=vote.approved,
        at=now,
    )
    data: dict[str, Any] = {"interaction_id": interaction_id, "voter": vote.voter}
    data |= {"approved": vote.approved, "via": vote.via}
    feedback = _feedback(vote)
    if feedback is not None:
        data["feedback"] = feedback
    events: list[Event] = [(StoreEventType.INTERACTION_VOTED.value, data)]
    settling: InteractionAnswer | None = None
    if not vote.approved:  # a decline or a revision request settles it at once, as itself
        settling = InteractionAnswer(
            status=vote.status, payload=vote.payload, answered_by=vote.voter, via=vote.via
        )
    else:
        approvals = (*approvals, vote.voter)
        if len(approvals) >= required:
            approving = [v for v in (*votes, record) if v.approved]
            payload: dict[str, Any] = {"approved": True}
            joined = joined_feedback(approving)
            if joined is not None:
                payload["feedback"] = joined
            settling = InteractionAnswer(
                status="resolved",
                payload=payload,
                answered_by=", ".join(approvals),
                via=vote.via,
            )
    if settling is None:
        outcome = VoteOutcome(True, False, approvals, required)
        return VotePlan(stored, outcome, record, None, events)
    answered, answered_event = plan_answer(run_id, interaction_id, stored, settling, now)
    assert answered_event is not None
    outcome = VoteOutcome(True, True, approvals, required)
    moved = None
    if run.status is RunStatus.PAUSED_WAITING_HUMAN:
        moved = run.model_copy(update={"version": run.version + 1, "updated_at": now})
    return VotePlan(answered, outcome, record, answered, [*events, answered_event], moved)
