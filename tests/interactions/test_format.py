"""Outcome texts byte for byte, resume payloads, and property tests of the formatters."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from interactions import (
    Answered,
    AnsweredMultiple,
    Approved,
    AwaitingUser,
    Declined,
    InvalidPayloadError,
    RevisionRequested,
    Unavailable,
    format_interaction_outcome,
)
from interactions.resume import format_interaction_resume, outcome_from_resume

UNAVAILABLE = (
    "User interaction is unavailable in this session; nothing was shown to the user. Ask the "
    "user in your normal assistant reply instead, and continue after they respond."
)

OUTCOME_TEXTS = [
    (Answered(answer="blue"), "Answer: blue"),
    (AnsweredMultiple(answers=("a", "b")), 'Answers: ["a","b"]'),
    (AnsweredMultiple(answers=('say "hi"', "ünï")), 'Answers: ["say \\"hi\\"","ünï"]'),
    (Approved(), "Approved."),
    (Approved(feedback="ship it"), "Approved. Feedback: ship it"),
    (RevisionRequested(), "Revision requested."),
    (RevisionRequested(feedback="add tests"), "Revision requested. Feedback: add tests"),
    (Declined(), "User declined to answer. Proceed with your best judgment."),
    (Declined(reason="timeout"), "User declined to answer. Proceed with your best judgment."),
    (AwaitingUser(interrupt_id="int-1"), "Awaiting user response."),
    (Unavailable(), UNAVAILABLE),
]


@pytest.mark.parametrize(("outcome", "text"), OUTCOME_TEXTS)
def test_outcome_texts_byte_for_byte(outcome: Any, text: str) -> None:
    assert format_interaction_outcome(outcome) == text


RESUMES = [
    ("resolved", {"answer": "blue"}, "Answer: blue"),
    ("resolved", {"answers": ["a", "b"]}, 'Answers: ["a","b"]'),
    ("resolved", {"approved": True}, "Approved."),
    ("resolved", {"approved": True, "feedback": "nice"}, "Approved. Feedback: nice"),
    ("resolved", {"approved": True, "feedback": "  "}, "Approved."),
    ("resolved", {"approved": False}, "Revision requested."),
    ("resolved", {"approved": False, "feedback": "more"}, "Revision requested. Feedback: more"),
    ("resolved", {"approved": False, "feedback": None}, "Revision requested."),
    ("cancelled", None, "User declined to answer. Proceed with your best judgment."),
]


@pytest.mark.parametrize(("status", "payload", "text"), RESUMES)
def test_resume_texts(status: str, payload: Any, text: str) -> None:
    assert format_interaction_resume(status=status, payload=payload) == text


def test_revision_is_not_a_decline() -> None:
    assert outcome_from_resume("resolved", {"approved": False}).type == "revision_requested"


HOSTILE_PAYLOADS = [
    ("resolved", None),
    ("resolved", "blue"),
    ("resolved", ["blue"]),
    ("resolved", {}),
    ("resolved", {"answer": ""}),
    ("resolved", {"answer": "   "}),
    ("resolved", {"answer": 3}),
    ("resolved", {"answer": None}),
    ("resolved", {"answer": "a", "answers": ["a"]}),
    ("resolved", {"answer": "a", "extra": 1}),
    ("resolved", {"answers": []}),
    ("resolved", {"answers": "a"}),
    ("resolved", {"answers": ["a", "a"]}),
    ("resolved", {"answers": ["a", ""]}),
    ("resolved", {"approved": "true"}),
    ("resolved", {"approved": "yes"}),
    ("resolved", {"approved": 1}),
    ("resolved", {"approved": 0}),
    ("resolved", {"approved": None}),
    ("resolved", {"approved": True, "feedback": 5}),
    ("resolved", {"approved": True, "answer": "x"}),
    ("accepted", {"answer": "x"}),
    ("", None),
]


@pytest.mark.parametrize(("status", "payload"), HOSTILE_PAYLOADS)
def test_hostile_resumes_are_typed_errors(status: str, payload: Any) -> None:
    with pytest.raises(InvalidPayloadError) as info:
        format_interaction_resume(status=status, payload=payload)
    assert str(info.value)
    assert info.value.reason in ("invalid_payload", "invalid_status")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
payload_like = st.one_of(
    json_values,
    st.fixed_dictionaries({"answer": json_values}),
    st.fixed_dictionaries({"answers": st.lists(st.text(), max_size=4)}),
    st.fixed_dictionaries({"approved": json_values}, optional={"feedback": json_values}),
)


@given(status=st.sampled_from(["resolved", "cancelled", "bogus"]) | st.text(), payload=payload_like)
def test_resume_formatting_returns_text_or_typed_error(status: str, payload: Any) -> None:
    try:
        text = format_interaction_resume(status=status, payload=payload)
    except InvalidPayloadError:
        return
    assert text.split(" ")[0] in ("Answer:", "Answers:", "Approved.", "Revision", "User")


@given(st.lists(st.text(min_size=1).filter(str.strip), min_size=1, max_size=5, unique=True))
def test_answers_text_is_compact_json_that_round_trips(answers: list[str]) -> None:
    stripped = [a.strip() for a in answers]
    if len(set(stripped)) != len(stripped):
        return
    text = format_interaction_resume(status="resolved", payload={"answers": answers})
    assert text.startswith("Answers: ")
    body = text.removeprefix("Answers: ")
    assert json.loads(body) == stripped
    assert body == json.dumps(stripped, separators=(",", ":"), ensure_ascii=False)
