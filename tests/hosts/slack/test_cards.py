"""Cards, pure: every interaction shape becomes blocks slack-sdk accepts, within Slack's limits,
with user text that can ping no one."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hosts._kit import Tally
from hosts.slack._cards import closed_card, open_card
from hosts.slack._refs import parse_block_id
from interactions.store import InteractionRecord
from tests.hosts.slack.cards_helpers import (
    NOW,
    answered,
    approval,
    markup_left,
    mrkdwn_texts,
    question,
    validated,
)

CHANNELS = [
    {"label": "Stable", "value": "stable", "description": "every user gets it"},
    {"label": "Beta", "value": "beta", "description": "opted-in testers"},
    {"label": "Nightly", "value": "nightly"},
]


def _controls(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    (actions,) = [b for b in blocks if b["type"] == "actions"]
    assert parse_block_id(actions["block_id"])[0].interaction_id == "int-c1"
    elements: list[dict[str, Any]] = actions["elements"]
    return elements


def _card(record: InteractionRecord, **kwargs: Any) -> list[dict[str, Any]]:
    return validated(open_card(record, now=NOW, **kwargs).payload())


def test_a_question_with_few_options_is_buttons_other_and_descriptions() -> None:
    blocks = _card(question("Where should v1 go?", options=CHANNELS, header="Release channel"))
    assert blocks[0] == {
        "type": "header", "text": {"type": "plain_text", "text": "Release channel"},
    }  # fmt: skip
    assert blocks[1]["text"] == {"type": "mrkdwn", "text": "Where should v1 go?", "verbatim": True}
    described = "• *Stable* — every user gets it\n• *Beta* — opted-in testers"
    assert blocks[2]["text"]["text"] == described
    controls = _controls(blocks)
    assert [(e["action_id"], e.get("value"), e["text"]["text"]) for e in controls] == [
        ("pi_pick.0", "0", "Stable"), ("pi_pick.1", "1", "Beta"), ("pi_pick.2", "2", "Nightly"),
        ("pi_other", None, "Other…"),
    ]  # fmt: skip
    footer = blocks[-1]["elements"][0]["text"]
    assert footer.startswith("Run `run-1` · ⏳ answer by <!date^")
    assert footer.endswith("(6 days left)")


def test_past_five_options_a_select_and_fixed_options_have_no_other() -> None:
    options = [f"Flavour {i}" for i in range(7)]
    controls = _controls(_card(question("Which?", options=options, allow_other=False)))
    [menu] = controls
    assert menu["type"] == "static_select" and menu["action_id"] == "pi_select"
    assert [o["value"] for o in menu["options"]] == [str(i) for i in range(7)]
    assert menu["options"][6]["text"]["text"] == "Flavour 6"


@pytest.mark.parametrize(("count", "picker"), [(4, "checkboxes"), (10, "checkboxes"),
                                               (11, "multi_static_select")])  # fmt: skip
def test_a_multiple_choice_is_boxes_or_a_menu_then_submit(count: int, picker: str) -> None:
    options = [f"Topping {i}" for i in range(count)]
    controls = _controls(_card(question("Which?", options=options, selection="multiple")))
    assert [(e["type"], e["action_id"]) for e in controls] == [
        (picker, "pi_checks"), ("button", "pi_submit"), ("button", "pi_other"),
    ]  # fmt: skip
    assert len(controls[0]["options"]) == count


def test_a_free_text_question_has_one_answer_button() -> None:
    controls = _controls(_card(question("Name it?")))
    assert [(e["action_id"], e["text"]["text"]) for e in controls] == [("pi_other", "Answer…")]


def test_an_approval_is_approve_request_changes_decline_with_a_confirm() -> None:
    record = approval(
        title="Deploy v2 to prod?", body="All green.", sections=[{"title": "Diff", "body": "+1"}]
    )
    blocks = _card(record)
    assert blocks[0]["text"]["text"] == "Approval needed"
    texts = [b["text"]["text"] for b in blocks if b["type"] == "section"]
    assert texts == ["*Deploy v2 to prod?*", "All green.", "*Diff*\n+1"]
    approve, changes, decline = _controls(blocks)
    assert (approve["action_id"], approve["style"]) == ("pi_approve", "primary")
    assert changes["action_id"] == "pi_changes" and "style" not in changes
    assert (decline["action_id"], decline["style"]) == ("pi_decline", "danger")
    assert decline["confirm"]["title"]["text"] == "Decline?"


HOSTILE = "<!channel> <!here|here> <@U0ADMIN> <#C1> <https://evil.example|login> & *bold*"


def test_user_text_pings_no_one_and_links_nothing() -> None:
    record = question(HOSTILE, options=[{"label": HOSTILE, "description": HOSTILE}] * 1
                      + ["<!everyone>"], header=HOSTILE)  # fmt: skip
    card = open_card(record, now=NOW)
    payload = card.payload()
    validated(payload)
    for text in [*mrkdwn_texts(payload["blocks"]), card.text]:
        assert markup_left(text) == "", text
    assert (
        "&lt;!channel&gt; &lt;!here|here&gt; &lt;@U0ADMIN&gt;"
        in payload["blocks"][1]["text"]["text"]
    )
    assert payload["blocks"][0]["text"]["text"].startswith("<!channel>")  # plain text: shown as is
    sections = [{"title": HOSTILE, "body": HOSTILE}]
    approval_card = open_card(approval(title=HOSTILE, body=HOSTILE, sections=sections), now=NOW)
    for text in mrkdwn_texts(approval_card.payload()["blocks"]):
        assert markup_left(text) == "", text


def test_long_text_is_cut_with_an_ellipsis_and_linked_in_full() -> None:
    sections = [{"title": f"Step {i}", "body": "y" * 4000} for i in range(80)]
    record = approval(title="T" * 5000, body="<" * 2000, sections=sections)
    url = "https://pi.example/runs/{run_id}#{interaction_id}"
    blocks = _card(record, full_text_url=url)
    assert len(blocks) == 50
    sections_md = [b["text"]["text"] for b in blocks if b["type"] == "section"]
    assert all(len(t) <= 3000 for t in sections_md)
    assert sections_md[0].endswith("…*") and sections_md[1].endswith("&lt;…")
    assert sections_md[-1] == "_…and 36 more sections._"  # 44 of 80 shown
    assert blocks[-1]["elements"][0]["text"].endswith(
        "<https://pi.example/runs/run-1#int-c1|Full text>"
    )
    plain = _card(record)
    assert plain[-1]["elements"][0]["text"].endswith(
        "cut to fit Slack: `pi-recipes runs show run-1`"
    )


def test_long_labels_and_many_options_fit() -> None:
    options = [{"label": f"{i} " + "L" * 200, "description": "D" * 300} for i in range(120)]
    [menu, _other] = _controls(_card(question("Q?", options=options)))
    assert len(menu["options"]) == 100
    assert all(
        len(o["text"]["text"]) <= 75 and o["text"]["text"].endswith("…") for o in menu["options"]
    )
    assert all(len(o["description"]["text"]) <= 75 for o in menu["options"])
    buttons = _controls(_card(question("Q?", options=options[:3])))
    assert all(len(b["text"]["text"]) <= 75 for b in buttons)


BASE = question("Where?", options=CHANNELS)
APPROVAL = approval(title="Ship it?")


@pytest.mark.parametrize(
    ("record", "line"),
    [
        (answered(BASE, status="resolved", payload={"answer": "beta"}, answered_by="UALICE",
                  via="slack"), "✅ Answered by <@UALICE>: *Beta*"),
        (answered(BASE, status="resolved", payload={"answer": "mars"}, answered_by="alice",
                  via="cli"), "✅ Answered by alice via cli: *mars*"),
        (answered(BASE, status="resolved", payload={"answer": "beta"}, via="web"),
         "✅ Answered by someone via web: *Beta*"),
        (answered(BASE, status="cancelled", answered_by="UBOB", via="slack"),
         "🚫 Declined by <@UBOB>."),
        (answered(BASE, status="cancelled", answered_by="system", via="cli"),
         "🚫 Closed: the run was cancelled."),
        (answered(BASE, status="cancelled", answered_by="system", via="run_end"),
         "🚫 Closed: the run ended before it was answered."),
        (answered(APPROVAL, status="resolved", payload={"approved": True}, answered_by="UALICE",
                  via="slack"), "✅ Approved by <@UALICE>"),
        (answered(APPROVAL, status="resolved", answered_by="<@U1>", via="web",
                  payload={"approved": False, "feedback": "<!here> no"}),
         "✏️ Changes requested by &lt;@U1&gt; via web — feedback: &lt;!here&gt; no"),
    ],
)  # fmt: skip
def test_a_closed_card_says_who_answered_what_and_how(record: InteractionRecord, line: str) -> None:
    blocks = validated(closed_card(record, now=NOW).payload())
    assert not any(b["type"] == "actions" for b in blocks)
    outcome = blocks[-2]["text"]["text"]
    assert outcome == line
    assert "answer by" not in blocks[-1]["elements"][0]["text"]  # no time left once closed


def test_an_expired_card_says_so() -> None:
    expired = answered(BASE, status="expired", answered_by="system", via="expiry")
    outcome = validated(closed_card(expired, now=NOW).payload())[-2]["text"]["text"]
    assert outcome.startswith("⌛ Expired <!date^") and outcome.endswith(": no answer was given.")
    unswept = BASE.model_copy(update={"expires_at": NOW})  # past its expiry, not settled yet
    again = validated(closed_card(unswept, now=NOW).payload())[-2]["text"]["text"]
    assert (
        again == f"⌛ Expired <!date^{int(NOW.timestamp())}^{{date_short_pretty}} at {{time}}|"
        "2026-05-01 12:00 UTC>: no answer was given."
    )


text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=400)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    message=text,
    labels=st.lists(text.filter(lambda t: t.strip()), min_size=0, max_size=14, unique_by=str.strip),
    descriptions=st.lists(text, max_size=14),
    multiple=st.booleans(),
    allow_other=st.booleans(),
)
def test_any_question_makes_a_valid_card_that_pings_no_one(
    message: str, labels: list[str], descriptions: list[str], multiple: bool, allow_other: bool
) -> None:
    options = [
        {"label": label, **({"description": d} if (d := descriptions[i : i + 1]) and d[0] else {})}
        for i, label in enumerate(labels)
    ]
    try:
        record = question(message or "?", options=options, allow_other=allow_other or not labels,
                          selection="multiple" if multiple and labels else "single")  # fmt: skip
    except ValueError:
        return  # the ask helper refused it (e.g. options that collide): not a card's concern
    for card in (open_card(record, now=NOW), closed_card(record, now=NOW)):
        payload = card.payload()
        validated(payload)
        assert len(json.dumps(payload)) < 200_000
        for shown in [*mrkdwn_texts(payload["blocks"]), card.text]:
            assert markup_left(shown) == ""


def test_an_async_question_is_a_non_blocking_card() -> None:
    asked = question("Which tone?", options=["friendly", "formal"])
    blocks = _card(asked.model_copy(update={"kind": "async"}))
    notes = [b for b in blocks if b["type"] == "context"][:-1]
    assert [n["elements"][0]["text"] for n in notes] == [
        "_Asked while the run keeps working: answer when you are ready._"
    ]
    assert [e["text"]["text"] for e in _controls(blocks)] == ["friendly", "formal", "Other…"]
    assert not [b for b in _card(asked) if b["type"] == "context"][:-1], "a blocking one: none"


def test_an_outcome_past_a_section_s_limit_is_cut_where_no_markup_breaks() -> None:
    labels = [f"<@U{i:02d}> & " + "y" * 290 for i in range(12)]  # escaped, each near 300
    many = question("Which?", options=labels, selection="multiple")
    record = answered(many, status="resolved", payload={"answers": labels}, via="web")
    blocks = validated(closed_card(record, now=NOW).payload())
    outcome = blocks[-2]["text"]["text"]
    assert len(outcome) <= 3000 and outcome.endswith("…")
    assert outcome.startswith("✅ Answered by someone via web: *&lt;@U00&gt; &amp; yyy")
    assert markup_left(outcome) == "" and "&" not in outcome.replace("&lt;", "").replace(
        "&gt;", ""
    ).replace("&amp;", "")  # no entity cut in two
    assert "pi-recipes runs show" in blocks[-1]["elements"][0]["text"]  # says it was cut


def test_the_votes_so_far_are_shown_with_names_that_ping_no_one() -> None:
    tally = Tally(("ada", "slack:U0CAROL", "<!channel> & co"), 4)
    blocks = _card(approval(title="Ship?"), tally=tally)
    [line] = [t for t in mrkdwn_texts(blocks) if "approvals" in t]
    assert line == "3 of 4 approvals: ada, <@U0CAROL>, &lt;!channel&gt; &amp; co"
    assert _controls(blocks)  # still open to the others
    assert "approvals" not in json.dumps(_card(approval(title="Ship?")))
