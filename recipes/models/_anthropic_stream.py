"""Reading the Anthropic messages API's event stream: deltas as they come, then the message.

See ``recipes.models.anthropic`` for the events and what becomes of each.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Final

from recipes.messages import AssistantMessage, Thinking, Usage
from recipes.models._assembly import (
    TextJoiner,
    distinct_id,
    ended_early,
    final_stop_reason,
    no_answer,
    tool_call,
)
from recipes.models._base import ModelEvent, TextDelta, ToolCallDelta
from recipes.models._errors import ModelError, error_from_payload
from recipes.models._sse import SSEEvent, json_object

__all__ = ["PROVIDER", "AnthropicDecoder"]

PROVIDER: Final = "anthropic"


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _str(value: Any, default: str = "") -> str:
    return value if isinstance(value, str) else default


@dataclass
class _Block:
    kind: str  # "text", "tool_use", "thinking" or "redacted_thinking"
    id: str = ""
    name: str = ""
    parts: list[str] = field(default_factory=list)
    signature: str = ""  # a thinking block's
    data: str = ""  # a redacted thinking block's (encrypted)


@dataclass
class AnthropicDecoder:
    """Folds the messages-API stream events into deltas and, at the end, the message; a
    ``StreamDecoder``."""

    model: str
    blocks: dict[int, _Block] = field(default_factory=dict)
    usage: dict[str, int] = field(default_factory=dict)
    stop_reason: str | None = None
    done: bool = False
    joiner: TextJoiner = field(default_factory=TextJoiner)

    def _usage_in(self, usage: dict[str, Any]) -> None:
        for wire, ours in (
            ("input_tokens", "input_tokens"),
            ("output_tokens", "output_tokens"),
            ("cache_read_input_tokens", "cache_read_tokens"),
            ("cache_creation_input_tokens", "cache_write_tokens"),
        ):
            value = usage.get(wire)
            if isinstance(value, int) and not isinstance(value, bool):
                self.usage[ours] = value

    def feed(self, sse: SSEEvent) -> list[ModelEvent]:
        payload = json_object(sse.data, PROVIDER, "a stream event")
        kind = _str(payload.get("type"), sse.event)
        if kind == "error":
            raise error_from_payload(PROVIDER, None, payload)
        return self._event(kind, payload)

    def _event(self, kind: str, event: dict[str, Any]) -> list[ModelEvent]:
        if kind == "message_start":
            message = _dict(event.get("message"))
            if isinstance(message.get("model"), str) and message["model"]:
                self.model = message["model"]
            self._usage_in(_dict(message.get("usage")))
        elif kind in ("content_block_start", "content_block_delta", "content_block_stop"):
            index = event.get("index")
            if not isinstance(index, int) or isinstance(index, bool):
                raise ModelError(
                    f"anthropic: a {kind} event has index {index!r}, not a block number",
                    error_class="unclassified",
                    provider=PROVIDER,
                )
            if kind == "content_block_start":
                return self._start(index, _dict(event.get("content_block")))
            if kind == "content_block_delta":
                return self._delta(index, _dict(event.get("delta")))
        elif kind == "message_delta":
            reason = _dict(event.get("delta")).get("stop_reason")
            self.stop_reason = reason if isinstance(reason, str) else self.stop_reason
            self._usage_in(_dict(event.get("usage")))
        elif kind == "message_stop":
            self.done = True
        return []

    def _start(self, index: int, block: dict[str, Any]) -> list[ModelEvent]:
        if index in self.blocks:
            raise ModelError(
                f"anthropic: the stream started content block {index} twice",
                error_class="unclassified",
                provider=PROVIDER,
            )
        if block.get("type") == "text":
            text = self.joiner.feed(_str(block.get("text")))
            self.blocks[index] = _Block("text", parts=[text] if text else [])
            return [TextDelta(delta=text)] if text else []
        if block.get("type") == "tool_use":
            taken = {b.id for b in self.blocks.values() if b.kind == "tool_use"}
            call_id = distinct_id(_str(block.get("id"), f"toolu_{index}"), taken)
            name = _str(block.get("name"))
            whole = block.get("input")
            arguments = json.dumps(whole) if isinstance(whole, dict) and whole else ""
            parts = [arguments] if arguments else []
            self.blocks[index] = _Block("tool_use", id=call_id, name=name, parts=parts)
            return [ToolCallDelta(id=call_id, name=name, arguments_delta=arguments)]
        if block.get("type") == "thinking":
            text = _str(block.get("thinking"))
            self.blocks[index] = _Block(
                "thinking", parts=[text] if text else [], signature=_str(block.get("signature"))
            )
        elif block.get("type") == "redacted_thinking":
            self.blocks[index] = _Block("redacted_thinking", data=_str(block.get("data")))
        return []

    def _delta(self, index: int, delta: dict[str, Any]) -> list[ModelEvent]:
        block = self.blocks.get(index)
        kind = delta.get("type")
        if kind == "text_delta" and isinstance(delta.get("text"), str):
            if block is None or block.kind != "text":
                raise _unexpected(f"a text_delta for content block {index!r}")
            text = self.joiner.feed(delta["text"])
            block.parts.append(text)
            return [TextDelta(delta=text)] if text else []
        if kind == "input_json_delta" and isinstance(delta.get("partial_json"), str):
            if block is None or block.kind != "tool_use":
                raise _unexpected(f"an input_json_delta for content block {index!r}")
            block.parts.append(delta["partial_json"])
            return [ToolCallDelta(id=block.id, arguments_delta=delta["partial_json"])]
        if kind in ("thinking_delta", "signature_delta"):
            if block is None or block.kind != "thinking":
                raise _unexpected(f"a {kind} for content block {index!r}")
            if kind == "thinking_delta":
                block.parts.append(_str(delta.get("thinking")))
            else:  # one signature, sent whole at the block's end
                block.signature = _str(delta.get("signature"))
        return []

    def finish(self) -> AssistantMessage:
        if not self.done:
            raise ended_early(PROVIDER, "message_stop")
        if self.stop_reason is None and not self.blocks:
            raise no_answer(PROVIDER, "no stop_reason, no content")
        ordered = [b for _, b in sorted(self.blocks.items())]
        cut = ordered[-1] if ordered and self.stop_reason == "max_tokens" else None
        calls = [
            tool_call(b.id, b.name, "".join(b.parts), cut=b is cut)
            for b in ordered
            if b.kind == "tool_use"
        ]
        return AssistantMessage(
            text="".join("".join(b.parts) for b in ordered if b.kind == "text")
            + self.joiner.flush(),
            tool_calls=calls,
            thinking=[
                Thinking(redacted=b.data)
                if b.kind == "redacted_thinking"
                else Thinking(text=_storable("".join(b.parts)), signature=b.signature)
                for b in ordered
                if b.kind in ("thinking", "redacted_thinking")
            ],
            usage=Usage(**self.usage) if self.usage else None,
            stop_reason=final_stop_reason(self.stop_reason, has_calls=bool(calls)),
            model=self.model,
        )


def _storable(text: str) -> str:
    """``text`` with the halves of a surrogate pair split across deltas joined (they are, once
    the deltas are), and any lone half made U+FFFD, as streamed text is."""
    joiner = TextJoiner()
    return joiner.feed(text) + joiner.flush()


def _unexpected(what: str) -> ModelError:
    return ModelError(
        f"anthropic: the stream sent {what} it had not started",
        error_class="unclassified",
        provider=PROVIDER,
    )
