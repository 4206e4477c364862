"""Interactivity payloads, pure: Slack's shapes read into actions, actions into answers; any
other JSON is refused with ``InvalidPayloadError`` or ignored, never anything else."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hosts.slack._actions import Click, Submission, answer_of, parse_interaction
from hosts.slack._cards import open_card
from hosts.slack._modals import answer_modal, feedback_modal
from hosts.slack._refs import CardRef, ModalMeta, digest_of
from interactions import InvalidPayloadError, UsageError
from interactions.store import InteractionRecord
from tests.hosts.slack.cards_helpers import NOW, approval, question
from tests.hosts.slack.fake_slack import Call
from tests.hosts.slack.payloads import block_actions, view_submission

CHANNELS = [{"label": "Stable", "value": "stable"}, {"label": "Beta", "value": "beta"}]
SINGLE = question("Where?", options=CHANNELS)
MANY = question("Which?", options=["A", "B", "C", "D"], selection="multiple")
SELECT = question("Which?", options=[f"F{i}" for i in range(7)])
APPROVAL = approval(title="Ship?")


def _posted(record: InteractionRecord, thread_ts: str | None = "111.000") -> Call:
    card = open_card(record, now=NOW).payload()
    args = {"channel": "C1", **card, **({"thread_ts": thread_ts} if thread_ts else {})}
    return Call("chat.postMessage", args, {}, 0.0, {"ok": True, "ts": "222.000"})


def _click(record: InteractionRecord, action_id: str, **kwargs: Any) -> Click:
    parsed = parse_interaction(block_actions(_posted(record), action_id, user="UA", **kwargs))
    assert isinstance(parsed, Click)
    return parsed


def test_a_button_click_is_read_with_where_the_card_is() -> None:
    click = _click(SINGLE, "pi_pick.1")
    assert click.ref == CardRef("run-1", "int-c1") and click.action == "pi_pick"
    assert (click.index, click.user, click.where.channel) == (1, "UA", "C1")
    assert (click.where.message_ts, click.where.thread_ts) == ("222.000", "111.000")
    assert click.trigger_id and not click.opens_modal
    assert answer_of(click, SINGLE.interrupt) == ("resolved", {"answer": "beta"})


def test_a_select_an_approval_a_decline_and_a_submit_answer() -> None:
    assert answer_of(_click(SELECT, "pi_select", option=6), SELECT.interrupt) == (
        "resolved", {"answer": "F6"},
    )  # fmt: skip
    assert answer_of(_click(APPROVAL, "pi_approve"), APPROVAL.interrupt) == (
        "resolved", {"approved": True},
    )  # fmt: skip
    assert answer_of(_click(APPROVAL, "pi_decline"), APPROVAL.interrupt) == ("cancelled", None)
    submit = _click(MANY, "pi_submit", checked=[3, 1])
    assert submit.picked == (1, 3)
    assert answer_of(submit, MANY.interrupt) == ("resolved", {"answers": ["B", "D"]})


def test_nothing_ticked_is_refused_and_a_modal_button_answers_nothing() -> None:
    with pytest.raises(InvalidPayloadError, match="tick at least one"):
        answer_of(_click(MANY, "pi_submit", checked=[]), MANY.interrupt)
    changes = _click(APPROVAL, "pi_changes")
    assert changes.opens_modal
    with pytest.raises(UsageError):
        answer_of(changes, APPROVAL.interrupt)


def test_ticking_a_box_or_another_app_s_control_is_nothing_to_do() -> None:
    tick = block_actions(_posted(MANY), "pi_checks", user="UA", checked=[0])
    assert parse_interaction(tick) is None
    foreign = block_actions(_posted(SINGLE), "pi_pick.0", user="UA")
    foreign["actions"][0]["action_id"] = "someone_else"
    assert parse_interaction(foreign) is None
    for kind in ("view_closed", "shortcut", "message_action", None):
        assert parse_interaction({"type": kind}) is None


def _opened(view: Any) -> Call:
    return Call("views.open", {"view": view.to_dict()}, {}, 0.0, {"ok": True, "view": {"id": "V1"}})


def test_modal_submissions_answer_with_the_typed_text() -> None:
    meta = ModalMeta(CardRef("run-1", "int-c1"), "C1", "111.000", picked=(0, 2))
    typed = parse_interaction(view_submission(_opened(answer_modal(MANY.interrupt, meta)),
                                              "  Pineapple \n", user="UB"))  # fmt: skip
    assert isinstance(typed, Submission) and typed.meta == meta and typed.user == "UB"
    assert typed.where.channel == "C1" and typed.where.thread_ts == "111.000"
    assert answer_of(typed, MANY.interrupt) == ("resolved", {"answers": ["A", "C", "Pineapple"]})
    assert answer_of(typed, SINGLE.interrupt) == ("resolved", {"answer": "Pineapple"})
    again = parse_interaction(view_submission(_opened(answer_modal(MANY.interrupt, meta)), "C",
                                              user="UB"))  # fmt: skip
    assert isinstance(again, Submission)
    assert answer_of(again, MANY.interrupt) == ("resolved", {"answers": ["A", "C"]})
    feedback = parse_interaction(
        view_submission(_opened(feedback_modal(APPROVAL.interrupt, meta)), "after QA", user="UB")
    )
    assert isinstance(feedback, Submission)
    assert answer_of(feedback, APPROVAL.interrupt) == (
        "resolved", {"approved": False, "feedback": "after QA"},
    )  # fmt: skip
    empty = parse_interaction(
        view_submission(_opened(feedback_modal(APPROVAL.interrupt, meta)), "   ", user="UB")
    )
    assert isinstance(empty, Submission)
    with pytest.raises(InvalidPayloadError, match="empty"):
        answer_of(empty, APPROVAL.interrupt)


def test_ids_too_long_for_a_block_id_travel_as_a_digest() -> None:
    ref = CardRef("run-" + "r" * 200, "int-" + "i" * 200)
    block_id = ref.block_id("act")
    assert len(block_id) <= 255
    long_record = SINGLE.model_copy(update={"run_id": ref.run_id, "id": ref.interaction_id})
    click = _click(long_record, "pi_pick.0")
    assert click.ref == CardRef(digest=digest_of(ref.run_id, ref.interaction_id))
    assert ModalMeta.load(ModalMeta(ref, "C1").dump()).ref == ref  # a modal has more room
    huge = CardRef("run-" + "r" * 2000, "int-1")
    assert len(ModalMeta(huge, "C1", "1.2", picked=(1,)).dump()) <= 3000
    assert ModalMeta.load(ModalMeta(huge, "C1").dump()).ref == CardRef(
        digest=digest_of(huge.run_id, huge.interaction_id)
    )


def _broken(change: Any) -> dict[str, Any]:
    payload = block_actions(_posted(SINGLE), "pi_pick.0", user="UA")
    change(payload)
    return payload


BROKEN = {
    "no user": lambda p: p.pop("user"),
    "user without id": lambda p: p.update(user={"name": "x"}),
    "no actions": lambda p: p.update(actions=[]),
    "block id not ours": lambda p: p["actions"][0].update(block_id="abc"),
    "block id of another shape": lambda p: p["actions"][0].update(block_id='[1,2,"act"]'),
    "block id nested too deep": lambda p: p["actions"][0].update(block_id="[" * 5000),
    "block id past Slack's length": lambda p: p["actions"][0].update(
        block_id=json.dumps(["run-1", "int-1", "x" * 300, "act"])
    ),
    "value not an option": lambda p: p["actions"][0].update(value="-1"),
    "value too long": lambda p: p["actions"][0].update(value="9" * 50),
    "value a superscript digit": lambda p: p["actions"][0].update(value="²"),
    "value an arabic-indic digit": lambda p: p["actions"][0].update(value="٣"),
    "ticked value a superscript digit": lambda p: p["state"].update(
        values={
            p["actions"][0]["block_id"]: {"pi_checks": {"selected_options": [{"value": "²"}]}},
        }
    ),
    "no channel anywhere": lambda p: (p["container"].pop("channel_id"), p.pop("channel")),
}


@pytest.mark.parametrize("change", BROKEN.values(), ids=BROKEN.keys())
def test_a_broken_click_is_refused(change: Any) -> None:
    with pytest.raises(InvalidPayloadError) as caught:
        parse_interaction(_broken(change))
    assert caught.value.reason == "slack_payload"


@pytest.mark.parametrize("metadata", ["", "{}", "[1]", '{"ref":["a"],"c":"C","t":null,"p":[]}',
                                      '{"ref":["a","b"],"c":1,"t":null,"p":[]}',
                                      '{"ref":["a","b"],"c":"C","t":null,"p":[true]}',
                                      "[" * 3000,
                                      '{"ref":' + "[" * 1400 + "]" * 1400 + "}"])  # fmt: skip
def test_a_modal_that_is_not_ours_is_refused(metadata: str) -> None:
    meta = ModalMeta(CardRef("run-1", "int-c1"), "C1")
    payload = view_submission(_opened(answer_modal(SINGLE.interrupt, meta)), "x", user="UB")
    payload["view"]["private_metadata"] = metadata
    with pytest.raises(InvalidPayloadError):
        parse_interaction(payload)


def test_an_option_no_longer_on_the_card_is_refused() -> None:
    click = _click(SINGLE, "pi_pick.1")
    with pytest.raises(InvalidPayloadError, match="not on the card"):
        answer_of(click, question("Where?", options=["Only"]).interrupt)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner,
                                                                  max_size=4),
    max_leaves=20,
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    kind=st.sampled_from(["block_actions", "view_submission", "view_closed"]),
    rest=st.dictionaries(
        st.sampled_from(
            ["user", "actions", "container", "channel", "message", "state", "view", "trigger_id"]
        ),
        json_values,
        max_size=8,
    ),
)
def test_any_json_is_read_or_refused_with_a_typed_error(kind: str, rest: dict[str, Any]) -> None:
    try:
        parsed = parse_interaction({"type": kind, **rest})
    except InvalidPayloadError:
        return
    assert parsed is None or isinstance(parsed, Click | Submission)
