"""Resume validation: a pure function from (stored interactions, resume entries) to a plan.

A resume is a list of AG-UI ``ResumeEntry`` and must answer every open interaction of the
pause. :func:`plan_resume` decides, without I/O, whether a resume is accepted (and which
answers to store) or refused (a typed error). Nothing is written when it raises.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from interactions._async import AWAIT_KIND, awaited_ids
from interactions._errors import (
    ConflictError,
    ExpiredError,
    InvalidPayloadError,
    UnknownInteractionError,
)
from interactions._models import Approved, AskUserOutcome
from interactions._payloads import outcome_from_resume, resolve_answer
from interactions._people import check_not_allowed, required_approvals_of
from interactions._reach import approvers_now
from interactions.store._records import InteractionAnswer, InteractionRecord
from interactions.store._votes import vote_approves

if TYPE_CHECKING:
    from ag_ui.core import ResumeEntry

__all__ = [
    "ResumePlan",
    "answer_outcome",
    "check_vote",
    "new_answer",
    "parse_resume_entries",
    "plan_resume",
    "same_as_stored",
    "validate_answer",
]


@dataclass(frozen=True)
class ResumePlan:
    """An accepted resume.

    ``new_answers`` are the answers to store (empty for a replay); ``outcomes`` holds the
    outcome of every interaction the resume covers, including ones answered earlier; ``replay``
    is true when every entry repeats an answer already stored.
    """

    new_answers: dict[str, InteractionAnswer]
    outcomes: dict[str, AskUserOutcome]
    replay: bool


def parse_resume_entries(raw: Any) -> list[ResumeEntry]:
    """Read resume entries from JSON (a list of ``{interruptId, status, payload}``).

    Raises :class:`InvalidPayloadError` naming the first bad entry.
    """
    from ag_ui.core import ResumeEntry  # AG-UI's own model reads AG-UI's resume

    if not isinstance(raw, list) or not raw:
        raise InvalidPayloadError(
            "a resume is a non-empty JSON list of {interruptId, status, payload} entries",
            reason="invalid_resume",
        )
    entries: list[ResumeEntry] = []
    for index, item in enumerate(raw):
        try:
            entries.append(ResumeEntry.model_validate(item))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise InvalidPayloadError(
                f"resume entry {index}: {where}: {first['msg']}", reason="invalid_resume"
            ) from None
    return entries


def new_answer(
    record: InteractionRecord,
    status: str,
    payload: Any,
    *,
    answered_by: str | None = None,
    via: str | None = None,
) -> InteractionAnswer:
    """An answer to ``record`` as given, before it is checked against the interrupt. A value no
    answer can hold (a status that is not one, a payload nested deeper than the store keeps, a
    name that is not valid text) raises :class:`InvalidPayloadError` saying which."""
    fields = {"status": status, "payload": payload, "answered_by": answered_by, "via": via}
    try:
        return InteractionAnswer.model_validate(fields)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "answer"
        cause = (first.get("ctx") or {}).get("error")  # a validator's own words, unprefixed
        raise InvalidPayloadError(
            f"the answer to {record.id}: {where}: {cause or first['msg']}",
            run_id=record.run_id,
            interaction_id=record.id,
            reason="invalid_status" if where == "status" else "invalid_payload",
        ) from None


def answer_outcome(record: InteractionRecord) -> AskUserOutcome:
    """The outcome of an answered interaction (``UsageError``-free: stored answers are valid).
    An approval that needed several approvals names its approvers (``approved_by``, from the
    answer's ``answered_by``: their names joined by ``", "``)."""
    assert record.answer is not None, f"{record.id} is not answered"
    outcome = outcome_from_resume(
        record.answer.status, record.answer.payload, interaction_id=record.id
    )
    by, several = record.answer.answered_by, required_approvals_of(record.interrupt.metadata) > 1
    if isinstance(outcome, Approved) and by and several:
        outcome = outcome.model_copy(update={"approved_by": tuple(by.split(", "))})
    return outcome


def validate_answer(
    record: InteractionRecord, answer: InteractionAnswer, *, now: datetime
) -> tuple[AskUserOutcome, InteractionAnswer]:
    """Check one answer against its interaction: not expired, payload fits the interrupt.

    Returns the outcome it means and the answer to record (an option's label recorded as its
    value). Raises :class:`ExpiredError` or :class:`InvalidPayloadError` (carrying the run id).
    """
    if now > record.expires_at:  # open up to and including expires_at
        raise ExpiredError(
            f"interaction {record.id} expired at {record.expires_at.isoformat()}",
            run_id=record.run_id,
            interaction_id=record.id,
            reason="expired",
        )
    return _resolved(record, answer)


def _resolved(
    record: InteractionRecord, answer: InteractionAnswer
) -> tuple[AskUserOutcome, InteractionAnswer]:
    try:
        outcome, payload = resolve_answer(
            record.interrupt, answer.status, answer.payload, interaction_id=record.id
        )
    except InvalidPayloadError as exc:
        exc.run_id = record.run_id
        raise
    return outcome, answer.model_copy(update={"payload": payload})


def check_vote(record: InteractionRecord, answer: InteractionAnswer) -> None:
    """Refuse what a vote cannot carry, on an approval that needs several approvals
    (:class:`InvalidPayloadError`, reason ``not_a_vote``: HTTP 422): edited ``args`` (each
    approver would approve other arguments) and ``remember`` (one person cannot make a
    decision stick that needed several). Another answer passes."""
    required = required_approvals_of(record.interrupt.metadata)
    payload = answer.payload
    if required < 2 or not isinstance(payload, dict):
        return
    for key, why in (
        ("args", "each approver approves the call as it was asked; request a revision instead"),
        ("remember", "a decision that needed several approvers does not stick for later calls"),
    ):
        if payload.get(key) is not None:
            raise InvalidPayloadError(
                f"{record.id} needs {required} approvals, so an answer to it is one vote: "
                f"'{key}' is not taken ({why})",
                run_id=record.run_id,
                interaction_id=record.id,
                reason="not_a_vote",
            )


def same_as_stored(record: InteractionRecord, answer: InteractionAnswer) -> bool:
    """Whether ``answer`` repeats the stored answer of ``record`` (after normalization: the
    label of the stored option repeats its value). A decline (``cancelled``, no payload) of an
    interaction the expiry sweep settled agrees with it: both are declines, and a client that
    saw the question expire acknowledges it so (AG-UI clients must answer every interrupt they
    were shown before the thread goes on)."""
    assert record.answer is not None, f"{record.id} is not answered"
    if record.answer.same_answer(answer):
        return True
    if record.answer.status == "expired":
        return answer.status == "cancelled" and answer.payload is None
    try:
        _, normalized = _resolved(record, answer)
    except InvalidPayloadError:
        return False
    return record.answer.same_answer(normalized)


def plan_resume(
    interactions: Sequence[InteractionRecord],
    entries: Sequence[ResumeEntry],
    *,
    now: datetime,
    answered_by: str | None = None,
    via: str | None = None,
    groups: Iterable[str] = (),
    escalated: Collection[str] = (),
) -> ResumePlan:
    """Decide a resume of a run whose interactions are ``interactions``.

    Refusals, in this order: a repeated or unknown ``interruptId``
    (:class:`UnknownInteractionError`), an entry for an ``await_answers`` wait, which only the
    system settles (:class:`ConflictError`, reason ``await``), an entry contradicting a stored
    answer (:class:`ConflictError`), an expired interaction (:class:`ExpiredError`), a payload that
    fails the interrupt's schema (:class:`InvalidPayloadError`), and open blocking interactions
    left without an entry (:class:`InvalidPayloadError`, reason ``incomplete_resume``); an
    interrupt naming approvers that ``answered_by`` (in ``groups``) is not among
    (:class:`~interactions.NotAllowedError`); ``escalated`` names those whose escalation is
    stored (their ``escalate_to`` may answer too).
    """
    if not entries:
        raise InvalidPayloadError(
            f"a resume needs one entry per open interrupt; open: {_open_ids(interactions)}",
            run_id=interactions[0].run_id if interactions else None,
            reason="incomplete_resume",
        )
    by_id = {record.id: record for record in interactions}
    seen: set[str] = set()
    new_answers: dict[str, InteractionAnswer] = {}
    outcomes: dict[str, AskUserOutcome] = {}
    for entry in entries:
        record = by_id.get(entry.interrupt_id)
        if entry.interrupt_id in seen:
            raise InvalidPayloadError(
                f"{entry.interrupt_id!r} is answered twice in the resume; give one entry each",
                run_id=interactions[0].run_id if interactions else None,
                interaction_id=entry.interrupt_id,
                reason="duplicate_entry",
            )
        if record is None:
            raise UnknownInteractionError(
                f"{entry.interrupt_id!r} is not an interrupt of this run; "
                f"open: {_open_ids(interactions)}",
                run_id=interactions[0].run_id if interactions else None,
                interaction_id=entry.interrupt_id,
                reason="unknown_interaction",
            )
        if record.kind == AWAIT_KIND:  # settled by the system once its questions are answered
            raise ConflictError(
                f"{record.id} is the run's wait for its async questions; answer those instead: "
                f"{', '.join(awaited_ids(record))}",
                run_id=record.run_id,
                interaction_id=record.id,
                reason="await",
            )
        seen.add(entry.interrupt_id)
        approvers = (
            approvers_now(record.interrupt.metadata, record.id in escalated)
            if record.answer is None
            else ()
        )
        if approvers:
            check_not_allowed(
                approvers, answered_by, groups, run_id=record.run_id, interaction_id=record.id
            )
        answer = new_answer(record, entry.status, entry.payload, answered_by=answered_by, via=via)
        if record.answer is not None:
            if not (same_as_stored(record, answer) or _agrees_with_quorum(record, answer)):
                raise ConflictError(
                    f"interaction {record.id} was already answered differently",
                    run_id=record.run_id,
                    interaction_id=record.id,
                    reason="already_answered",
                )
            outcomes[record.id] = answer_outcome(record)
            continue
        outcomes[record.id], new_answers[record.id] = validate_answer(record, answer, now=now)
        check_vote(record, new_answers[record.id])
    replay = not new_answers
    if not replay:
        missing = [r.id for r in interactions if r.is_open_blocking and r.id not in seen]
        if missing:
            raise InvalidPayloadError(
                f"the resume must answer every open interrupt; missing: {missing}",
                run_id=interactions[0].run_id,
                reason="incomplete_resume",
            )
        for record in interactions:
            if record.blocking and record.answer is not None and record.id not in outcomes:
                outcomes[record.id] = answer_outcome(record)
    return ResumePlan(new_answers=new_answers, outcomes=outcomes, replay=replay)


def _agrees_with_quorum(record: InteractionRecord, answer: InteractionAnswer) -> bool:
    """Whether ``answer`` repeats, as one approver's entry, an approval several approvers
    settled: the stored answer joins their feedback, so an entry approving with its own
    feedback (or none) is a replay of that resume, not another answer."""
    stored = record.answer
    assert stored is not None
    return (
        required_approvals_of(record.interrupt.metadata) > 1
        and vote_approves(stored.status, stored.payload)
        and vote_approves(answer.status, answer.payload)
    )


def _open_ids(interactions: Sequence[InteractionRecord]) -> list[str]:
    return [r.id for r in interactions if r.pending]
