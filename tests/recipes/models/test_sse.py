"""The SSE parser (pure): the WHATWG rules, any chunking, its one documented error."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recipes.models._sse import SSEError, SSEEvent, SSEParser


def parse(*chunks: bytes) -> list[SSEEvent]:
    parser = SSEParser()
    return [event for chunk in chunks for event in parser.feed(chunk)]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b"data: hi\n\n", [SSEEvent("message", "hi")]),
        (b"data:hi\n\n", [SSEEvent("message", "hi")]),
        (b"data:  two spaces\n\n", [SSEEvent("message", " two spaces")]),
        (b"data: a\ndata: b\n\n", [SSEEvent("message", "a\nb")]),
        (b"data: a\r\ndata: b\r\n\r\n", [SSEEvent("message", "a\nb")]),
        (b"data: a\rdata: b\r\r", [SSEEvent("message", "a\nb")]),
        (b"event: ping\ndata: {}\n\n", [SSEEvent("ping", "{}")]),
        (b": a comment\ndata: x\n\n", [SSEEvent("message", "x")]),
        (b"event: lonely\n\n", []),  # no data: not dispatched
        (b"data\n\n", [SSEEvent("message", "")]),  # a field without colon, empty value
        (b"data: cut", []),  # not closed by a blank line: dropped at the end
        (
            b"id: 7\ndata: x\n\ndata: y\n\n",
            [SSEEvent("message", "x", "7"), SSEEvent("message", "y", "7")],
        ),
        (b"retry: 150\ndata: x\n\n", [SSEEvent("message", "x", None, 150)]),
        (b"retry: soon\ndata: x\n\n", [SSEEvent("message", "x")]),
        (b"id: a\x00b\ndata: x\n\n", [SSEEvent("message", "x")]),
        (b"\xef\xbb\xbfdata: bom\n\n", [SSEEvent("message", "bom")]),
        (b"data: \xff\xfe\n\n", [SSEEvent("message", "\ufffd\ufffd")]),
        (b"unknown: field\ndata: x\n\n", [SSEEvent("message", "x")]),
    ],
)
def test_parser_table(body: bytes, expected: list[SSEEvent]) -> None:
    assert parse(body) == expected


def test_crlf_split_across_chunks_is_one_line_end() -> None:
    assert parse(b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n") == [SSEEvent("message", "a\nb")]


def test_utf8_split_across_chunks() -> None:
    encoded = "data: é€\n\n".encode()
    assert parse(*(encoded[i : i + 1] for i in range(len(encoded)))) == [SSEEvent("message", "é€")]


@pytest.mark.parametrize("body", [b"data: " + b"x" * 200, b"data: xxxxx\n" * 40])
def test_oversized_line_or_event_is_a_documented_error(body: bytes) -> None:
    with pytest.raises(SSEError):
        SSEParser(max_event_chars=100).feed(body)


@given(st.binary(max_size=400), st.lists(st.integers(min_value=0, max_value=400), max_size=6))
def test_any_bytes_in_any_chunking_give_the_same_events(body: bytes, cuts: list[int]) -> None:
    whole = parse(body)
    points = sorted({min(c, len(body)) for c in cuts})
    pieces = [body[a:b] for a, b in zip([0, *points], [*points, len(body)], strict=True)]
    assert parse(*pieces) == whole
    assert all(isinstance(e, SSEEvent) and e.event and e.data is not None for e in whole)


_field = st.text(st.characters(exclude_characters="\r\n\x00", exclude_categories=["Cs"]))


@given(st.lists(st.tuples(_field.filter(lambda s: s != ""), _field), max_size=5))
def test_encoded_events_round_trip(events: list[tuple[str, str]]) -> None:
    body = "".join(f"event: {name}\ndata: {data}\n\n" for name, data in events).encode()
    assert parse(body) == [SSEEvent(name, data) for name, data in events]
