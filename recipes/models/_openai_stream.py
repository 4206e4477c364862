"""Reading a chat-completions event stream: deltas as they come, then the assistant message.

See ``recipes.models.openai`` for the chunks, the ways compatible servers send them, and what
becomes of each.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Final

from recipes.messages import AssistantMessage, Usage
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

__all__ = ["PROVIDER", "OpenAIDecoder"]

PROVIDER: Final = "openai"
_STOP_REASONS: Final = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
}
#: Finish reasons of a request the server failed (vLLM: "retryable request-level internal
#: error") or cancelled: what streamed before them is not an answer.
_FAILED: Final = frozenset({"error", "abort"})


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _text(value: Any) -> str:
    """A delta's ``content``: a string, or (Mistral's thinking models) a list of parts, whose
    ``text`` parts are the answer; ``thinking`` parts are left out (this API takes no thinking
    back)."""
    if isinstance(value, str):
        return value
    parts = value if isinstance(value, list) else []
    return "".join(
        p["text"]
        for p in parts
        if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str)
    )


@dataclass
class _PartialCall:
    id: str
    name: str
    index: int
    wire_id: str | None
    arguments: list[str] = field(default_factory=list)


def _arguments(value: Any) -> str:
    """A fragment's ``arguments``: a string as is; a JSON value (llama.cpp, TGI) re-encoded."""
    if isinstance(value, str):
        return value
    return "" if value is None else json.dumps(value)


def _another_call(last: _PartialCall, name: str) -> bool:
    """Whether a fragment naming ``name`` (with neither index nor id) starts a call after
    ``last``: it names another tool, or ``last`` has whole JSON arguments already."""
    if name != last.name:
        return True
    try:
        json.loads("".join(last.arguments))
    except (ValueError, RecursionError):
        return False
    return True


@dataclass
class OpenAIDecoder:
    """Folds chat-completion chunks into deltas and, at the end, the assistant message; a
    ``StreamDecoder``."""

    model: str
    text: list[str] = field(default_factory=list)
    calls: list[_PartialCall] = field(default_factory=list)
    usage: Usage | None = None
    finish_reason: str | None = None
    refused: bool = False
    done: bool = False  # [DONE] came
    joiner: TextJoiner = field(default_factory=TextJoiner)

    def feed(self, sse: SSEEvent) -> list[ModelEvent]:
        if sse.data.strip() == "[DONE]":
            self.done = True
            return []
        chunk = json_object(sse.data, PROVIDER, "a stream chunk")
        if chunk.get("error") or chunk.get("object") == "error" or sse.event == "error":
            raise error_from_payload(PROVIDER, None, chunk)
        return self._chunk(chunk)

    def _chunk(self, chunk: dict[str, Any]) -> list[ModelEvent]:
        if isinstance(chunk.get("model"), str) and chunk["model"]:
            self.model = chunk["model"]
        if isinstance(chunk.get("usage"), dict):
            usage = chunk["usage"]
            cached = _int(_dict(usage.get("prompt_tokens_details")).get("cached_tokens"))
            self.usage = Usage(
                input_tokens=max(0, _int(usage.get("prompt_tokens")) - cached),
                output_tokens=_int(usage.get("completion_tokens")),
                cache_read_tokens=cached,
            )
        choices = chunk.get("choices")
        if not isinstance(choices, list) or not choices:
            return []
        choice = _dict(choices[0])
        if isinstance(choice.get("finish_reason"), str):
            self.finish_reason = choice["finish_reason"]
        delta = _dict(choice.get("delta"))
        events: list[ModelEvent] = []
        for key in ("content", "refusal"):
            piece = self.joiner.feed(_text(delta.get(key)))
            if piece:
                self.refused = self.refused or key == "refusal"
                self.text.append(piece)
                events.append(TextDelta(delta=piece))
        fragments = delta.get("tool_calls")
        for fragment in fragments if isinstance(fragments, list) else []:
            events.extend(self._tool_fragment(_dict(fragment)))
        return events

    def _tool_fragment(self, fragment: dict[str, Any]) -> list[ModelEvent]:
        function = _dict(fragment.get("function"))
        call_id = fragment.get("id") if isinstance(fragment.get("id"), str) else None
        index = fragment.get("index")
        index = index if isinstance(index, int) and not isinstance(index, bool) else None
        name = function.get("name") if isinstance(function.get("name"), str) else None
        arguments = _arguments(function.get("arguments"))
        call = self._call_for(index, call_id, name)
        if call is None:
            if index is None:
                index = max((c.index for c in self.calls), default=-1) + 1
            taken = {c.id for c in self.calls}
            unique = distinct_id(call_id or f"call_{index}", taken)
            call = _PartialCall(id=unique, name=name or "", index=index, wire_id=call_id)
            self.calls.append(call)
            call.arguments.append(arguments)
            return [ToolCallDelta(id=call.id, name=call.name, arguments_delta=arguments)]
        if name and not call.name:
            call.name = name
        call.arguments.append(arguments)
        return [ToolCallDelta(id=call.id, arguments_delta=arguments)] if arguments else []

    def _call_for(
        self, index: int | None, call_id: str | None, name: str | None
    ) -> _PartialCall | None:
        """The call a fragment continues, or ``None`` when it starts one. With an ``index``: the
        last call there, unless the fragment starts another (a new id and a name: Ollama streams
        every call of a parallel batch at index 0, each with its own id). Without one (some
        servers omit it): a known id continues its call, a new id starts a call; with no id
        either, a name starts a call when the last call has another name or its arguments are
        already whole JSON (servers that send each call whole, with neither), and anything else
        continues the last call."""
        if index is None:
            if call_id is None:
                last = self.calls[-1] if self.calls else None
                if last is None or (name and last.name and _another_call(last, name)):
                    return None
                return last
            return next((c for c in self.calls if c.wire_id == call_id), None)
        there = [c for c in self.calls if c.index == index]
        if not there:
            return None
        last = there[-1]
        if call_id is None or last.wire_id in (None, call_id):
            return last
        known = next((c for c in there if c.wire_id == call_id), None)
        return known if known is not None or name is not None else last

    def finish(self) -> AssistantMessage:
        if not self.done and self.finish_reason is None:
            raise ended_early(PROVIDER, "its end marker ([DONE])")
        if self.finish_reason in _FAILED:
            raise ModelError(
                f"openai: the server ended the answer with finish_reason "
                f"{self.finish_reason!r}: it failed or cancelled the request partway, so "
                "what came is not an answer; call the model again",
                error_class="unavailable",
                provider=PROVIDER,
            )
        if self.finish_reason is None and not self.text and not self.calls:
            raise no_answer(PROVIDER, "no finish_reason, no text, no tool call")
        reason = "refusal" if self.refused else self.finish_reason
        calls = sorted(self.calls, key=lambda c: c.index)  # stable: arrival order within one
        # the call streaming when the output limit came, in arrival order: the last one begun
        cut = self.calls[-1] if self.calls and self.finish_reason == "length" else None
        return AssistantMessage(
            text="".join(self.text) + self.joiner.flush(),
            tool_calls=[tool_call(c.id, c.name, "".join(c.arguments), cut=c is cut) for c in calls],
            usage=self.usage,
            stop_reason=final_stop_reason(
                _STOP_REASONS.get(reason, reason) if reason else None, has_calls=bool(calls)
            ),
            model=self.model,
        )
