"""JSON-lines framing: strict ``\\n`` splitting, hostile lines, and round trips."""

from __future__ import annotations

import contextlib
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hosts.rpc._framing import FrameError, LineSplitter, decode_frame, encode_frame


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
    splitter = LineSplitter(max_line=10)
    out = splitter.feed(b"x" * 25) + splitter.feed(b'y\n{"type":"a"}\n')
    assert isinstance(out[0], FrameError)
    assert out[1] == b'{"type":"a"}'


@pytest.mark.parametrize(
    "line",
    [b"", b"not json", b"[1,2]", b'"str"', b"{}", b'{"type":3}', b"\xff\xfe", b'{"type":"a"'],
)
def test_hostile_lines_are_frame_errors(line: bytes) -> None:
    with pytest.raises(FrameError):
        decode_frame(line)


def test_encoded_frames_escape_line_separators() -> None:
    encoded = encode_frame({"type": "x", "text": "a\u2028b\u2029c\n"})
    assert encoded.count(b"\n") == 1 and encoded.endswith(b"\n")
    assert "\u2028".encode() not in encoded
    assert json.loads(encoded) == {"type": "x", "text": "a\u2028b\u2029c\n"}


@given(st.binary(max_size=200))
def test_any_bytes_give_records_or_frame_errors(data: bytes) -> None:
    splitter = LineSplitter(max_line=64)
    for item in splitter.feed(data) + splitter.finish():
        if isinstance(item, FrameError):
            continue
        with contextlib.suppress(FrameError):
            assert isinstance(decode_frame(item), dict)


@given(st.dictionaries(st.text(max_size=5), st.text(), max_size=4))
def test_round_trip(record: dict[str, str]) -> None:
    record = {**record, "type": "t"}
    splitter = LineSplitter()
    (line,) = splitter.feed(encode_frame(record))
    assert decode_frame(line) == record  # type: ignore[arg-type]
