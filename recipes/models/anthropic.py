"""Anthropic messages API, streamed, with tool use.

``POST {ANTHROPIC_BASE_URL or https://api.anthropic.com}/v1/messages`` with ``x-api-key`` and
``anthropic-version: 2023-06-01``. Wire mapping:

- ``instructions`` → ``system``; a user message → ``user`` text/image blocks; an assistant message
  → its ``thinking`` / ``redacted_thinking`` blocks when the request turns thinking on
  (``extra_body={"thinking": {"type": "enabled", ...}}``: the API refuses a tool call's next turn
  without them, and any thinking in a request that does not turn it on; a block with no
  signature is left out, as the API refuses it too), then ``text`` and ``tool_use``
  blocks (``input`` is ``{}`` for a call whose arguments were invalid; an assistant message
  with neither text nor calls is left out, its thinking with it); tool results →
  ``tool_result`` blocks with ``is_error`` in a ``user`` message, the consecutive results of one
  batch in one message. The API refuses an empty or whitespace-only text block, so blank text
  is never sent: it is left out, a tool result with nothing left has no ``content``, and a user
  message with nothing left is sent as ``(empty message)``.
- Streamed events: ``message_start`` (model, input usage), ``content_block_start`` /
  ``content_block_delta`` (``text_delta``, ``input_json_delta``, ``thinking_delta``,
  ``signature_delta``) / ``content_block_stop``, ``message_delta`` (stop reason, usage),
  ``message_stop``, ``ping`` and ``error``. ``thinking`` and ``redacted_thinking`` blocks become
  the message's ``thinking`` (not streamed as text); other block and delta types (citations)
  are ignored; unknown event types too. A ``tool_use`` block whose ``input`` comes whole in
  ``content_block_start`` (some gateways) keeps it; a call whose id another call of the message
  already has gets a distinct one (``<id>_2``).
- ``stop_reason`` is Anthropic's own (``end_turn``, ``tool_use``, ``max_tokens``, ...), or
  ``no_stop_reason`` when the stream gave none and ``tool_use_without_calls`` when it said
  ``tool_use`` but no call came (``recipes.messages.stop_warning`` warns of both). When
  ``max_tokens`` cut a tool call before any of its input streamed, the call is invalid (blank
  ``invalid_arguments``), not ``{}``. A stream with neither a stop reason nor any content holds
  no answer and is an error, as are a content block started twice and a content block event
  whose ``index`` is not a number.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any, Final

import httpx

from recipes.messages import (
    AssistantMessage,
    ContentPart,
    ImagePart,
    Message,
    TextPart,
    Thinking,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from recipes.models._base import ModelEvent, ModelRequest, TextDelta, ToolCallDelta, ToolSpec
from recipes.models._errors import ModelError, error_from_payload
from recipes.models._retry import RetryPolicy
from recipes.models._sse import (
    DEFAULT_MAX_STREAM_SECONDS,
    DEFAULT_TIMEOUT,
    SSEEvent,
    TextJoiner,
    distinct_id,
    final_stop_reason,
    json_object,
    tool_call,
)
from recipes.models._transport import Endpoint, Transport

__all__ = ["API_VERSION", "DEFAULT_BASE_URL", "DEFAULT_MAX_TOKENS", "AnthropicModel", "build_body"]

PROVIDER: Final = "anthropic"
DEFAULT_BASE_URL: Final = "https://api.anthropic.com"
API_VERSION: Final = "2023-06-01"
DEFAULT_MAX_TOKENS: Final = 4096
_ENDPOINT: Final = Endpoint(PROVIDER, "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", DEFAULT_BASE_URL)


#: What an empty user message is sent as: the API refuses a message or a text block with no text.
_EMPTY_MESSAGE: Final = "(empty message)"


def _blocks(parts: Sequence[ContentPart]) -> list[dict[str, Any]]:
    """The content blocks of ``parts``; blank text is left out (the API refuses a whole request
    for one empty or whitespace-only text block)."""
    return [
        {
            "type": "image",
            "source": {"type": "base64", "media_type": p.mime_type, "data": p.data},
        }
        if isinstance(p, ImagePart)
        else {"type": "text", "text": p.text}
        for p in parts
        if isinstance(p, ImagePart) or p.text.strip()
    ]


def _tool_result(message: ToolResultMessage) -> dict[str, Any]:
    block: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": message.tool_call_id,
        "is_error": message.is_error,
    }
    content = _blocks(message.content)
    if content:
        block["content"] = content
    return block


def wire_messages(messages: Sequence[Message], *, thinking: bool = False) -> list[dict[str, Any]]:
    """The ``messages`` array for a transcript (pure; ``thinking``: the request turns it on, so
    the messages' thinking goes back with them); see the module docstring."""
    wire: list[dict[str, Any]] = []
    previous: Message | None = None
    for message in messages:
        if isinstance(message, UserMessage):
            content = _blocks(message.content) or [{"type": "text", "text": _EMPTY_MESSAGE}]
            wire.append({"role": "user", "content": content})
        elif isinstance(message, ToolResultMessage):
            if isinstance(previous, ToolResultMessage):
                wire[-1]["content"].append(_tool_result(message))
            else:
                wire.append({"role": "user", "content": [_tool_result(message)]})
        else:
            content = _blocks([TextPart(text=message.text)])
            content += [
                {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments}
                for c in message.tool_calls
            ]
            if content:
                kept = (
                    [b for t in message.thinking if (b := _thinking_block(t))] if thinking else []
                )
                wire.append({"role": "assistant", "content": kept + content})
        previous = message
    return wire


def _thinking_block(thinking: Thinking) -> dict[str, Any] | None:
    """The block that gives ``thinking`` back as it came, or ``None`` for one the API would
    refuse (no signature, no redacted data)."""
    if thinking.redacted:
        return {"type": "redacted_thinking", "data": thinking.redacted}
    if thinking.signature:
        return {"type": "thinking", "thinking": thinking.text, "signature": thinking.signature}
    return None


def _wire_tool(tool: ToolSpec) -> dict[str, Any]:
    return {"name": tool.name, "description": tool.description, "input_schema": tool.parameters}


def build_body(
    model: str, request: ModelRequest, *, max_tokens: int, extra_body: Mapping[str, Any] | None
) -> dict[str, Any]:
    """The JSON body of a streamed messages call for ``request`` (pure)."""
    extra = dict(extra_body or {})
    thinking = extra.get("thinking")
    body: dict[str, Any] = {
        **extra,
        "model": model,
        "max_tokens": max_tokens,
        "messages": wire_messages(
            request.messages,
            thinking=isinstance(thinking, Mapping) and thinking.get("type") != "disabled",
        ),
        "stream": True,
    }
    if request.instructions:
        body["system"] = request.instructions
    if request.tools:
        body["tools"] = [_wire_tool(t) for t in request.tools]
    return body


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
class _Decoder:
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
            raise ModelError(
                "anthropic: the stream ended before message_stop",
                error_class="unavailable",
                provider=PROVIDER,
            )
        if self.stop_reason is None and not self.blocks:
            raise ModelError(
                "anthropic: the stream ended with no answer (no stop_reason, no content); "
                "the server may have failed without saying why",
                error_class="unclassified",
                provider=PROVIDER,
            )
        ordered = [b for _, b in sorted(self.blocks.items())]
        last = ordered[-1] if ordered else None
        calls = [
            tool_call(
                b.id,
                b.name,
                "".join(b.parts),
                cut=b is last and self.stop_reason == "max_tokens",
            )
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


class AnthropicModel:
    """A Claude model over the messages API, streamed over httpx; implements ``Model``.

    ``api_key`` / ``base_url`` default to ``ANTHROPIC_API_KEY`` / ``ANTHROPIC_BASE_URL`` in ``env``
    (default ``os.environ``), read once here; ``/v1/messages`` is appended to the base URL. A
    missing key is reported when the model is called, as ``ModelError(error_class="auth")``
    naming ``ANTHROPIC_API_KEY``, with no request sent. ``max_tokens`` bounds each answer
    (default 4096). ``http_client``, ``timeout``, ``max_stream_seconds``, ``retry``,
    ``extra_body`` and a base URL carrying ``user:password@`` (or a query: refused) behave as for
    ``OpenAIChatModel``. The key never appears in ``repr``; a key an HTTP header cannot carry is
    an ``auth`` ``ModelError`` at call time, as for ``OpenAIChatModel``. Every text the server
    sends back is scrubbed of the key and of every credential of ``env`` first.
    """

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        env: Mapping[str, str] | None = None,
        http_client: httpx.AsyncClient | None = None,
        retry: RetryPolicy | None = None,
        timeout: httpx.Timeout = DEFAULT_TIMEOUT,
        max_stream_seconds: float = DEFAULT_MAX_STREAM_SECONDS,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        extra_body: Mapping[str, Any] | None = None,
    ) -> None:
        self._model = model
        self._transport = Transport(
            _ENDPOINT,
            api_key=api_key,
            base_url=base_url,
            env=env,
            http_client=http_client,
            retry=retry,
            timeout=timeout,
            max_stream_seconds=max_stream_seconds,
        )
        self._max_tokens = max_tokens
        self._extra_body = dict(extra_body or {})

    @property
    def name(self) -> str:
        """``anthropic:<model>``."""
        return f"{PROVIDER}:{self._model}"

    def __repr__(self) -> str:
        return (
            f"AnthropicModel(model={self._model!r}, base_url={self._transport.base_url!r}, "
            f"max_tokens={self._max_tokens!r})"
        )

    def credentials_problem(self) -> str | None:
        """What keeps this model from being called here (no Anthropic API key), or
        ``None``: checked before a durable run is continued, so it is never stranded."""
        if not self._transport.api_key:
            return "no Anthropic API key in this process: set ANTHROPIC_API_KEY"
        return None

    def _headers(self) -> dict[str, str]:
        key = self._transport.key()
        if key is None:  # the messages API takes no call without one
            raise self._transport.missing_key()
        return {"x-api-key": key, "anthropic-version": API_VERSION, "Accept": "text/event-stream"}

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Stream one message: deltas as they arrive, then exactly one ``Completed``.

        Raises ``ModelError`` classified as described in ``recipes.models._errors``; retries per
        the ``RetryPolicy`` only before the first event was yielded.
        """
        headers = self._headers()
        body = build_body(
            self._model, request, max_tokens=self._max_tokens, extra_body=self._extra_body
        )
        attempts = self._transport.stream(
            "/v1/messages", headers, body, lambda: _Decoder(model=self._model)
        )
        async with aclosing(attempts) as events:
            async for event in events:
                yield event
