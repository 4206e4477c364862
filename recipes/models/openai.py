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
from dataclasses import dataclass, field
from typing import Any, Final

import httpx

from recipes.messages import (
    AssistantMessage,
    ContentPart,
    ImagePart,
    Message,
    ToolResultMessage,
    Usage,
    UserMessage,
    text_of,
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

__all__ = ["DEFAULT_BASE_URL", "OpenAIChatModel", "build_body"]

PROVIDER: Final = "openai"
DEFAULT_BASE_URL: Final = "https://api.openai.com/v1"
_ENDPOINT: Final = Endpoint(PROVIDER, "OPENAI_API_KEY", "OPENAI_BASE_URL", DEFAULT_BASE_URL)
_STOP_REASONS: Final = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
}
#: Finish reasons of a request the server failed (vLLM: "retryable request-level internal
#: error") or cancelled: what streamed before them is not an answer.
_FAILED: Final = frozenset({"error", "abort"})


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
class _Decoder:
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
            raise ModelError(
                "openai: the stream ended before its end marker ([DONE])",
                error_class="unavailable",
                provider=PROVIDER,
            )
        if self.finish_reason in _FAILED:
            raise ModelError(
                f"openai: the server ended the answer with finish_reason "
                f"{self.finish_reason!r}: it failed or cancelled the request partway, so "
                "what came is not an answer; call the model again",
                error_class="unavailable",
                provider=PROVIDER,
            )
        if self.finish_reason is None and not self.text and not self.calls:
            raise ModelError(
                "openai: the stream ended with no answer (no finish_reason, no text, no tool "
                "call); the server may have failed without saying why",
                error_class="unclassified",
                provider=PROVIDER,
            )
        reason = "refusal" if self.refused else self.finish_reason
        calls = sorted(self.calls, key=lambda c: c.index)  # stable: arrival order within one
        last = self.calls[-1] if self.calls else None  # the one streaming when a limit cut it
        return AssistantMessage(
            text="".join(self.text) + self.joiner.flush(),
            tool_calls=[
                tool_call(
                    c.id,
                    c.name,
                    "".join(c.arguments),
                    cut=c is last and self.finish_reason == "length",
                )
                for c in calls
            ],
            usage=self.usage,
            stop_reason=final_stop_reason(
                _STOP_REASONS.get(reason, reason) if reason else None, has_calls=bool(calls)
            ),
            model=self.model,
        )


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
        api_key: str | None = None,
        base_url: str | None = None,
        env: Mapping[str, str] | None = None,
        http_client: httpx.AsyncClient | None = None,
        retry: RetryPolicy | None = None,
        timeout: httpx.Timeout = DEFAULT_TIMEOUT,
        max_stream_seconds: float = DEFAULT_MAX_STREAM_SECONDS,
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
            "/chat/completions", headers, body, lambda: _Decoder(model=self._model)
        )
        async with aclosing(attempts) as events:
            async for event in events:
                yield event
