"""The runner's decisions, as pure functions: what a leg's end writes, what a resume hands the
session, which expired interactions to settle and how. No store, no model, no recipe loader:
the graph engine and other drivers reuse them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from interactions import AskUserInterrupt, RunError
from interactions.asks import ROOT_SCOPE, AskScope
from interactions.async_questions import AWAIT_KIND, AWAIT_REASON, open_for_pause
from interactions.resume import answer_outcome
from interactions.store import InteractionRecord, NewInteraction, RunStatus
from recipes._events import AwaitingCall, PausedBatch
from recipes._state import call_key_in
from recipes.messages import AssistantMessage, Message
from recipes.models._errors import ModelError
from recipes.runs._checkpoint import AwaitingRef, ExpiryPolicy, PausedCalls

RESUMABLE_ERROR_CLASSES = frozenset({"usage_window", "unavailable", "transient_exhausted"})
"""Model failure classes that pass with time: such a run ends ``failed_resumable``."""


@dataclass(frozen=True)
class LegEnd:
    """Where a leg stopped, as the store records it."""

    status: RunStatus
    interrupts: list[AskUserInterrupt]
    error: str | None = None
    error_code: str | None = None


def leg_end(
    session_status: str,
    paused: PausedBatch | None,
    error: BaseException | None,
    *,
    continuing: bool = False,
) -> LegEnd:
    """The status a leg ends in: failed (resumable or not), paused on its interrupts,
    cancelled (aborted) or finished.

    ``continuing`` says the leg continues a run (a resume or a retry): there an auth failure is
    resumable too — the run holds a human's answers, and a key set in this process cures it.
    """
    if error is not None or session_status == "failed":
        message = describe_error(error) if error is not None else "the run failed"
        cured_by_a_key = continuing and getattr(error, "error_class", None) == "auth"
        status = (
            RunStatus.FAILED_RESUMABLE if resumable(error) or cured_by_a_key else RunStatus.FAILED
        )
        code = (getattr(error, "reason", None) or type(error).__name__) if error else None
        return LegEnd(status, [], message, code)
    if session_status == "paused" and paused is not None:
        return LegEnd(RunStatus.PAUSED_WAITING_HUMAN, paused.interrupts)
    if session_status == "aborted":
        return LegEnd(RunStatus.CANCELLED, [])
    return LegEnd(RunStatus.FINISHED, [])


def resumable(error: BaseException | None) -> bool:
    """Whether a failure may pass with time (a model's usage window, outage, retries), or with
    a retry (a run that made its ``max_turns`` model calls)."""
    if getattr(error, "reason", None) == "max_turns":
        return True  # the transcript is whole: a retry calls the model again, with a new bound
    return isinstance(error, ModelError) and error.error_class in RESUMABLE_ERROR_CLASSES


def describe_error(error: BaseException) -> str:
    """One line naming a failure: its type and message (a ``MemoryError``, which has none,
    says what it means)."""
    text = str(error)
    if not text and isinstance(error, MemoryError):
        text = "the process ran out of memory"
    return f"{type(error).__name__}: {text}"


def checkpoint_paused(paused: PausedBatch | None) -> PausedCalls | None:
    """What the checkpoint keeps of a paused batch: ids, not the interrupts."""
    if paused is None:
        return None
    refs = [
        AwaitingRef(tool_call_id=a.tool_call_id, tool_name=a.tool_name, interrupt_id=a.interrupt.id)
        for a in paused.awaiting
    ]
    return PausedCalls(awaiting=refs, pending=paused.pending)


def new_interaction(interrupt: AskUserInterrupt) -> NewInteraction:
    """The interaction a pause stores for ``interrupt`` (its descriptor stored once): of kind
    ``await`` for the ``await_answers`` tool's pause, a blocking question otherwise."""
    if interrupt.reason == AWAIT_REASON:
        return NewInteraction.of(interrupt, kind=AWAIT_KIND)
    return NewInteraction.of(interrupt)


def answered_interrupt(record: InteractionRecord) -> AskUserInterrupt:
    """A stored, answered interaction as its interrupt carrying the answer's outcome."""
    return record.interrupt.model_copy(
        update={"outcome": answer_outcome(record), "response_schema": None}
    )


def session_resume(
    paused: PausedCalls,
    messages: Sequence[Message],
    interactions: Sequence[InteractionRecord],
    scope: AskScope = ROOT_SCOPE,
) -> tuple[PausedBatch, dict[str, AskUserInterrupt]]:
    """What a session restored from the checkpoint needs to resume: the paused batch (its
    interrupts read back from the store) and the answers of every ask of the awaiting calls
    (a replayed call asks its earlier questions again). ``scope`` is the session's ask scope
    (a graph node's visit); an id a checkpoint written before scopes kept without it is read
    in it (:meth:`~interactions.asks.AskScope.adopt`)."""
    by_id = {record.id: record for record in interactions}
    paused = paused.model_copy(update={"awaiting": [
        a.model_copy(update={"interrupt_id": scope.adopt(a.interrupt_id)}) for a in paused.awaiting
    ]})  # fmt: skip
    missing = [a.interrupt_id for a in paused.awaiting if a.interrupt_id not in by_id]
    if missing:
        raise RunError(
            f"the run's checkpoint waits on {missing}, which the store does not hold",
            reason="corrupt_checkpoint",
        )
    batch = PausedBatch(
        awaiting=[
            AwaitingCall(
                tool_call_id=a.tool_call_id,
                tool_name=a.tool_name,
                interrupt=by_id[a.interrupt_id].interrupt,
            )
            for a in paused.awaiting
        ],
        pending=paused.pending,
    )
    scopes = [scope.keyed(call_key_in(messages, a.tool_call_id)) for a in paused.awaiting]
    answers = {
        record.id: answered_interrupt(record)
        for record in interactions
        if record.answer is not None and any(s.position_of(record.id) for s in scopes)
    }
    return batch, answers


def expiry_policy_of(checkpoint: Mapping[str, Any]) -> ExpiryPolicy:
    """A run's expiry policy, from the ``expiry_policy`` key every kind's checkpoint keeps at
    its top level (``decline`` when absent or unknown)."""
    policy = checkpoint.get("expiry_policy")
    return "fail" if policy == "fail" else "decline"


@dataclass(frozen=True)
class ExpiryPlan:
    """What the expiry sweep does to one paused run."""

    due: list[InteractionRecord]
    """What the pause waits on (open blocking interactions, async questions an ``await``
    lists) past ``expires_at``, to settle as ``expired``."""
    fail: bool
    """The run's policy fails it (and closes every open interaction), rather than declining."""


def plan_expiry(
    policy: ExpiryPolicy, interactions: Sequence[InteractionRecord], now: datetime
) -> ExpiryPlan | None:
    """The expiry plan of a paused run (``None`` when nothing is due)."""
    due = [r for r in open_for_pause(interactions) if r.expires_at <= now]
    if not due:
        return None
    return ExpiryPlan(due=due, fail=policy == "fail")


def last_text(messages: Sequence[Message]) -> str:
    """The last assistant text of a transcript ("" when there is none)."""
    for message in reversed(messages):
        if isinstance(message, AssistantMessage) and message.text:
            return message.text
    return ""
