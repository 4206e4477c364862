"""The session's events as pi 1.6 session-event records (``docs/json.md``). Pure: no I/O.

:class:`EventRecords` turns each event into the records pi writes for it; it keeps the little
state pi's records need (the content index of each streamed block, each running tool's
arguments, the messages of the current run). Messages are in pi's shapes
(:mod:`hosts.rpc._messages`).

=====================  ===========================================================================
event                  record (fields beyond pi's in *italics* below)
=====================  ===========================================================================
agent_start            ``{}`` + *agent*
turn_start             ``{}`` + *turn*
message_start/_end     ``message``
message_update         ``usage``, ``assistantMessageEvent``: ``text_start``/``text_delta``/
                       ``text_end``, ``toolcall_start``/``toolcall_delta``/``toolcall_end`` with
                       their ``contentIndex`` (one event may give several records)
turn_end               ``message``, ``toolResults`` + *turn*
tool_execution_start   ``toolCallId``, ``toolName``, ``args``
tool_execution_update  ``toolCallId``, ``toolName``, ``args``, ``partialResult``
tool_execution_end     ``toolCallId``, ``toolName``, ``result`` (``content``, ``details``),
                       ``isError`` + *paused* (when the result awaits a human)
agent_end              ``messages`` (those of the run), ``willRetry`` (always false) + *status*
                       (``idle``/``paused``/``aborted``/``failed``), *error* (why it aborted or
                       failed), *awaiting* (the tool call ids a paused run waits for)
=====================  ===========================================================================

``agent_settled`` and ``queue_update`` come from the host, not from one event (see
:mod:`hosts.rpc._notices`).
"""

from __future__ import annotations

import json
from typing import Any

from hosts.rpc._messages import Timestamps, pi_content, pi_message, pi_usage
from recipes.events import (
    AgentEnd,
    AgentEvent,
    AgentStart,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    TurnEnd,
    TurnStart,
)
from recipes.messages import AssistantMessage, Message
from recipes.models import TextDelta, ToolCallDelta

__all__ = ["EventRecords"]

Record = dict[str, Any]
_TEXT = "\x00text"  # the key of the text block (tool call ids are the others)


class EventRecords:
    """Translates one session's events, in order, into records."""

    def __init__(self, model_name: str, stamps: Timestamps) -> None:
        self._model_name = model_name
        self._stamps = stamps
        self._run_messages: list[Record] = []
        self._tool_args: dict[str, dict[str, Any]] = {}
        self._stream = _Blocks()

    def message(self, message: Message) -> Record:
        """A transcript message in pi's shape, with its stable timestamp."""
        return pi_message(
            message, timestamp=self._stamps.of(message), model_name=self._model_name
        )

    def records(self, event: AgentEvent) -> list[Record]:
        """The records of ``event`` (see the module docstring)."""
        match event:
            case AgentStart():
                self._run_messages = []
                return [{"type": "agent_start", "agent": event.agent}]
            case TurnStart():
                return [{"type": "turn_start", "turn": event.turn}]
            case MessageStart(message=AssistantMessage() as streaming):
                self._stream = _Blocks()
                record = pi_message(
                    streaming,
                    timestamp=self._stamps.now(),
                    model_name=self._model_name,
                    streaming=True,
                )
                return [{"type": "message_start", "message": record}]
            case MessageStart():
                return [{"type": "message_start", "message": self.message(event.message)}]
            case MessageUpdate():
                return [_update(e) for e in self._stream.feed(event.delta)]
            case MessageEnd():
                ends = self._stream.close() if isinstance(event.message, AssistantMessage) else []
                self._stream = _Blocks()
                message = self.message(event.message)
                self._run_messages.append(message)
                return [*(_update(e) for e in ends), {"type": "message_end", "message": message}]
            case TurnEnd():
                return [
                    {
                        "type": "turn_end",
                        "turn": event.turn,
                        "message": self.message(event.message),
                        "toolResults": [self.message(m) for m in event.tool_results],
                    }
                ]
            case ToolExecutionStart():
                self._tool_args[event.tool_call_id] = event.arguments
                return [_tool("tool_execution_start", event.tool_call_id, event.tool_name)
                        | {"args": event.arguments}]
            case ToolExecutionUpdate():
                partial = {"content": pi_content(event.partial.content),
                           "details": event.partial.details}
                return [_tool("tool_execution_update", event.tool_call_id, event.tool_name)
                        | {"args": self._tool_args.get(event.tool_call_id, {}),
                           "partialResult": partial}]
            case ToolExecutionEnd():
                self._tool_args.pop(event.tool_call_id, None)
                result = event.result
                record = _tool("tool_execution_end", event.tool_call_id, event.tool_name) | {
                    "result": {"content": pi_content(result.content),
                               "details": result.details or {}},
                    "isError": result.is_error,
                }
                return [record | {"paused": True} if event.paused else record]
            case AgentEnd():
                return [self._agent_end(event)]
        return []

    def _agent_end(self, event: AgentEnd) -> Record:
        record: Record = {
            "type": "agent_end",
            "messages": self._run_messages,
            "willRetry": False,
            "status": event.status,
        }
        self._run_messages = []
        if event.error is not None:
            record["error"] = event.error
        if event.paused is not None:
            record["awaiting"] = event.paused.awaiting_call_ids
        return record


def _tool(kind: str, call_id: str, name: str) -> Record:
    return {"type": kind, "toolCallId": call_id, "toolName": name}


def _update(assistant_event: Record) -> Record:
    return {"type": "message_update", "usage": pi_usage(None),
            "assistantMessageEvent": assistant_event}


class _Blocks:
    """The content blocks of one streaming assistant message, as pi numbers them."""

    def __init__(self) -> None:
        self._index: dict[str, int] = {}
        self._names: dict[str, str] = {}
        self._text: dict[str, str] = {}  # text so far, or a tool call's argument JSON so far
        self._open: str | None = None

    def feed(self, delta: TextDelta | ToolCallDelta) -> list[Record]:
        """The assistant message events of one delta."""
        key = _TEXT if isinstance(delta, TextDelta) else delta.id
        out: list[Record] = []
        if key not in self._index:
            out += self.close()
            self._index[key] = index = len(self._index)
            self._open = key
            if isinstance(delta, TextDelta):
                out.append({"type": "text_start", "contentIndex": index})
            else:
                self._names[key] = delta.name or ""
                out.append({"type": "toolcall_start", "contentIndex": index, "id": delta.id,
                            "toolName": delta.name or ""})
        piece = delta.delta if isinstance(delta, TextDelta) else delta.arguments_delta
        self._text[key] = self._text.get(key, "") + piece
        if piece:
            kind = "text_delta" if isinstance(delta, TextDelta) else "toolcall_delta"
            out.append({"type": kind, "contentIndex": self._index[key], "delta": piece})
        return out

    def close(self) -> list[Record]:
        """The end event of the open block, if one is open."""
        key, self._open = self._open, None
        if key is None:
            return []
        index, so_far = self._index[key], self._text.get(key, "")
        if key == _TEXT:
            return [{"type": "text_end", "contentIndex": index, "content": so_far}]
        try:
            arguments = json.loads(so_far) if so_far.strip() else {}
        except ValueError:
            arguments = {}
        call = {"type": "toolCall", "id": key, "name": self._names[key],
                "arguments": arguments if isinstance(arguments, dict) else {}}
        return [{"type": "toolcall_end", "contentIndex": index, "toolCall": call}]
