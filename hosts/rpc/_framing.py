"""Strict JSON-lines framing for the RPC protocol. Pure: no I/O.

Incoming:

- :class:`LineSplitter` splits bytes on ``\\n`` only (a trailing ``\\r`` is stripped), never on
  U+2028/U+2029 or any other character ``str.splitlines`` would treat as a line break. A line
  longer than ``max_line`` bytes (not counting its ``\\n``) is dropped with one
  :class:`FrameError`, whatever the chunks it arrived in; the splitter never holds more than
  ``max_line`` bytes.
- :func:`decode_frame` reads one line as a record: a JSON object with a string ``type``. It
  raises :class:`FrameError`, and nothing else, for anything else: bytes that are not UTF-8,
  text that is not JSON, ``NaN``/``Infinity``, integers longer than
  :data:`MAX_INT_DIGITS` digits, values nested deeper than :data:`MAX_DEPTH`, strings holding a
  lone surrogate (``"\\ud800"``), which no strict parser on the other side could read back.

Outgoing: :func:`encode_frame` always yields one line of strict JSON (UTF-8, no ``NaN``, no lone
surrogates, U+2028/U+2029 escaped so that no client's line splitter can cut it). Values JSON
cannot carry are written as JSON can: a non-finite float as ``null``, a lone surrogate as
U+FFFD, an unknown object as its ``str()``, and a value nested deeper than :data:`MAX_DEPTH`
(or holding itself) as a string saying so: a tool's deep or circular ``details`` never stop
the writer.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

__all__ = [
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "MAX_LINE_BYTES",
    "FrameError",
    "LineSplitter",
    "decode_frame",
    "encode_frame",
]

MAX_LINE_BYTES = 16 * 1024 * 1024
"""The longest record accepted, in bytes; a longer one is dropped with a parse error."""

MAX_DEPTH = 64
"""How deeply arrays and objects may nest in a record (the record itself is depth 1)."""

MAX_INT_DIGITS = 20
"""The most digits an integer may have (a 64-bit integer has at most 20)."""

_SURROGATE = re.compile("[\ud800-\udfff]")


class FrameError(ValueError):
    """A line that is not a record: its message says what was wrong and what was expected."""


class LineSplitter:
    """Feed bytes in any chunking; get back complete lines (without ``\\n`` / ``\\r\\n``).

    The lines and errors returned for a stream do not depend on how it was chunked.
    """

    def __init__(self, max_line: int = MAX_LINE_BYTES) -> None:
        self._buffer = bytearray()
        self._max_line = max_line
        self._overflowed = False

    def feed(self, chunk: bytes) -> list[bytes | FrameError]:
        """The lines completed by ``chunk``; an over-long line yields a :class:`FrameError`."""
        out: list[bytes | FrameError] = []
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            self._take(chunk[start:] if end < 0 else chunk[start:end])
            if end < 0:
                return out
            out.append(self._line())
            start = end + 1

    def finish(self) -> list[bytes | FrameError]:
        """The last line, if the input ended without a newline (a blank one is left out)."""
        if not self._overflowed and not bytes(self._buffer).strip():
            self._buffer.clear()
            return []
        return [self._line()]

    def _take(self, piece: bytes) -> None:
        if self._overflowed:
            return
        if len(self._buffer) + len(piece) > self._max_line:
            self._overflowed = True
            self._buffer.clear()
        else:
            self._buffer += piece

    def _line(self) -> bytes | FrameError:
        line = bytes(self._buffer)
        self._buffer.clear()
        if self._overflowed:
            self._overflowed = False
            return FrameError(f"line longer than {self._max_line} bytes was dropped")
        return line[:-1] if line.endswith(b"\r") else line


def _refuse_constant(name: str) -> Any:
    raise FrameError(f"{name} is not JSON; send a number or null")


def _parse_int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_INT_DIGITS:
        raise FrameError(
            f"integer of {len(digits.lstrip('-'))} digits; at most {MAX_INT_DIGITS} are accepted"
        )
    return int(digits)


def _parse_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise FrameError(f"number {text[:40]} is out of range; send a finite number")
    return number


def _check(value: Any) -> None:
    """Raise :class:`FrameError` for nesting past :data:`MAX_DEPTH` or a lone surrogate."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            if (found := _SURROGATE.search(item)) is not None:
                raise FrameError(
                    f"string holds a lone surrogate (\\u{ord(found.group()):04x}); "
                    "send valid Unicode text"
                )
            continue
        if not isinstance(item, dict | list):
            continue
        if depth > MAX_DEPTH:
            raise FrameError(f"nested deeper than {MAX_DEPTH} levels")
        children = [*item.keys(), *item.values()] if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children)


def decode_frame(line: bytes) -> dict[str, Any]:
    """Parse one record. Raises :class:`FrameError`, and nothing else, with a readable reason."""
    try:
        value = json.loads(
            line.decode("utf-8"),
            parse_constant=_refuse_constant,
            parse_int=_parse_int,
            parse_float=_parse_float,
        )
    except UnicodeDecodeError as exc:
        raise FrameError(f"not UTF-8: {exc.reason} at byte {exc.start}") from None
    except json.JSONDecodeError as exc:
        raise FrameError(f"not JSON: {exc.msg} at column {exc.colno}") from None
    except RecursionError:
        raise FrameError(f"nested deeper than {MAX_DEPTH} levels") from None
    except FrameError:
        raise
    except ValueError as exc:  # e.g. a float literal Python cannot read
        raise FrameError(f"not JSON: {exc}") from None
    _check(value)
    if not isinstance(value, dict):
        raise FrameError(f"expected a JSON object, got {type(value).__name__}")
    if not isinstance(value.get("type"), str):
        raise FrameError("expected a string field 'type'")
    return value


def _text(value: Any) -> str:
    """``str(value)``, or its type's name when its ``__str__`` fails."""
    try:
        return str(value)
    except Exception:
        return f"<{type(value).__name__}>"


def _json_safe(value: Any, depth: int = 1) -> Any:
    """``value`` with what strict JSON cannot hold replaced (see the module docstring);
    ``depth`` is its nesting level in the record."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict | list | tuple) and depth > MAX_DEPTH:
        return f"<{type(value).__name__} nested deeper than {MAX_DEPTH} levels>"
    if isinstance(value, dict):
        return {_json_safe(_text(k)): _json_safe(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v, depth + 1) for v in value]
    if value is None or isinstance(value, bool | int | float):
        return value
    return _json_safe(_text(value))


def encode_frame(record: dict[str, Any]) -> bytes:
    """One record as a line of compact, strict JSON ending in ``\\n`` (never raises)."""
    try:
        text = json.dumps(record, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        data = text.encode("utf-8")
    except (ValueError, TypeError, RecursionError):
        # ValueError: NaN/Infinity, a circular value; UnicodeEncodeError (a ValueError): a
        # lone surrogate; TypeError: an object JSON does not know; RecursionError: too deep.
        text = json.dumps(_json_safe(record), ensure_ascii=False, separators=(",", ":"))
        data = text.encode("utf-8")
    for separator in ("\u2028", "\u2029"):
        data = data.replace(separator.encode(), f"\\u{ord(separator):04x}".encode())
    return data + b"\n"
