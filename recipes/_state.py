"""The session's status table and the transcript rule every run keeps.

The rule: every tool call of an assistant message gets exactly one result before the model is
called again. :func:`unanswered_calls` finds the calls that still lack one; :func:`call_key_in`
names a call uniquely in the run even when the model reused its id.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

from interactions.asks import call_key
from recipes._events import SessionStatus
from recipes.messages import AssistantMessage, Message, ToolCall, ToolResultMessage

__all__ = ["TRANSITIONS", "call_key_in", "unanswered_calls"]

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


def call_key_in(messages: Sequence[Message], tool_call_id: str) -> str:
    """The key of the latest call ``tool_call_id`` in ``messages``: its id, qualified by how
    many assistant messages used that id (some models reuse ids across turns), so the
    interrupt ids derived from it stay unique in the run."""
    uses = sum(
        1
        for m in messages
        if isinstance(m, AssistantMessage) and any(c.id == tool_call_id for c in m.tool_calls)
    )
    return call_key(tool_call_id, max(uses, 1))
