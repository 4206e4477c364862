"""The session's status table and the transcript rule every run keeps.

The rule: every tool call of an assistant message gets exactly one result before the model is
called again. :func:`unanswered_calls` finds the calls that still lack one; :func:`answer_for`
turns what a resume gives for a paused call into that call's result.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from interactions import UsageError
from recipes._events import SessionStatus
from recipes._tools import to_tool_result
from recipes.messages import AssistantMessage, Message, ToolCall, ToolResultMessage

__all__ = ["TRANSITIONS", "answer_for", "unanswered_calls"]

TRANSITIONS: Mapping[SessionStatus, frozenset[SessionStatus]] = MappingProxyType(
    {
        "idle": frozenset({"running"}),
        "running": frozenset({"idle", "paused", "aborted", "failed"}),
        "paused": frozenset({"running", "aborted"}),
        "aborted": frozenset({"running"}),
        "failed": frozenset({"running"}),
    }
)
"""The legal status moves of a session; anything else is an ``IllegalTransitionError``."""


def unanswered_calls(messages: list[Message]) -> list[ToolCall]:
    """The tool calls of the last assistant message that have no result after it."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, AssistantMessage):
            answered = {
                m.tool_call_id for m in messages[index + 1 :] if isinstance(m, ToolResultMessage)
            }
            return [c for c in message.tool_calls if c.id not in answered]
    return []


def answer_for(placeholder: ToolResultMessage, value: object) -> ToolResultMessage:
    """The result of a paused call from what a resume gave for it (a ``ToolResultMessage``
    for that call, or anything a tool may return). Raises ``UsageError`` for a result of
    another call, or one that is still awaiting."""
    if isinstance(value, ToolResultMessage):
        if value.tool_call_id != placeholder.tool_call_id:
            raise UsageError(
                f"the result given for {placeholder.tool_call_id!r} is for {value.tool_call_id!r}"
            )
        return value
    result = to_tool_result(value)
    if result.pause:
        raise UsageError(f"the result given for {placeholder.tool_call_id!r} is still awaiting")
    return ToolResultMessage(
        tool_call_id=placeholder.tool_call_id,
        tool_name=placeholder.tool_name,
        content=result.content,
        details=result.details or None,
    )
