"""The links, pure: a token reads back as the link it signs; anything else (forged, changed,
cut, signed with another secret, any text at all) is a ``BadLink``, never another error; the
choices each kind of question offers and the answers they give; a secret too short is refused
without being quoted."""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hosts.email._links import BadLink, Link, LinkSigner, answer_for, choice_label, choices_of
from interactions import AskUserInterrupt, InvalidPayloadError, UsageError

SECRET = "s" * 40
LINK = Link("run-1", "int-a", "approve", "ada", "ada@example.com",
            datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC))  # fmt: skip


def test_a_token_reads_back_and_a_changed_one_does_not() -> None:
    signer = LinkSigner(SECRET)
    token = signer.token(LINK)
    assert signer.read(token) == LINK
    assert "ada@example.com" not in repr(signer) and SECRET not in repr(signer)
    payload, _, signature = token.rpartition(".")
    for bad in (token[:-1], f"{payload}x.{signature}", "", "a.b"):
        with pytest.raises(BadLink):
            signer.read(bad)
    with pytest.raises(BadLink):
        LinkSigner("t" * 40).read(token)


SIGNER = LinkSigner(SECRET)


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(st.text(max_size=300), st.from_regex(r"[A-Za-z0-9_\-]{1,80}\.[A-Za-z0-9_\-]{1,40}"))
)
def test_any_text_is_a_link_or_a_bad_link(text: str) -> None:
    with contextlib.suppress(BadLink):
        assert isinstance(SIGNER.read(text), Link)


def test_a_short_secret_is_refused_unquoted() -> None:
    with pytest.raises(UsageError) as refused:
        LinkSigner("hunter2-hunter2")
    assert "hunter2" not in str(refused.value)


def _interrupt(**fields: object) -> AskUserInterrupt:
    return AskUserInterrupt.model_validate({"id": "int-a", "reason": "question", **fields})


@pytest.mark.parametrize(
    ("fields", "choices"),
    [
        ({"reason": "confirmation"}, ["approve", "changes", "decline"]),
        ({"options": [{"label": "Mon"}, {"label": "Tue"}], "allowOther": False},
         ["option:0", "option:1"]),
        ({"options": [{"label": "Mon"}]}, ["option:0", "text"]),
        ({}, ["text"]),
        ({"options": [{"label": "a"}, {"label": "b"}], "selection": "multiple"}, ["choose"]),
    ],
)  # fmt: skip
def test_the_choices_each_question_offers(fields: dict[str, object], choices: list[str]) -> None:
    assert choices_of(_interrupt(**fields)) == choices


def test_the_answers_the_choices_give() -> None:
    approval = _interrupt(reason="confirmation")
    assert answer_for(approval, "approve") == ("resolved", {"approved": True})
    assert answer_for(approval, "decline") == ("cancelled", None)
    assert answer_for(approval, "changes", " Smaller ") == (
        "resolved", {"approved": False, "feedback": "Smaller"},
    )  # fmt: skip
    with pytest.raises(InvalidPayloadError):
        answer_for(approval, "changes", "   ")
    days = _interrupt(options=[{"label": "Mon", "value": "monday"}])
    assert answer_for(days, "option:0") == ("resolved", {"answer": "monday"})
    assert choice_label(days, "option:0") == "Mon"
    several = _interrupt(options=[{"label": "a"}, {"label": "b"}], selection="multiple")
    assert answer_for(several, "choose", "c", ["1", "0"]) == (
        "resolved",
        {"answers": ["a", "b", "c"]},
    )
    for picked in ([], ["2"], ["-1"], ["x"]):
        with pytest.raises(InvalidPayloadError):
            answer_for(several, "choose", "", picked)
    for bad in ("option:1", "option:x", "approve", "choose", ""):
        with pytest.raises(UsageError):
            answer_for(days, bad)
