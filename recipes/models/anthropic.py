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

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import aclosing
from typing import Any, Final, Unpack

from recipes.messages import (
    ContentPart,
    ImagePart,
    Message,
    TextPart,
    Thinking,
    ToolResultMessage,
    UserMessage,
)
from recipes.models._anthropic_stream import PROVIDER, AnthropicDecoder
from recipes.models._base import ModelEvent, ModelRequest, ToolSpec
from recipes.models._transport import Endpoint, Transport, TransportOptions

__all__ = ["API_VERSION", "DEFAULT_BASE_URL", "DEFAULT_MAX_TOKENS", "AnthropicModel", "build_body"]

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
        max_tokens: int = DEFAULT_MAX_TOKENS,
        extra_body: Mapping[str, Any] | None = None,
        **transport: Unpack[TransportOptions],
    ) -> None:
        self._model = model
        self._transport = Transport(_ENDPOINT, **transport)
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
            "/v1/messages", headers, body, lambda: AnthropicDecoder(model=self._model)
        )
        async with aclosing(attempts) as events:
            async for event in events:
                yield event
