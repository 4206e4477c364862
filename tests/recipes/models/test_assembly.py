"""What a stream decoder assembles a message with: streamed text made storable, finished tool
calls."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recipes.models._assembly import TextJoiner, tool_call

_halves = st.sampled_from(["\ud83d", "\ude00", "\udbff", "\udc00"])


@given(
    st.lists(st.text(st.characters(codec="utf-16", exclude_categories=[])) | _halves, max_size=8)
)
def test_joined_text_is_storable_and_keeps_what_was_whole(pieces: list[str]) -> None:
    joiner = TextJoiner()
    out = "".join(joiner.feed(p) for p in pieces) + joiner.flush()
    out.encode("utf-8")
    whole = "".join(pieces)
    try:
        whole.encode("utf-8")
    except UnicodeEncodeError:
        return
    assert out == whole


@pytest.mark.parametrize(
    ("raw", "arguments", "invalid"),
    [
        ('{"a": 1}', {"a": 1}, None),
        ("", {}, None),
        ("  ", {}, None),
        ("[1, 2]", {}, "[1, 2]"),
        ("42", {}, "42"),
        ('{"a": ', {}, '{"a": '),
        ("null", {}, "null"),
        ('"text"', {}, '"text"'),
    ],
)
def test_tool_call_arguments(raw: str, arguments: dict[str, int], invalid: str | None) -> None:
    call = tool_call("c1", "f", raw)
    assert (call.arguments, call.invalid_arguments) == (arguments, invalid)
