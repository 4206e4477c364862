"""The SSE parser, and the JSON an event's data holds.

:class:`SSEParser` is pure: bytes in (in any chunking), :class:`SSEEvent` out, following the
WHATWG ``text/event-stream`` rules (CR, LF or CRLF line ends; ``:`` comments; ``data`` lines joined
with LF; an event without ``data`` is not dispatched; a last event not closed by a blank line is
dropped at the end of the stream). Invalid UTF-8 is decoded with U+FFFD replacement characters,
so the only error it raises is :class:`SSEError` for a line or event larger than its bound.
:func:`decode_json` and :func:`json_object` read an event's data (or a body) as JSON, raising a
``ModelError`` for anything else.
"""

from __future__ import annotations

import codecs
import json
import re
from dataclasses import dataclass
from typing import Any, Final

from recipes.models._errors import ModelError

__all__ = [
    "DEFAULT_MAX_EVENT_CHARS",
    "SSEError",
    "SSEEvent",
    "SSEParser",
    "decode_json",
    "json_object",
]

_EOL: Final = re.compile(r"\r\n|\r|\n")
DEFAULT_MAX_EVENT_CHARS: Final = 8 * 1024 * 1024


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
