"""OpenAI chat completions, streamed, with function calling — and the servers that speak it.

``OPENAI_BASE_URL`` points the model at any OpenAI-compatible server (vLLM, llama.cpp server,
Ollama's ``/v1``); such servers may need no key. Wire mapping:

- ``instructions`` → a leading ``system`` message; a user message → ``user`` (a plain string when
  it is all text, content parts with ``data:`` image URLs otherwise); an assistant message →
  ``assistant`` with ``tool_calls`` (arguments re-encoded as JSON; ``{}`` for a call whose
  arguments were invalid; ``content`` is ``null`` when there is no text; an assistant message
  with neither text nor calls is left out, as the API refuses it); a tool result → ``tool``
  with its text (images are left out: the API takes text only there).
- Streamed tool calls arrive as fragments keyed by ``index``; they are assembled in index order.
  A fragment naming a new id at an index already taken starts a new call there (Ollama streams
  every call of a parallel batch at index 0); without an index, a new id starts a call, and
  without an id either, a name does once the last call is whole (or names another tool).
  ``arguments`` sent as a JSON value rather than a string of JSON (llama.cpp, TGI) are taken as
  that value. Arguments that are not a JSON object
  give ``ToolCall(arguments={}, invalid_arguments=raw)``, as do the blank arguments of the last
  call when the output limit (``length``) cut it. A call whose id another call of the message
  already has gets a distinct one (``<id>_2``).
- ``stop_reason`` is normalised to Anthropic's words: ``stop`` → ``end_turn``, ``tool_calls`` →
  ``tool_use``, ``length`` → ``max_tokens``; no ``finish_reason`` at all is ``no_stop_reason``,
  and ``tool_calls`` with no call is ``tool_use_without_calls`` (``recipes.messages.stop_warning``
  warns of both); other values pass through, but ``error`` and
  ``abort`` (vLLM's words for a request it failed or cancelled) are an ``unavailable`` error. A
  refusal (``refusal`` deltas) is the message's text, with ``stop_reason="refusal"``. Content
  sent as a list of parts (Mistral's thinking models) is the text of its ``text`` parts.
- A failure inside the stream is raised in each shape servers send it: ``{"error": ...}``,
  vLLM's ``{"object": "error", ...}``, an SSE event named ``error``. A stream that ends with
  neither a ``finish_reason`` nor any output holds no answer and is an error too.
- ``Usage.input_tokens`` counts the prompt tokens *not* served from the cache
  (``prompt_tokens - cached_tokens``); the cached ones are ``cache_read_tokens``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import aclosing
from typing import Any, Final, Unpack

from recipes.messages import (
    ContentPart,
    ImagePart,
    Message,
    ToolResultMessage,
    UserMessage,
    text_of,
)
from recipes.models._base import ModelEvent, ModelRequest, ToolSpec
from recipes.models._openai_stream import PROVIDER, OpenAIDecoder
from recipes.models._transport import Endpoint, Transport, TransportOptions

__all__ = ["DEFAULT_BASE_URL", "OpenAIChatModel", "build_body"]

DEFAULT_BASE_URL: Final = "https://api.openai.com/v1"
_ENDPOINT: Final = Endpoint(PROVIDER, "OPENAI_API_KEY", "OPENAI_BASE_URL", DEFAULT_BASE_URL)


def _user_content(parts: Sequence[ContentPart]) -> str | list[dict[str, Any]]:
    if not any(isinstance(p, ImagePart) for p in parts):
        return text_of(list(parts))
    return [
        {"type": "image_url", "image_url": {"url": f"data:{p.mime_type};base64,{p.data}"}}
        if isinstance(p, ImagePart)
        else {"type": "text", "text": p.text}
        for p in parts
    ]


def _wire_message(message: Message) -> dict[str, Any] | None:
    if isinstance(message, UserMessage):
        return {"role": "user", "content": _user_content(message.content)}
    if isinstance(message, ToolResultMessage):
        return {
            "role": "tool",
            "tool_call_id": message.tool_call_id,
            "content": text_of(message.content),
        }
    if not message.text and not message.tool_calls:
        return None  # the API refuses an assistant message with neither content nor tool calls
    wire: dict[str, Any] = {"role": "assistant", "content": message.text or None}
    if message.tool_calls:
        wire["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
            }
            for call in message.tool_calls
        ]
    return wire


def _wire_tool(tool: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        },
    }


def build_body(
    model: str, request: ModelRequest, extra_body: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The JSON body of a streamed chat-completions call for ``request`` (pure)."""
    messages = [{"role": "system", "content": request.instructions}] if request.instructions else []
    messages += [w for w in map(_wire_message, request.messages) if w is not None]
    body: dict[str, Any] = {
        **(extra_body or {}),
        "model": model,
        "messages": messages,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if request.tools:
        body["tools"] = [_wire_tool(t) for t in request.tools]
    return body


class OpenAIChatModel:
    """A chat-completions model, streamed over httpx; implements ``Model``.

    ``api_key`` / ``base_url`` default to ``OPENAI_API_KEY`` / ``OPENAI_BASE_URL`` in ``env``
    (default ``os.environ``), read once here. A missing key against the default OpenAI URL is
    reported when the model is called, as ``ModelError(error_class="auth")`` naming
    ``OPENAI_API_KEY``, with no request sent; a custom base URL may go without a key.
    ``http_client`` is used as is and never closed (otherwise each call opens and closes its own
    client); ``timeout`` applies to every request either way (each read), and
    ``max_stream_seconds`` bounds each response as a whole (default 30 minutes; anything but a
    finite number of seconds > 0 is a ``UsageError`` here). ``extra_body``
    adds fields to every request (``temperature``, ``max_tokens``, ...). A base URL carrying
    ``user:password@`` is sent with those credentials as Basic auth (in place of the key, as
    httpx does) and shown without them; a base URL with a query string, or one httpx cannot send
    to (no ``http://`` or ``https://``, no host, a bad port, a space), is a ``UsageError`` here,
    naming ``base_url`` or ``OPENAI_BASE_URL``.
    The key never appears in ``repr``; a key an HTTP header cannot carry (a stray line break,
    space or non-ASCII character) is an ``auth`` ``ModelError`` at call time that says where the
    bad character is, not what the key is.

    Every text the server sends back is scrubbed of the key and of every credential of ``env``
    (``*_API_KEY``, ``*_TOKEN``, ``*_SECRET``, ...; see ``recipes.models._secrets``) before it is
    yielded, quoted in an error or logged.
    """

    def __init__(
        self,
        model: str,
        *,
        extra_body: Mapping[str, Any] | None = None,
        **transport: Unpack[TransportOptions],
    ) -> None:
        self._model = model
        self._transport = Transport(_ENDPOINT, **transport)
        self._extra_body = dict(extra_body or {})

    @property
    def name(self) -> str:
        """``openai:<model>``."""
        return f"{PROVIDER}:{self._model}"

    def __repr__(self) -> str:
        return f"OpenAIChatModel(model={self._model!r}, base_url={self._transport.base_url!r})"

    def _needs_key(self) -> bool:
        """OpenAI's own API takes no call without a key; a compatible server may need none."""
        return self._transport.base_url == DEFAULT_BASE_URL

    def credentials_problem(self) -> str | None:
        """What keeps this model from being called here (no key for OpenAI's own API), or
        ``None``: checked before a durable run is continued, so it is never stranded."""
        if not self._transport.api_key and self._needs_key():
            return "no OpenAI API key in this process: set OPENAI_API_KEY"
        return None

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "text/event-stream"}
        key = self._transport.key()
        if key is not None:
            headers["Authorization"] = f"Bearer {key}"
        elif self._needs_key():
            raise self._transport.missing_key(" (or OPENAI_BASE_URL for a local server)")
        return headers

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Stream one completion: deltas as they arrive, then exactly one ``Completed``.

        Raises ``ModelError`` classified as described in ``recipes.models._errors``; retries per
        the ``RetryPolicy`` only before the first event was yielded.
        """
        headers = self._headers()
        body = build_body(self._model, request, self._extra_body)
        attempts = self._transport.stream(
            "/chat/completions", headers, body, lambda: OpenAIDecoder(model=self._model)
        )
        async with aclosing(attempts) as events:
            async for event in events:
                yield event
