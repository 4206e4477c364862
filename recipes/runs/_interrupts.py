"""Between a paused session and the store: interrupts out of placeholders, answers back in.

Pure conversions. A paused call's placeholder result carries its interrupt descriptor; the
runner stores it as an interaction, and on resume turns the stored answer into the call's real
result: the outcome text of the answer (the tool body is not run again).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from interactions import (
    AskUserInterrupt,
    UsageError,
    format_interaction_outcome,
    interrupt_id_for,
)
from interactions._resume import answer_outcome
from interactions.store import InteractionRecord, NewInteraction
from recipes.messages import TextPart, ToolResultMessage

__all__ = ["answered_result", "interrupt_of", "new_interaction"]


def interrupt_of(placeholder: ToolResultMessage) -> AskUserInterrupt:
    """The interrupt a paused call's placeholder result carries (or a plain one)."""
    raw = (placeholder.details or {}).get("interrupt")
    if isinstance(raw, Mapping):
        interrupt = AskUserInterrupt.model_validate(raw)
        if interrupt.id == interrupt_id_for(placeholder.tool_call_id):
            return interrupt
        return interrupt.model_copy(update={"id": interrupt_id_for(placeholder.tool_call_id)})
    raise UsageError(
        f"tool {placeholder.tool_name!r} paused the run without an interrupt descriptor in "
        "details['interrupt']; return the result of ask_user_question/ask_user_approval"
    )


def new_interaction(interrupt: AskUserInterrupt) -> NewInteraction:
    assert interrupt.expires_at, "interrupts always carry expires_at"
    return NewInteraction(
        id=interrupt.id,
        tool_call_id=interrupt.tool_call_id or interrupt.id.removeprefix("int-"),
        expires_at=datetime.fromisoformat(interrupt.expires_at),
        descriptor=interrupt.model_dump(mode="json", by_alias=True, exclude_none=True),
    )


def answered_result(placeholder: ToolResultMessage, record: InteractionRecord) -> ToolResultMessage:
    """The paused call's real result: the outcome text of its answer."""
    outcome = answer_outcome(record)
    descriptor = AskUserInterrupt.model_validate(record.descriptor).model_copy(
        update={"outcome": outcome, "response_schema": None}
    )
    return placeholder.model_copy(
        update={
            "content": [TextPart(text=format_interaction_outcome(outcome))],
            "details": {
                **(placeholder.details or {}),
                "interrupt": descriptor.model_dump(mode="json"),
                "answered_by": record.answer.answered_by if record.answer else None,
            },
        }
    )
