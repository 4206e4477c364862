"""The WebSocket frame parser: a frame, or a typed refusal (422 with complaints), never
anything else, whatever text arrives."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hosts.web._errors import Refusal
from hosts.web._frames import (
    AnswerFrame,
    DeclineFrame,
    PingFrame,
    SubscribeFrame,
    parse_client_frame,
)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ('{"type": "subscribe"}', SubscribeFrame),
        ('{"type": "subscribe", "run_id": "run-1", "id": "s"}', SubscribeFrame),
        ('{"type": "answer", "id": "a", "run_id": "r", "interaction_id": "i", '
         '"payload": {"answer": "x"}}', AnswerFrame),
        ('{"type": "decline", "id": "d", "run_id": "r", "interaction_id": "i"}', DeclineFrame),
        ('{"type": "ping"}', PingFrame),
    ],
)  # fmt: skip
def test_frames(text: str, kind: type) -> None:
    assert isinstance(parse_client_frame(text), kind)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "null",
        "[]",
        '{"type": "answer"}',
        '{"type": "answer", "id": "a", "run_id": "r", "interaction_id": "i", "payload": "x"}',
        '{"type": "decline", "id": "d", "run_id": "r", "interaction_id": "i", "payload": {}}',
        '{"type": "subscribe", "run_id": ""}',
        '{"type": "subscribe", "extra": 1}',
        '{"type": "ping", "id": "' + "x" * 201 + '"}',
        '{"type": "launch"}',
        '{"type": "answer", "id": "a", "run_id": "r", "interaction_id": "i", '
        '"payload": {"answer": "x"}, "answered_by": ""}',
    ],
)
def test_refused_frames(text: str) -> None:
    with pytest.raises(Refusal) as refused:
        parse_client_frame(text)
    assert refused.value.status == 422
    assert refused.value.body.error == "invalid request" and refused.value.body.complaints


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=12,
)


@given(st.one_of(st.text(max_size=200), JSON.map(json.dumps), st.binary(max_size=100)))
def test_any_input_is_a_frame_or_a_refusal(text: str | bytes) -> None:
    try:
        frame = parse_client_frame(text)
    except Refusal as refused:
        assert refused.status == 422 and refused.body.complaints
    else:
        assert isinstance(frame, SubscribeFrame | AnswerFrame | DeclineFrame | PingFrame)
