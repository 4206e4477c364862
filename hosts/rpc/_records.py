"""The session's events as RPC records. Pure: no I/O.

Each event is written as its own JSON (``event.model_dump(mode="json")``: snake_case fields,
a literal ``type``), plus the fields a pi client reads, alongside ours:

=====================  ===============================================================
event                  added for pi clients
=====================  ===============================================================
message_update         ``assistantMessageEvent``: ``{"type": "text_delta", "delta"}`` for
                       text, ``{"type": "toolcall_delta", "delta", "toolCallId"}`` (and
                       ``toolName`` on the first piece) for a tool call's arguments
tool_execution_start   ``toolCallId``, ``toolName``, ``args``
tool_execution_update  ``toolCallId``, ``toolName``
tool_execution_end     ``toolCallId``, ``toolName``, ``isError``
=====================  ===============================================================

The host's own notices are built here too (:func:`ignored_response`).
"""

from __future__ import annotations

from typing import Any

from recipes.events import (
    AgentEvent,
    MessageUpdate,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
)
from recipes.models import TextDelta

__all__ = ["event_record", "ignored_response"]

IGNORED_REASON = "unknown or closed dialog"


def event_record(event: AgentEvent) -> dict[str, Any]:
    """The record of one session event (see the module docstring)."""
    record = event.model_dump(mode="json")
    if isinstance(event, MessageUpdate):
        record["assistantMessageEvent"] = _assistant_message_event(event)
    elif isinstance(event, ToolExecutionStart | ToolExecutionUpdate | ToolExecutionEnd):
        record["toolCallId"] = event.tool_call_id
        record["toolName"] = event.tool_name
        if isinstance(event, ToolExecutionStart):
            record["args"] = record["arguments"]
        elif isinstance(event, ToolExecutionEnd):
            record["isError"] = event.result.is_error
    return record


def _assistant_message_event(event: MessageUpdate) -> dict[str, Any]:
    delta = event.delta
    if isinstance(delta, TextDelta):
        return {"type": "text_delta", "delta": delta.delta}
    piece: dict[str, Any] = {
        "type": "toolcall_delta",
        "delta": delta.arguments_delta,
        "toolCallId": delta.id,
    }
    if delta.name is not None:
        piece["toolName"] = delta.name
    return piece


def ignored_response(frame: dict[str, Any]) -> dict[str, Any]:
    """The notice for an ``extension_ui_response`` no open dialog waits for (late, unknown,
    or answering a dialog already closed): it is dropped, and the client is told so."""
    return {
        "type": "extension_ui_response_ignored",
        "id": frame.get("id"),
        "reason": IGNORED_REASON,
    }
