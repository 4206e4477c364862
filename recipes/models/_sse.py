"""The streaming wire the providers share: an SSE parser and one streamed POST over httpx.

:class:`SSEParser` is pure: bytes in (in any chunking), :class:`SSEEvent` out, following the
WHATWG ``text/event-stream`` rules (CR, LF or CRLF line ends; ``:`` comments; ``data`` lines joined
with LF; an event without ``data`` is not dispatched; a last event not closed by a blank line is
dropped at the end of the stream). Invalid UTF-8 is decoded with U+FFFD replacement characters,
so the only error it raises is :class:`SSEError` for a line or event larger than its bound.

:func:`post_sse` is the I/O edge, and the one place provider text enters the process: it POSTs
JSON, scrubs every piece of text the provider sends back with the model's
:class:`~recipes.models._secrets.Secrets` (error bodies, SSE fields, transport error messages)
before anything parses, quotes, logs or stores it, turns an HTTP error status or an httpx failure
into a classified ``ModelError``, and yields the scrubbed events of a successful response (but
not those whose data is blank: ``data:`` alone is a proxy's heartbeat, not an empty JSON
document; an event named ``error`` is yielded whatever its data). Each
read is bounded by the httpx read timeout and the whole response by ``max_seconds``, so a server
that keeps a stream open with keep-alives or a byte at a time cannot hold a run forever.
"""

from __future__ import annotations

import codecs
import json
import math
import re
import time
from collections.abc import AsyncGenerator, Collection, Mapping
from contextlib import AbstractAsyncContextManager, aclosing, nullcontext
from dataclasses import dataclass, replace
from typing import Any, Final, cast

import anyio
import httpx

from interactions.errors import UsageError
from recipes.messages import ToolCall
from recipes.models._errors import (
    ModelError,
    error_from_payload,
    error_from_response,
    error_from_transport,
)
from recipes.models._retry import retry_after_from_headers
from recipes.models._secrets import Secrets

__all__ = [
    "DEFAULT_MAX_STREAM_SECONDS",
    "DEFAULT_TIMEOUT",
    "DRAIN_SECONDS",
    "SSEError",
    "SSEEvent",
    "SSEParser",
    "TextJoiner",
    "check_max_stream_seconds",
    "checked_base_url",
    "client_scope",
    "decode_json",
    "distinct_id",
    "final_stop_reason",
    "json_object",
    "post_sse",
    "tool_call",
]

#: Every provider call is bounded: 10 s to connect, 300 s between two reads of the stream.
DEFAULT_TIMEOUT: Final = httpx.Timeout(300.0, connect=10.0)
#: ... and 30 minutes for a whole response, however steadily it trickles in.
DEFAULT_MAX_STREAM_SECONDS: Final = 1800.0


def check_max_stream_seconds(value: float) -> float:
    """``value`` as a provider's ``max_stream_seconds``: a finite number of seconds ``> 0``.

    Raises ``UsageError`` naming the setting and the value otherwise: NaN and infinity would
    bound no response, 0 or less would fail every one, and a ``bool`` or a string is no number.
    """
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise UsageError(
            f"max_stream_seconds must be a finite number of seconds > 0 (the longest a whole "
            f"response may take; default {DEFAULT_MAX_STREAM_SECONDS:g}), got {value!r}"
        )
    return value


_EOL: Final = re.compile(r"\r\n|\r|\n")
_SURROGATE: Final = re.compile("[\ud800-\udfff]")
DEFAULT_MAX_EVENT_CHARS: Final = 8 * 1024 * 1024
_MAX_ERROR_BODY: Final = 64 * 1024


class SSEError(ValueError):
    """The stream holds a line or an event longer than the parser's ``max_event_chars``."""


@dataclass(frozen=True)
class SSEEvent:
    """One dispatched server-sent event: its type (``"message"`` by default), data and last id."""

    event: str
    data: str
    id: str | None = None
    retry: int | None = None


class SSEParser:
    """An incremental ``text/event-stream`` parser; :meth:`feed` chunks, each returns the events
    completed so far. Raises :class:`SSEError` when a line or an event outgrows the bound."""

    def __init__(self, max_event_chars: int = DEFAULT_MAX_EVENT_CHARS) -> None:
        self._max = max_event_chars
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._line = ""
        self._skip_lf = False
        self._started = False
        self._event = ""
        self._data: list[str] = []
        self._size = 0
        self._last_id: str | None = None
        self._retry: int | None = None

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Parse the next bytes of the stream; return the events they complete."""
        text = self._decoder.decode(chunk)
        if not text:
            return []
        if not self._started:
            self._started = True
            text = text.removeprefix("\ufeff")
        if self._skip_lf:
            self._skip_lf = False
            text = text.removeprefix("\n")
        buffer = self._line + text
        lines = _EOL.split(buffer)
        self._line = lines.pop()
        self._skip_lf = buffer.endswith("\r")
        if len(self._line) > self._max:
            raise SSEError(f"an SSE line exceeds {self._max} characters")
        events: list[SSEEvent] = []
        for line in lines:
            event = self._line_in(line)
            if event is not None:
                events.append(event)
        return events

    def _line_in(self, line: str) -> SSEEvent | None:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._size += len(value) + 1
            if self._size > self._max:
                raise SSEError(f"an SSE event exceeds {self._max} characters")
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self._last_id = value
        elif name == "retry" and value.isascii() and value.isdigit():
            self._retry = int(value)
        return None

    def _dispatch(self) -> SSEEvent | None:
        data, event = self._data, self._event
        self._data, self._event, self._size = [], "", 0
        if not data:
            return None
        return SSEEvent(event or "message", "\n".join(data), self._last_id, self._retry)


def decode_json(data: str, provider: str, *, what: str = "SSE data") -> Any:
    """``data`` parsed as JSON; raises ``ModelError`` (``unclassified``) quoting its start, also
    for JSON nested deeper than Python reads."""
    try:
        return json.loads(data)
    except RecursionError:
        problem = "is JSON nested too deeply to read"
    except ValueError:
        problem = "is not valid JSON"
    raise ModelError(
        f"{provider}: {what} {problem}: {data[:80]!r}",
        error_class="unclassified",
        provider=provider,
    )


def json_object(data: str, provider: str, what: str) -> dict[str, Any]:
    """``data`` parsed as a JSON object; raises ``ModelError`` (``unclassified``) as
    :func:`decode_json` does, and saying that ``what`` (``a stream event``) is not a JSON object
    when it is another JSON value."""
    payload = decode_json(data, provider)
    if not isinstance(payload, dict):
        raise ModelError(
            f"{provider}: {what} is not a JSON object: {data[:80]!r}",
            error_class="unclassified",
            provider=provider,
        )
    return payload


def _well_formed(text: str) -> str:
    if _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


class TextJoiner:
    """Streamed text made storable. JSON can escape half of a UTF-16 surrogate pair (``\\ud83d``),
    and a gateway that cuts text by UTF-16 code units sends the halves of one emoji in two events;
    no UTF-8 text (no store, no terminal) can hold a half. :meth:`feed` holds back a trailing
    high half until the next piece, so a split pair is joined again, and turns any other lone
    half into U+FFFD, as the SSE parser does with invalid UTF-8; :meth:`flush` gives what is
    held back at the end of the stream."""

    def __init__(self) -> None:
        self._held = ""

    def feed(self, piece: str) -> str:
        """``piece`` (after what was held back), well-formed, less a trailing high half."""
        text, self._held = self._held + piece, ""
        if text and "\ud800" <= text[-1] <= "\udbff":
            text, self._held = text[:-1], text[-1]
        return _well_formed(text)

    def flush(self) -> str:
        """What is held back (a lone high half, as U+FFFD), or ``""``."""
        held, self._held = self._held, ""
        return _well_formed(held)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def tool_call(call_id: str, name: str, raw_arguments: str, *, cut: bool = False) -> ToolCall:
    """A finished tool call from its streamed arguments: a JSON object becomes ``arguments``;
    anything else (bad JSON, an array, a number) lands in ``invalid_arguments``, raw, as does an
    object a transcript cannot hold as sent (``NaN`` or ``Infinity``, text with a lone surrogate,
    nesting deeper than Python reads or a transcript can be saved with). Blank arguments are
    ``{}``, unless the call was ``cut`` by the output limit: then the model never wrote them, and
    they are invalid too (so the tool does not run with its defaults)."""
    if not raw_arguments.strip() and not cut:
        return ToolCall(id=call_id, name=name)
    try:
        value = json.loads(raw_arguments, parse_constant=_refuse_constant)
    except (ValueError, RecursionError):
        value = None
    if isinstance(value, dict):
        call = ToolCall(id=call_id, name=name, arguments=value)
        try:
            call.model_dump_json()
        except (ValueError, RecursionError):  # too deep, or a lone surrogate: it cannot be saved
            pass
        else:
            return call
    return ToolCall(id=call_id, name=name, invalid_arguments=raw_arguments)


def final_stop_reason(reason: str | None, *, has_calls: bool) -> str:
    """The stop reason a finished message records: ``reason`` (already in Anthropic's words),
    ``no_stop_reason`` when the stream gave none (a proxy that cut the answer and then ended the
    stream cleanly), ``tool_use_without_calls`` when it said ``tool_use`` and no call came. The
    last two are not a whole answer's: ``recipes.messages.stop_warning`` warns of them."""
    if reason is None:
        return "no_stop_reason"
    if reason == "tool_use" and not has_calls:
        return "tool_use_without_calls"
    return reason


def distinct_id(wanted: str, taken: Collection[str]) -> str:
    """``wanted``, or ``wanted_2``, ``wanted_3``... when another call of the message has it: a
    result is matched to its call by id, so two calls with one id would lose one result."""
    candidate, number = wanted, 1
    while candidate in taken:
        number += 1
        candidate = f"{wanted}_{number}"
    return candidate


def checked_base_url(url: str, source: str) -> str:
    """``url`` if httpx can send requests to it (``http://`` or ``https://``, a host, a valid
    port, no whitespace or control characters); otherwise raises ``UsageError`` naming
    ``source`` (``base_url``, ``OPENAI_BASE_URL``) and what is wrong, so that a typo is found
    when the model is made, not as a failure of every call."""
    problem: str | None = None
    if any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F for c in url):
        problem = "it holds a space or a control character"
    else:
        try:
            parsed = httpx.URL(url)
        except httpx.InvalidURL:  # its text quotes the URL's parts: not shown, as the URL is not
            problem = "httpx cannot read it (is the port a number, the host well-formed?)"
        else:
            if parsed.scheme not in ("http", "https"):
                problem = "it does not start with http:// or https://"
            elif not parsed.host:
                problem = "it names no host"
    if problem is not None:
        raise UsageError(
            f"{source}: not a usable base URL: {problem}; give one like https://api.example.com/v1"
        )
    return url


def client_scope(
    client: httpx.AsyncClient | None, timeout: httpx.Timeout
) -> AbstractAsyncContextManager[httpx.AsyncClient]:
    """The injected client as is (the host owns and closes it), or a fresh one for one call."""
    if client is not None:
        return nullcontext(client)
    return httpx.AsyncClient(timeout=timeout)


def _chunks(response: httpx.Response) -> AsyncGenerator[bytes, None]:
    # ``aiter_bytes`` is an async generator typed as an iterator; closing it releases the body.
    return cast(AsyncGenerator[bytes, None], response.aiter_bytes())


@dataclass(frozen=True)
class _Deadline:
    """The moment a response must be over by (``time.monotonic``), and how it was set."""

    at: float
    seconds: float
    provider: str

    def check(self) -> None:
        if time.monotonic() > self.at:
            raise ModelError(
                f"{self.provider}: the response was still coming after {self.seconds:g}s "
                "(max_stream_seconds): the server kept the stream open without finishing it; "
                "raise max_stream_seconds for answers that take longer",
                error_class="unavailable",
                provider=self.provider,
                retryable=False,
            )


async def _read_text(response: httpx.Response, deadline: _Deadline) -> str:
    """The start of the body (up to 64 KiB), decoded as UTF-8 with replacement characters."""
    body = b""
    async with aclosing(_chunks(response)) as chunks:
        try:
            async for chunk in chunks:
                body += chunk
                if len(body) >= _MAX_ERROR_BODY:
                    break
                deadline.check()
        finally:
            await _drain(chunks, 0)  # the rest is not read (a no-op when the body is over)
    return body[:_MAX_ERROR_BODY].decode("utf-8", "replace")


#: How long the rest of a body is read once the caller is done with it (see :func:`_drain`).
DRAIN_SECONDS: Final = 0.5


async def _drain(chunks: AsyncGenerator[bytes, None], seconds: float) -> None:
    """Read what is left of a body the caller is done with, for at most ``seconds``. A server
    that ends the body there keeps the connection for the next call; one that holds it open (a
    proxy) is cut off by the cancellation, which closes the connection and ends httpx's stream
    generators as it unwinds them (closing only ours would leave httpx's own unfinished, and
    trio warns of those: encode/httpx#3686)."""
    end = time.monotonic() + seconds
    with anyio.move_on_after(seconds):
        async for _ in chunks:
            if time.monotonic() > end:  # a body that never waits: leave it to the collector
                break


async def post_sse(
    client: httpx.AsyncClient,
    url: str,
    *,
    headers: Mapping[str, str],
    body: Mapping[str, Any],
    timeout: httpx.Timeout,
    provider: str,
    secrets: Secrets,
    max_seconds: float = DEFAULT_MAX_STREAM_SECONDS,
) -> AsyncGenerator[SSEEvent, None]:
    """POST ``body`` as JSON and yield the server-sent events of the response.

    Every text that comes back is scrubbed with ``secrets`` first: the events' ``event``,
    ``data`` and ``id``, an error body, a JSON body, an httpx failure's message.

    Raises ``ModelError``: classified from the status and body for a non-2xx response, from the
    body for a 2xx JSON answer where a stream was expected, ``unavailable`` for timeouts and
    network failures and for a response still coming after ``max_seconds`` (not retryable),
    ``unclassified`` for an oversized SSE line, a URL httpx cannot send to, or a 2xx body that is
    neither JSON nor an event stream (an HTML page: often a wrong base URL). No raw httpx
    exception is chained to it (its text may quote the URL or a header). Close the generator
    (e.g. with ``contextlib.aclosing``) once the stream's end marker has come (or to give up on
    it): what is left of the body is read for at most :data:`DRAIN_SECONDS`, then the connection
    is released, so a server or proxy that keeps it open cannot hold the call.
    """
    failure: ModelError
    deadline = _Deadline(time.monotonic() + max_seconds, max_seconds, provider)
    try:
        async with client.stream(
            "POST", url, headers=headers, json=body, timeout=timeout
        ) as response:
            if not response.is_success:
                raise error_from_response(
                    provider,
                    response.status_code,
                    secrets.scrub(await _read_text(response, deadline)),
                    retry_after=retry_after_from_headers(
                        response.headers, rate_limited=response.status_code == 429
                    ),
                )
            media = response.headers.get("content-type", "").partition(";")[0].strip().lower()
            if media == "application/json":
                text = secrets.scrub(await _read_text(response, deadline))
                payload = decode_json(text, provider, what="the body")
                if isinstance(payload, dict) and "error" in payload:
                    raise error_from_payload(provider, None, payload)
                raise ModelError(
                    f"{provider}: the server answered JSON where an event stream was expected",
                    error_class="unclassified",
                    provider=provider,
                    status_code=response.status_code,
                )
            if media and media != "text/event-stream":
                text = secrets.scrub(await _read_text(response, deadline)).strip()
                sent = response.headers["content-type"].partition(";")[0].strip()
                shown = secrets.scrub(sent)[:100]  # as sent: a secret lower-cased is not found
                raise ModelError(
                    f"{provider}: the server answered {shown} where an event stream was "
                    f"expected; is the base URL right? It said: {text[:300]!r}",
                    error_class="unclassified",
                    provider=provider,
                    status_code=response.status_code,
                )
            parser = SSEParser()
            async with aclosing(_chunks(response)) as chunks:
                try:
                    async for chunk in chunks:
                        for event in parser.feed(chunk):
                            if event.data.strip() or event.event == "error":
                                yield _scrubbed(event, secrets)
                        deadline.check()
                except GeneratorExit:  # the caller is done: at the stream's end marker, say
                    await _drain(chunks, DRAIN_SECONDS)
                    raise
                except (ModelError, SSEError):  # raised here: the rest is not read at all
                    await _drain(chunks, 0)
                    raise
        return
    except httpx.HTTPError as exc:
        failure = error_from_transport(provider, exc, secrets=secrets)
    except httpx.InvalidURL as exc:  # not an httpx.HTTPError
        failure = ModelError(
            f"{provider}: the request URL is not valid: {secrets.scrub(str(exc))}",
            error_class="unclassified",
            provider=provider,
        )
    except SSEError as exc:
        failure = ModelError(f"{provider}: {exc}", error_class="unclassified", provider=provider)
    raise failure  # outside the handler: the raw exception is not chained


def _scrubbed(event: SSEEvent, secrets: Secrets) -> SSEEvent:
    return replace(
        event,
        event=secrets.scrub(event.event),
        data=secrets.scrub(event.data),
        id=None if event.id is None else secrets.scrub(event.id),
    )
