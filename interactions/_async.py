"""Async questions: ask, keep working, sync later (Iterion's ADR-081, names and texts kept).

An async question is an interaction of kind ``async``: posted by ``ask_user_async``, it never
pauses the run. Its answer is delivered to the asking agent as a message at a turn boundary
(:func:`answer_message`), and a sync point (the ``await_answers`` tool, or a graph's
``await_answers`` node) collects the answers (:func:`collected_text`). When the tool finds
questions still pending, the run pauses on an interaction of kind ``await`` listing them
(:func:`await_interrupt`); answering the last one settles it (:func:`settle_awaits`) and the
run continues.

Everything here is pure: the records in, decisions and texts out. Refusals are typed:
:class:`~interactions.UsageError` for a question that can never be asked,
:class:`~interactions.InvalidPayloadError` for a resume that leaves an awaited question open.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Final, Literal

from interactions._ask import OptionLike, _descriptor, normalize_options
from interactions._chain import AUTO_APPROVE_ENV, _auto_resolving, env_flag
from interactions._errors import InvalidPayloadError, UsageError
from interactions._models import AskUserInterrupt, AwaitingUser, QuestionRequest
from interactions._schemas import AnswerPayload, schema_of
from interactions.store._records import (
    InteractionAnswer,
    InteractionRecord,
    NewInteraction,
    iso_seconds,
)

ASYNC_KIND: Final[Literal["async"]] = "async"
"""The kind of an interaction posted by ``ask_user_async``: the run goes on."""
AWAIT_KIND: Final[Literal["await"]] = "await"
"""The kind of the pause the ``await_answers`` tool makes while questions are pending."""
AWAIT_REASON = "pi_recipes.await_answers"
"""The (namespaced) interrupt reason of an ``await`` pause."""

MESSAGE_QUEUED = "user_message_queued"
"""Event: an async answer waits to be delivered to its node's agent ``{interaction_id,
node_id}``."""
MESSAGE_DELIVERED = "user_message_delivered"
"""Event: the answer was handed to the agent at a turn boundary ``{interaction_id, node_id}``."""
MESSAGE_CANCELLED = "user_message_cancelled"
"""Event: a queued answer was superseded (a sync point returned it) ``{interaction_id}``."""

ALL_ANSWERED_HEADER = "All posted questions are answered:"

ASYNC_PROMPT_SECTION = """\
[ASYNC QUESTIONS]
You can ask the operator questions without stopping your work:
- ask_user_async(question, options?, allow_free_text?) posts a question and returns at once.
  Post every question you have early, in one go, then keep working on what does not depend
  on the answers (use placeholders where you need them).
- An answer arrives as a message "[Answer to question <id>] Q: ... — A: ..." between your
  steps; use it as soon as it comes.
- await_answers() waits for every posted question; call it only when you are truly blocked,
  never to check on answers."""
"""The system-prompt section of an agent that has the async tools. It names those two tools
only, the ones given with it: no blocking ask tool comes with them (a recipe's own tools,
those that ask and wait among them, are described to the model by their own descriptions)."""

_ID_TAIL = re.compile(r"_async_(\d+)$")


def async_interaction_id(run_id: str, scope: str, existing: Iterable[str]) -> str:
    """``<run>_<scope>_async_<n>``: ``n`` is the highest ``n`` already used in ``existing``
    for this run and scope, plus one (collision-proof across loops and resumes)."""
    prefix = f"{run_id}_{scope}_async_"
    used = [
        int(match.group(1))
        for iid in existing
        if iid.startswith(prefix) and (match := _ID_TAIL.search(iid)) is not None
    ]
    return f"{prefix}{max(used, default=0) + 1}"


def async_interaction(
    interaction_id: str,
    question: str,
    *,
    options: Iterable[OptionLike] | None = None,
    allow_free_text: bool | None = None,
    node_id: str = "",
    tool_call_id: str = "",
    expires_at: datetime,
) -> NewInteraction:
    """The interaction ``ask_user_async`` stores: a question (free text unless options say
    otherwise; ``allow_free_text`` defaults to true without options) of kind ``async``.

    Raises :class:`~interactions.UsageError` for an empty question, bad options, or
    ``allow_free_text=False`` without options (no answer could be given).
    """
    if not isinstance(question, str) or not question.strip():
        raise UsageError("question must be a non-empty string")
    normalized = normalize_options(options)
    if allow_free_text is False and not normalized:
        raise UsageError(
            "allow_free_text=false needs options to choose from: give options, or allow a "
            "typed answer"
        )
    free = (not normalized) if allow_free_text is None else bool(allow_free_text)
    request = QuestionRequest(
        question=question.strip(),
        options=normalized,
        allow_other=free or not normalized,
        metadata={"async": True},
    )
    interrupt = _descriptor(
        request, interaction_id, tool_call_id, iso_seconds(expires_at),
        AwaitingUser(interrupt_id=interaction_id),
    )
    return NewInteraction.of(interrupt, kind=ASYNC_KIND, node_id=node_id)


def answered_at_once(env: Mapping[str, str]) -> InteractionAnswer | None:
    """The answer an async question gets the moment it is posted where no human is asked (the
    channel chain's first two rules: an auto-resolving scope, or ``PI_ASK_USER_AUTO_APPROVE``
    on in ``env``): a decline, so a sync point never waits in CI. ``None`` elsewhere."""
    if _auto_resolving.get():
        return InteractionAnswer(status="cancelled", answered_by="system", via="auto-resolve")
    if env_flag(env, AUTO_APPROVE_ENV):
        return InteractionAnswer(status="cancelled", answered_by="system", via="auto-approve")
    return None


def posted_text(interaction_id: str) -> str:
    """What ``ask_user_async`` returns: the question is posted; keep working."""
    return (
        f"Question posted as {interaction_id}; keep working. The answer arrives as a message "
        f'"[Answer to question {interaction_id}] ..." when the operator replies. Call '
        "await_answers only when you cannot proceed without it."
    )


def question_of(record: InteractionRecord) -> str:
    """The question an interaction asks (for one stored in a form this version cannot read,
    its id and why: ``int-a (unreadable: reason: Field required)``)."""
    why = record.unreadable
    if why is not None:
        return f"{record.id} (unreadable: {why})"
    return record.interrupt.message or record.id


def answer_text(record: InteractionRecord) -> str:
    """The answer of an answered interaction as text: the answer (several joined by ``, ``),
    or what became of the question (declined, expired)."""
    answer = record.answer
    if answer is None:
        return "(not answered yet)"
    if answer.status == "expired":
        return "(no answer: the question expired)"
    if answer.status == "cancelled":
        return "(no answer: the operator declined)"
    payload = answer.payload if isinstance(answer.payload, Mapping) else {}
    if isinstance(payload.get("answers"), list):
        return ", ".join(str(a) for a in payload["answers"])
    value = payload.get("answer")
    return value if isinstance(value, str) else str(value)


def answer_message(record: InteractionRecord) -> str:
    """The message delivering an answer to the asking agent:
    ``[Answer to question <id>] Q: "<question>" — A: <answer>``."""
    return f'[Answer to question {record.id}] Q: "{question_of(record)}" — A: {answer_text(record)}'


def answer_line(record: InteractionRecord) -> str:
    """One line of :func:`collected_text`: ``- [<id>] Q: <question> — A: <answer>``."""
    return f"- [{record.id}] Q: {question_of(record)} — A: {answer_text(record)}"


def collected_text(records: Sequence[InteractionRecord]) -> str:
    """What a sync point returns once every posted question is answered: the header, then
    one :func:`answer_line` per answered async question, oldest first."""
    answered = [r for r in records if r.kind == ASYNC_KIND and r.answer is not None]
    return "\n".join([ALL_ANSWERED_HEADER, *(answer_line(r) for r in answered)])


def pending_async(
    records: Iterable[InteractionRecord], node_id: str | None = None
) -> list[InteractionRecord]:
    """The async questions still waiting for an answer (of one asking node, when given)."""
    return [
        r
        for r in records
        if r.kind == ASYNC_KIND and r.pending and (node_id is None or r.node_id == node_id)
    ]


def await_interrupt(
    interaction_id: str,
    tool_call_id: str,
    pending: Sequence[InteractionRecord],
    expires_at: datetime,
) -> AskUserInterrupt:
    """The interrupt of an ``await`` pause: it lists the pending questions (``metadata``
    ``pending``: their ids; ``questions``: ``{interaction_id, question}`` each)."""
    ids = [r.id for r in pending]
    return AskUserInterrupt(
        id=interaction_id,
        reason=AWAIT_REASON,
        message=f"Waiting for the answers to {', '.join(ids)}",
        tool_call_id=tool_call_id,
        response_schema=schema_of(AnswerPayload),
        expires_at=iso_seconds(expires_at),
        metadata={
            "kind": AWAIT_KIND,
            "pending": ids,
            "questions": [{"interaction_id": r.id, "question": question_of(r)} for r in pending],
        },
        outcome=AwaitingUser(interrupt_id=interaction_id),
    )


def awaited_ids(record: InteractionRecord) -> list[str]:
    """The ids an ``await`` interaction waits for (``[]`` for any other kind)."""
    if record.kind != AWAIT_KIND:
        return []
    pending = (record.descriptor.get("metadata") or {}).get("pending") or []
    return [str(i) for i in pending]


def open_for_pause(records: Sequence[InteractionRecord]) -> list[InteractionRecord]:
    """What a paused run waits for: its open blocking interactions, and the pending async
    questions an open ``await`` lists (an ``await`` itself is settled by the system)."""
    by_id = {r.id: r for r in records}
    waited: dict[str, InteractionRecord] = {}
    for record in records:
        if record.kind == AWAIT_KIND and record.pending:
            for iid in awaited_ids(record):
                found = by_id.get(iid)
                if found is not None and found.pending:
                    waited[iid] = found
    return [r for r in records if r.is_open_blocking or r.id in waited]


def waited_for(
    new: Sequence[AskUserInterrupt], pending: Sequence[InteractionRecord]
) -> list[AskUserInterrupt]:
    """What a pause waits for, as a host shows it (and a ``RUN_FINISHED`` interrupt outcome
    lists): what the run's stored ``pending`` interactions leave open (:func:`open_for_pause`:
    blocking questions, async ones an open ``await`` lists), then the pause's ``new`` questions,
    an ``await_answers`` wait standing for the async questions it lists (answered one by one;
    the wait itself is settled by the system). Each once, in that order."""
    by_id = {r.id: r for r in pending}
    shown = [r.interrupt for r in open_for_pause(pending)]
    for interrupt in new:
        if interrupt.reason != AWAIT_REASON:
            shown.append(interrupt)
            continue
        for iid in (interrupt.metadata or {}).get("pending", []):
            if iid in by_id and all(s.id != iid for s in shown):
                shown.append(by_id[iid].interrupt)
    return shown


def settle_awaits(
    records: Sequence[InteractionRecord],
    new_answers: Mapping[str, InteractionAnswer] | None = None,
    *,
    via: str | None = None,
) -> dict[str, InteractionAnswer]:
    """The answers that settle every open ``await`` once its questions are answered (stored,
    or among ``new_answers``): ``{answer: collected_text}`` by the system.

    Raises :class:`~interactions.InvalidPayloadError` (reason ``incomplete_resume``) when an
    open ``await`` still lists an unanswered question.
    """
    given = dict(new_answers or {})
    answered = [
        r.model_copy(update={"answer": given[r.id], "answered_at": r.requested_at})
        if r.id in given and r.pending
        else r
        for r in records
    ]
    by_id = {r.id: r for r in answered}
    settled: dict[str, InteractionAnswer] = {}
    for record in answered:
        if record.kind != AWAIT_KIND or not record.pending:
            continue
        waiting = [i for i in awaited_ids(record) if i in by_id and by_id[i].pending]
        if waiting:
            raise InvalidPayloadError(
                f"run {record.run_id} still waits for answers to {waiting}",
                run_id=record.run_id,
                interaction_id=waiting[0],
                reason="incomplete_resume",
            )
        settled[record.id] = InteractionAnswer(
            status="resolved",
            payload={"answer": collected_text(answered)},
            answered_by="system",
            via=via,
        )
    return settled
