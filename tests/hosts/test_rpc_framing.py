"""JSON-lines framing: strict ``\\n`` splitting, hostile lines, strict output, and properties
that hold for any input and any chunking."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hosts.rpc._framing import (
    MAX_DEPTH,
    FrameError,
    LineSplitter,
    decode_frame,
    encode_frame,
)


def strict_loads(data: bytes) -> Any:
    """Parse as a strict client would: UTF-8 only, no NaN/Infinity, no lone surrogates."""

    def refuse(name: str) -> Any:
        raise AssertionError(f"{name} in the output")

    value = json.loads(data.decode("utf-8", errors="strict"), parse_constant=refuse)
    json.dumps(value, ensure_ascii=False).encode("utf-8")  # raises on a lone surrogate
    return value


def split_all(data: bytes, cuts: list[int], max_line: int) -> list[bytes | str]:
    """What a splitter yields for ``data`` cut at ``cuts`` (errors as their text)."""
    splitter = LineSplitter(max_line=max_line)
    out: list[bytes | FrameError] = []
    edges = [0, *sorted(c % (len(data) + 1) for c in cuts), len(data)]
    for start, end in itertools.pairwise(edges):
        out += splitter.feed(data[start:end])
    out += splitter.finish()
    return [str(item) if isinstance(item, FrameError) else item for item in out]


def test_splits_on_newline_only_and_strips_cr() -> None:
    splitter = LineSplitter()
    text = '{"type":"prompt","message":"a\u2028b\u2029c\u0085d"}\r\n{"type":"abort"}\n'.encode()
    lines = splitter.feed(text[:7]) + splitter.feed(text[7:])
    assert len(lines) == 2
    first = decode_frame(lines[0])  # type: ignore[arg-type]
    assert first["message"] == "a\u2028b\u2029c\u0085d"
    assert decode_frame(lines[1]) == {"type": "abort"}  # type: ignore[arg-type]


def test_last_line_without_newline_is_kept() -> None:
    splitter = LineSplitter()
    assert splitter.feed(b'{"type":"abort"}') == []
    assert splitter.finish() == [b'{"type":"abort"}']


def test_overlong_line_is_dropped_with_an_error_and_the_stream_continues() -> None:
    splitter = LineSplitter(max_line=12)
    out = splitter.feed(b"x" * 25) + splitter.feed(b'y\n{"type":"a"}\n')
    assert str(out[0]) == "line longer than 12 bytes was dropped"
    assert out[1] == b'{"type":"a"}'


def test_the_line_limit_holds_when_the_line_arrives_in_one_chunk() -> None:
    whole = LineSplitter(max_line=12).feed(b"x" * 13 + b'\n{"type":"a"}\n')
    assert [str(i) if isinstance(i, FrameError) else i for i in whole] == [
        "line longer than 12 bytes was dropped",
        b'{"type":"a"}',
    ]
    assert LineSplitter(max_line=10).feed(b"x" * 10 + b"\n") == [b"x" * 10]


HOSTILE = [
    (b"", "not JSON"),
    (b"not json", "not JSON"),
    (b"[1,2]", "expected a JSON object, got list"),
    (b'"str"', "expected a JSON object, got str"),
    (b"{}", "expected a string field 'type'"),
    (b'{"type":3}', "expected a string field 'type'"),
    (b"\xff\xfe", "not UTF-8"),
    (b'{"type":"a"', "not JSON"),
    (b'{"type":"a","x":NaN}', "NaN is not JSON"),
    (b'{"type":"a","x":-Infinity}', "-Infinity is not JSON"),
    (b'{"type":"a","x":1e999}', "out of range"),
    (b'{"type":"a","id":' + b"9" * 5000 + b"}", "integer of 5000 digits"),
    (b'{"type":"a","id":' + b"9" * 21 + b"}", "integer of 21 digits"),
    (b'{"type":"a","id":-' + b"9" * 21 + b"}", "integer of 21 digits"),  # the sign is no digit
    (b'{"type":"a","id":"\\ud800"}', "lone surrogate (\\ud800)"),
    (b'{"type":"a","\\udfff":1}', "lone surrogate (\\udfff)"),
    (b'{"type":"a","x":' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested deeper than"),
    (b'{"type":"a","x":' + b"[" * MAX_DEPTH + b"]" * MAX_DEPTH + b"}", "nested deeper than"),
]


@pytest.mark.parametrize(("line", "reason"), HOSTILE, ids=[r for _, r in HOSTILE])
def test_hostile_lines_are_frame_errors_with_a_reason(line: bytes, reason: str) -> None:
    with pytest.raises(FrameError) as info:
        decode_frame(line)
    assert reason in str(info.value)


def test_limits_let_ordinary_records_through() -> None:
    nested = b"[" * (MAX_DEPTH - 1) + b"]" * (MAX_DEPTH - 1)
    record = decode_frame(b'{"type":"a","x":' + nested + b',"id":-18446744073709551615}')
    assert record["id"] == -18446744073709551615
    emoji = decode_frame(b'{"type":"a","id":"\\ud83d\\ude00"}')  # a pair, not a lone one
    assert emoji["id"] == "\U0001f600"


def test_encoded_frames_escape_line_separators() -> None:
    encoded = encode_frame({"type": "x", "text": "a\u2028b\u2029c\n"})
    assert encoded.count(b"\n") == 1 and encoded.endswith(b"\n")
    assert "\u2028".encode() not in encoded
    assert json.loads(encoded) == {"type": "x", "text": "a\u2028b\u2029c\n"}


def test_encoding_what_json_cannot_carry_still_yields_strict_json() -> None:
    record = {
        "type": "x",
        "nan": float("nan"),
        "inf": [float("-inf")],
        "lone": "a\udc80b",
        "object": object.__new__(type("Thing", (), {"__str__": lambda self: "thing"})),
    }
    assert strict_loads(encode_frame(record)) == {
        "type": "x",
        "nan": None,
        "inf": [None],
        "lone": "a\ufffdb",
        "object": "thing",
    }



def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"a": value}
    return value


def test_encoding_a_deep_or_circular_value_cuts_it_instead_of_raising() -> None:
    circular: dict[str, Any] = {"name": "loop"}
    circular["self"] = circular
    broken: object = object.__new__(type("Broken", (), {"__str__": lambda self: 1 / 0}))
    record = {"type": "x", "deep": _nested(5000), "circular": circular, "broken": broken}
    decoded = strict_loads(encode_frame(record))
    assert decoded["type"] == "x" and decoded["broken"] == "<Broken>"
    assert decoded["circular"]["name"] == "loop"
    level, depth = decoded["deep"], 2
    while isinstance(level, dict):
        level, depth = level["a"], depth + 1
    assert (level, depth) == (f"<dict nested deeper than {MAX_DEPTH} levels>", MAX_DEPTH + 1)


# --- properties ---------------------------------------------------------------------------

JSON_PIECES = st.sampled_from(
    [
        b"{",
        b"}",
        b"[",
        b"]",
        b",",
        b":",
        b'"type"',
        b'"a"',
        b"NaN",
        b"Infinity",
        b"1e999",
        b"9" * 30,
        b'"\\ud800"',
        b'"\\ud83d\\ude00"',
        b"null",
        b"\r",
        b"\n",
        b"\xe2\x80\xa8",
        b"\xff",
        b" ",
        b"-",
        b"0.5",
    ]
)
HOSTILE_BYTES = st.lists(JSON_PIECES, max_size=40).map(b"".join) | st.binary(max_size=200)


@given(HOSTILE_BYTES)
def test_decode_returns_a_record_or_raises_frame_error(data: bytes) -> None:
    splitter = LineSplitter(max_line=64)
    for item in splitter.feed(data) + splitter.finish():
        if isinstance(item, FrameError):
            continue
        try:
            record = decode_frame(item)
        except FrameError as exc:
            assert str(exc)
        else:
            assert isinstance(record["type"], str)
            assert strict_loads(encode_frame(record)) == record  # what is accepted echoes back


@given(HOSTILE_BYTES, st.lists(st.integers(min_value=0), max_size=6), st.integers(1, 40))
def test_the_split_never_changes_the_lines(data: bytes, cuts: list[int], limit: int) -> None:
    whole = split_all(data, [], limit)
    assert split_all(data, cuts, limit) == whole
    assert all(len(item) <= limit for item in whole if isinstance(item, bytes))


ANY_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=10,
)


@given(st.dictionaries(st.text(), ANY_VALUE, max_size=4))
def test_encode_always_yields_one_line_of_strict_json(record: dict[str, Any]) -> None:
    encoded = encode_frame({**record, "type": "t"})
    assert encoded.endswith(b"\n") and encoded.count(b"\n") == 1
    assert "\u2028".encode() not in encoded and "\u2029".encode() not in encoded
    assert strict_loads(encoded)["type"] == "t"


@given(st.dictionaries(st.text(max_size=5), st.text(), max_size=4))
def test_round_trip(record: dict[str, str]) -> None:
    record = {**record, "type": "t"}
    text_ok = all(ch < "\ud800" or ch > "\udfff" for s in [*record, *record.values()] for ch in s)
    (line,) = LineSplitter().feed(encode_frame(record))
    if text_ok:
        assert decode_frame(line) == record  # type: ignore[arg-type]
    else:  # lone surrogates go out as U+FFFD
        assert isinstance(decode_frame(line), dict)  # type: ignore[arg-type]
