"""What a resume gives each paused call: pure planning, no I/O.

A paused batch waits on one interrupt per awaiting call. A resume answers them (by interrupt
id). Each awaiting call then either takes the answer as its result — the default, the seed's
contract: the tool does not run again — or, for a tool declared ``resume="replay"``, runs again
with its asks returning the stored answers. The calls of the batch that had not started run
after them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from interactions import (
    Answered,
    AnsweredMultiple,
    Approved,
    AskUserInterrupt,
    AskUserOutcome,
    Declined,
    RevisionRequested,
    Unavailable,
    UsageError,
    format_interaction_outcome,
    is_awaiting,
)
from interactions.asks import AskScope
from interactions.resume import resolve_answer
from recipes._approval import is_gate
from recipes._events import PausedBatch
from recipes._tools import Tool
from recipes.messages import TextPart, ToolCall, ToolResultMessage

__all__ = ["Answer", "Answers", "ResumeResults", "answered_result", "resume_results"]

Answer = AskUserOutcome | AskUserInterrupt | Mapping[str, Any]
"""An answer to one interrupt: its outcome (``Answered(answer="blue")``), a resume payload
(``{"answer": "blue"}``, checked against the interrupt), or the interrupt carrying its outcome."""
Answers = Mapping[str, Answer]
"""Answers by interrupt id."""

_ANSWERS = (Answered, AnsweredMultiple, Approved, RevisionRequested, Declined, Unavailable)


@dataclass(frozen=True)
class ResumeResults:
    """What to do with a paused batch on resume."""

    results: list[ToolResultMessage]
    """The answers that become their calls' results (calls in the default ``answer`` mode)."""
    rerun: list[ToolCall]
    """The calls to run again (``replay`` mode), before the batch's pending calls."""
    answered: dict[str, AskUserInterrupt]
    """Every answered interrupt, carrying its outcome: what a replayed call's asks return."""


def answered_result(
    tool_call_id: str, tool_name: str, answered: AskUserInterrupt
) -> ToolResultMessage:
    """A paused call's result once answered: the outcome text, the interrupt in ``details``."""
    assert answered.outcome is not None
    return ToolResultMessage(
        tool_call_id=tool_call_id,
        tool_name=tool_name,
        content=[TextPart(text=format_interaction_outcome(answered.outcome))],
        details={"interrupt": answered.model_dump(mode="json", exclude_none=True)},
    )


def resume_results(
    paused: PausedBatch,
    answers: Answers,
    tools: Mapping[str, Tool],
    calls: Mapping[str, ToolCall],
    scope_of: Callable[[str], AskScope],
) -> ResumeResults:
    """Plan the resume of ``paused`` with ``answers``.

    ``answers`` must answer every awaiting interrupt; it may also carry earlier answers of the
    awaiting calls (a replayed call asks them again). ``calls`` are the open calls of the
    transcript by id; ``scope_of`` gives a call's ask scope (interrupt ids derive from it). Raises
    ``UsageError``, deciding nothing, for a missing or unknown id or an answer that does not
    fit its interrupt.
    """
    awaiting = {a.interrupt.id: a.interrupt for a in paused.awaiting}
    missing = [i for i in awaiting if i not in answers]
    scopes = [scope_of(a.tool_call_id) for a in paused.awaiting]
    unknown = [
        i for i in answers if i not in awaiting and not any(s.position_of(i) for s in scopes)
    ]
    if missing or unknown:
        raise UsageError(
            f"resume() must answer every awaiting interrupt {list(awaiting)}; "
            f"missing: {missing}, unknown: {unknown}"
        )
    answered = {iid: _answered(iid, awaiting.get(iid), value) for iid, value in answers.items()}
    results: list[ToolResultMessage] = []
    rerun: list[ToolCall] = []
    for call in paused.awaiting:
        tool = tools.get(call.tool_name)
        again = tool is not None and (
            tool.resume == "replay"
            or (tool.requires_approval is not False and is_gate(call.interrupt))
        )
        if again and call.tool_call_id in calls:  # a call paused on its approval runs again
            rerun.append(calls[call.tool_call_id])
        else:
            results.append(
                answered_result(call.tool_call_id, call.tool_name, answered[call.interrupt.id])
            )
    return ResumeResults(results, rerun, answered)


def _answered(iid: str, interrupt: AskUserInterrupt | None, value: object) -> AskUserInterrupt:
    if isinstance(value, AskUserInterrupt):
        if value.outcome is None or is_awaiting(value.outcome):
            raise UsageError(f"the interrupt given for {iid!r} carries no answer")
        return value
    if interrupt is None:
        raise UsageError(
            f"{iid!r} is an earlier ask of a paused call: give it as the stored interrupt "
            "carrying its outcome"
        )
    outcome: AskUserOutcome
    if isinstance(value, Mapping):
        outcome, _ = resolve_answer(interrupt, "resolved", dict(value), interaction_id=iid)
    elif isinstance(value, _ANSWERS):
        outcome = value
    elif is_awaiting(value):
        raise UsageError(f"the answer given for {iid!r} is still awaiting a human")
    else:
        raise UsageError(
            f"the answer given for {iid!r} is a {type(value).__name__}; give an outcome "
            "(Answered(answer=...)), a payload ({'answer': ...}) or the answered interrupt"
        )
    return interrupt.model_copy(update={"outcome": outcome, "response_schema": None})
