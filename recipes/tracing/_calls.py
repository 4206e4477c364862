"""Spans inside a leg: model calls (the GenAI conventions' ``chat``), tool calls with their asks,
graph nodes, and events on the current span."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from recipes.tracing._config import CAPTURE_CONTENT, _on, _Tracing

if TYPE_CHECKING:
    from recipes.messages import AssistantMessage, ToolCall
    from recipes.models._base import ModelRequest

__all__ = ["Call", "event", "model_call", "model_done", "node", "tool_asks", "tool_call"]


class Call:
    """A model call's, a tool call's or a node's span, as a context manager that makes it
    current (nothing at all when tracing is off)."""

    __slots__ = ("_manager", "_span", "_tracing", "started")

    def __init__(
        self, tracing: _Tracing | None, name: str = "", attributes: Mapping[str, Any] = {}
    ) -> None:
        self._tracing, self._span, self.started = tracing, None, 0.0
        self._manager = (
            None
            if tracing is None
            else tracing.tracer.start_as_current_span(name, attributes=attributes)
        )

    def __enter__(self) -> Call:
        if self._manager is not None:
            self._span = self._manager.__enter__()
            self.started = time.monotonic()
        return self

    def __exit__(self, *raised: Any) -> None:
        if self._manager is not None:
            self._manager.__exit__(*raised)

    def set(self, name: str, value: Any) -> None:
        """Set attribute ``name`` on the span (nothing when tracing is off)."""
        if self._span is not None:
            self._span.set_attribute(name, value)


_OFF = Call(None)


def model_call(model_name: str, request: ModelRequest) -> Call:
    """A GenAI ``chat`` span around one model call (``with``); hand the message to
    :func:`model_done`."""
    tracing = _on()
    if tracing is None:
        return _OFF
    provider, _, model = model_name.partition(":")
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": provider,
        "gen_ai.request.model": model or model_name,
    }
    if _capture():
        attributes["gen_ai.input.messages"] = json.dumps(
            [_message_content(m) for m in request.messages]
        )
        if request.instructions:
            attributes["gen_ai.system_instructions"] = json.dumps(
                [{"type": "text", "content": request.instructions}]
            )
    return Call(tracing, f"chat {model or model_name}", attributes)


def model_done(call: Call, message: AssistantMessage, model_name: str) -> None:
    """Note the completed ``message`` on ``call``'s span, and count the call and its tokens."""
    tracing, span = call._tracing, call._span
    if tracing is None or span is None:
        return
    provider, _, model = model_name.partition(":")
    usage = message.usage
    if message.model:
        span.set_attribute("gen_ai.response.model", message.model)
    if message.stop_reason:
        span.set_attribute("gen_ai.response.finish_reasons", [message.stop_reason])
    kinds = {"gen_ai.provider.name": provider, "gen_ai.request.model": model or model_name}
    if usage is not None:
        span.set_attribute("gen_ai.usage.input_tokens", usage.input_tokens)
        span.set_attribute("gen_ai.usage.output_tokens", usage.output_tokens)
        tracing.tokens.record(usage.input_tokens, {**kinds, "gen_ai.token.type": "input"})
        tracing.tokens.record(usage.output_tokens, {**kinds, "gen_ai.token.type": "output"})
    if _capture():
        span.set_attribute("gen_ai.output.messages", json.dumps([_message_content(message)]))
    tracing.model_calls.add(1, kinds)
    tracing.model_duration.record(time.monotonic() - call.started, kinds)


def _capture() -> bool:
    return os.environ.get(CAPTURE_CONTENT, "").strip().lower() == "true"


def _message_content(message: Any) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    for part in getattr(message, "content", None) or ():
        text = getattr(part, "text", None)
        if text is not None:
            parts.append({"type": "text", "content": text})
    if isinstance(getattr(message, "text", None), str) and message.text:
        parts.append({"type": "text", "content": message.text})
    for call in getattr(message, "tool_calls", None) or ():
        parts.append({"type": "tool_call", "id": call.id, "name": call.name})
    return {"role": message.role, "parts": parts}


def tool_call(call: ToolCall) -> Call:
    """A GenAI ``execute_tool`` span around one tool call (``with``)."""
    tracing = _on()
    if tracing is None:
        return _OFF
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": call.name,
        "gen_ai.tool.call.id": call.id,
        "gen_ai.tool.type": "function",
    }
    return Call(tracing, f"execute_tool {call.name}", attributes)


def tool_asks(asked: Sequence[Any]) -> None:
    """Add the asks a tool call made (their interrupts, each with its outcome) to the current
    span, one ``ask`` event each: its interaction id, reason and outcome (``awaiting_user``:
    the run pauses on it; its wait shows when the run resumes)."""
    if not asked or _on() is None:
        return
    from opentelemetry import trace

    span = trace.get_current_span()
    for interrupt in asked:
        outcome = getattr(interrupt.outcome, "type", None) or "awaiting_user"
        span.add_event(
            "ask",
            {
                "pi_recipes.interaction.id": interrupt.id,
                "pi_recipes.ask.reason": str(interrupt.reason),
                "pi_recipes.ask.outcome": outcome,
            },
        )
        if outcome == "awaiting_user":
            span.set_attribute("pi_recipes.ask.paused", True)


def node(name: str, kind: str, visit: int, branch: str) -> Call:
    """A span around one graph node's execution (``with``)."""
    tracing = _on()
    if tracing is None:
        return _OFF
    attributes = {
        "pi_recipes.node.id": name,
        "pi_recipes.node.kind": kind,
        "pi_recipes.node.visit": visit,
        "pi_recipes.node.branch": branch,
    }
    return Call(tracing, f"node {name}", attributes)


def event(name: str, attributes: Mapping[str, Any]) -> None:
    """Add event ``name`` to the current span (a route fallback); values that are not a
    string, a number or a bool are left out."""
    if _on() is None:
        return
    from opentelemetry import trace

    kept = {k: v for k, v in attributes.items() if isinstance(v, str | bool | int | float)}
    trace.get_current_span().add_event(name, kept)
