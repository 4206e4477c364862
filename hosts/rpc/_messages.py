"""Transcript messages in pi's shapes (pi 1.6 ``docs/message-types.md``). Pure: no I/O.

=============  =================================================================================
ours           on the wire
=============  =================================================================================
user           ``{"role": "user", "content": [TextContent | ImageContent], "timestamp"}``
assistant      ``{"role": "assistant", "content": [ThinkingContent*, TextContent?, ToolCall*],
               "api", "provider", "model", "usage", "stopReason", "timestamp"}`` (a redacted
               thinking block: no text, ``redacted``, its data as ``thinkingSignature``)
tool           ``{"role": "toolResult", "toolCallId", "toolName", "content", "details"?,
               "isError", "timestamp"}``
=============  =================================================================================

``provider``/``model`` come from the message's ``provider:model`` name (the session's model for
a message still streaming); ``api`` is the provider's name, as we do not speak pi's provider
APIs. ``usage`` carries the token counts the provider reported (0 when it reported none); cost is
not tracked and is 0. ``stopReason`` is pi's word for the provider's (``end_turn``/``stop`` →
``stop``, ``tool_use`` → ``toolUse``, ``max_tokens`` → ``length``, ``aborted``; ``pending``
while streaming) with the provider's own word in ``rawStopReason`` when it differs.
``timestamp`` is in milliseconds since the epoch: when the host first saw the message
(:class:`Timestamps`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from recipes.messages import (
    AssistantMessage,
    ImagePart,
    Message,
    TextPart,
    Thinking,
    ToolResultMessage,
    Usage,
    UserMessage,
)

__all__ = ["Timestamps", "pi_content", "pi_message", "pi_model", "pi_usage", "split_model_name"]

_STOP_REASONS = {
    "end_turn": "stop",
    "stop": "stop",
    "stop_sequence": "stop",
    "tool_use": "toolUse",
    "tool_calls": "toolUse",
    "max_tokens": "length",
    "length": "length",
    "aborted": "aborted",
    "error": "error",
}


class Timestamps:
    """The time each message was first seen (ms since the epoch), stable for its lifetime.

    Messages are frozen and the transcript keeps the very objects the session emitted, so a
    message is known by its identity; the table keeps each message it stamped alive.
    """

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._seen: dict[int, tuple[Message, int]] = {}

    def of(self, message: Message) -> int:
        """The message's timestamp, stamping it now if it is new."""
        known = self._seen.get(id(message))
        if known is not None and known[0] is message:
            return known[1]
        stamp = int(self._clock() * 1000)
        self._seen[id(message)] = (message, stamp)
        return stamp

    def now(self) -> int:
        """The current time in ms, for a message not kept (one still streaming)."""
        return int(self._clock() * 1000)


def split_model_name(name: str) -> tuple[str, str]:
    """``("provider", "model")`` of a ``provider:model`` name (``("", name)`` without one)."""
    provider, _, model = name.partition(":")
    return (provider, model) if model else ("", name)


def pi_model(name: str) -> dict[str, Any]:
    """The ``get_state`` model: the parts of pi's ``Model`` we know (``id``, ``name``,
    ``provider``, ``api``); context window, costs and the like are left out."""
    provider, model = split_model_name(name)
    return {"id": model, "name": name, "provider": provider, "api": provider}


def pi_content(parts: Sequence[TextPart | ImagePart]) -> list[dict[str, Any]]:
    """Content parts as pi's ``TextContent`` / ``ImageContent``."""
    return [
        {"type": "text", "text": p.text}
        if isinstance(p, TextPart)
        else {"type": "image", "data": p.data, "mimeType": p.mime_type}
        for p in parts
    ]


def pi_usage(usage: Usage | None) -> dict[str, Any]:
    """pi's ``Usage`` of the token counts a provider reported (cost is not tracked: 0)."""
    u = usage or Usage()
    return {
        "input": u.input_tokens,
        "output": u.output_tokens,
        "cacheRead": u.cache_read_tokens,
        "cacheWrite": u.cache_write_tokens,
        "totalTokens": u.input_tokens + u.output_tokens + u.cache_read_tokens
        + u.cache_write_tokens,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }


def _thinking(thinking: Thinking) -> dict[str, Any]:
    if thinking.redacted:
        return {"type": "thinking", "thinking": "", "thinkingSignature": thinking.redacted,
                "redacted": True}  # fmt: skip
    block = {"type": "thinking", "thinking": thinking.text}
    return block | ({"thinkingSignature": thinking.signature} if thinking.signature else {})


def _assistant(message: AssistantMessage, model_name: str, streaming: bool) -> dict[str, Any]:
    provider, model = split_model_name(message.model or model_name)
    content: list[dict[str, Any]] = [_thinking(t) for t in message.thinking]
    if message.text:
        content.append({"type": "text", "text": message.text})
    for call in message.tool_calls:
        block = {"type": "toolCall", "id": call.id, "name": call.name, "arguments": call.arguments}
        if call.invalid_arguments is not None:
            block["invalidArguments"] = call.invalid_arguments
        content.append(block)
    record: dict[str, Any] = {
        "role": "assistant",
        "content": content,
        "api": provider,
        "provider": provider,
        "model": model,
        "usage": pi_usage(message.usage),
    }
    if streaming:
        record["stopReason"] = "pending"
    else:
        raw = message.stop_reason
        fallback = "toolUse" if message.tool_calls else "stop"
        record["stopReason"] = _STOP_REASONS.get(raw, fallback) if raw else fallback
        if raw and raw != record["stopReason"]:
            record["rawStopReason"] = raw
    return record


def pi_message(
    message: Message, *, timestamp: int, model_name: str, streaming: bool = False
) -> dict[str, Any]:
    """``message`` in pi's shape (see the module docstring). ``model_name`` names the model of
    an assistant message that carries none; ``streaming`` marks one still streaming."""
    record: dict[str, Any]
    if isinstance(message, UserMessage):
        record = {"role": "user", "content": pi_content(message.content)}
    elif isinstance(message, AssistantMessage):
        record = _assistant(message, model_name, streaming)
    else:
        record = _tool_result(message)
    record["timestamp"] = timestamp
    return record


def _tool_result(message: ToolResultMessage) -> dict[str, Any]:
    record: dict[str, Any] = {
        "role": "toolResult",
        "toolCallId": message.tool_call_id,
        "toolName": message.tool_name,
        "content": pi_content(message.content),
    }
    if message.details is not None:
        record["details"] = message.details
    record["isError"] = message.is_error
    return record
