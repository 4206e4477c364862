"""Strict JSON-lines framing for the RPC protocol.

Records are split on ``\\n`` only (a trailing ``\\r`` is stripped), never on U+2028/U+2029 or
any other character that Python's ``str.splitlines`` would treat as a line break. Outgoing
records escape U+2028/U+2029 so that no client's line splitter can cut them.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["MAX_LINE_BYTES", "FrameError", "LineSplitter", "decode_frame", "encode_frame"]

MAX_LINE_BYTES = 16 * 1024 * 1024
"""The longest record accepted; a longer one is dropped with a parse error."""


class FrameError(ValueError):
    """A line that is not a JSON object with a string ``type``."""


class LineSplitter:
    """Feed bytes in any chunking; get back complete lines (without ``\\n`` / ``\\r\\n``)."""

    def __init__(self, max_line: int = MAX_LINE_BYTES) -> None:
        self._buffer = bytearray()
        self._max_line = max_line
        self._overflowed = False

    def feed(self, chunk: bytes) -> list[bytes | FrameError]:
        """Lines completed by ``chunk``; an over-long line yields a :class:`FrameError`."""
        out: list[bytes | FrameError] = []
        self._buffer += chunk
        while (end := self._buffer.find(b"\n")) >= 0:
            line = bytes(self._buffer[:end])
            del self._buffer[: end + 1]
            if self._overflowed:
                self._overflowed = False
                out.append(FrameError(f"line longer than {self._max_line} bytes was dropped"))
                continue
            out.append(line[:-1] if line.endswith(b"\r") else line)
        if len(self._buffer) > self._max_line:
            self._buffer.clear()
            self._overflowed = True
        return out

    def finish(self) -> list[bytes | FrameError]:
        """The last line, if the input ended without a newline."""
        rest = bytes(self._buffer)
        self._buffer.clear()
        if self._overflowed:
            self._overflowed = False
            return [FrameError(f"line longer than {self._max_line} bytes was dropped")]
        rest = rest[:-1] if rest.endswith(b"\r") else rest
        return [rest] if rest.strip() else []


def decode_frame(line: bytes) -> dict[str, Any]:
    """Parse one record. Raises :class:`FrameError` with a readable reason."""
    try:
        value = json.loads(line.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise FrameError(f"not UTF-8: {exc.reason} at byte {exc.start}") from None
    except json.JSONDecodeError as exc:
        raise FrameError(f"not JSON: {exc.msg} at column {exc.colno}") from None
    if not isinstance(value, dict):
        raise FrameError(f"expected a JSON object, got {type(value).__name__}")
    if not isinstance(value.get("type"), str):
        raise FrameError("expected a string field 'type'")
    return value


def encode_frame(record: dict[str, Any]) -> bytes:
    """One record as a line of compact JSON ending in ``\\n``."""
    text = json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=str)
    return (text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029") + "\n").encode()
