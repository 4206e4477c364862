"""The Slack host in Socket Mode against the fake Slack: a mention starts a run in a thread,
its replies and cards go there, clicks and modals answer, the worker resumes the run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from slack_sdk.models.blocks import Block
from slack_sdk.models.views import View

from interactions.store import RunStatus
from tests.hosts.slack.cards_helpers import markup_left, mrkdwn_texts
from tests.hosts.slack.harness import (
    RECIPES,
    events_of,
    is_card,
    next_card,
    payload_of,
    wait_status,
    world,
)
from tests.hosts.slack.payloads import block_actions, view_submission
from tests.recipes.runs.conftest import CUT_SHORT

pytestmark = pytest.mark.anyio

CHANNEL = "CRELEASE"
MENTION_TS = "1699999999.000100"


def _validates(blocks: list[dict[str, object]]) -> None:
    """slack-sdk's models read every block back and write the same JSON (limits checked)."""
    assert 1 <= len(blocks) <= 50
    for raw in blocks:
        parsed = Block.parse(raw)
        assert parsed is not None
        assert parsed.to_dict() == raw


async def test_a_mention_runs_in_its_thread_and_clicks_answer_it(tmp_path: Path) -> None:
    async with world(tmp_path) as w:
        ack = await w.mention("<@UBOT> Release v1.4.0", ts=MENTION_TS)
        assert set(ack) == {"envelope_id"}  # acknowledged at once, nothing to say
        run_id = await w.run_id()
        assert run_id.startswith("run-slack-Ev")
        card = await w.fake.wait_for("chat.postMessage", is_card)
        assert card.args["channel"] == CHANNEL and card.args["thread_ts"] == MENTION_TS
        _validates(card.args["blocks"])
        posted = w.fake.of("chat.postMessage")
        # the assistant's words come before its question, in the mention's thread
        assert posted[0].args["text"] == "Let me ask where to publish."
        assert posted[0].args["thread_ts"] == MENTION_TS and posted[0].args["mrkdwn"] is False
        assert posted[1] is card
        shown = card.text
        assert "Release channel" in shown and "Where should v1.4.0 be published?" in shown
        assert [e["text"]["text"] for e in card.args["blocks"][-2]["elements"]] == [
            "Stable", "Beta", "Nightly", "Other…",
        ]  # fmt: skip

        ack = await w.interact(block_actions(card, "pi_pick.1", user="UALICE"))
        assert set(ack) == {"envelope_id"}
        resolved = await w.fake.wait_for("chat.update", lambda c: c.args["ts"] == card.result["ts"])
        assert "Answered by <@UALICE>: *Beta*" in resolved.text
        assert not any(b["type"] == "actions" for b in resolved.args["blocks"])
        _validates(resolved.args["blocks"])
        [answered] = await events_of(w.store, run_id, "interaction_answered")
        assert await payload_of(w.store, answered) == {"answer": "beta"}
        assert (answered.data["answered_by"], answered.data["via"]) == ("UALICE", "slack")

        approval = await next_card(w.fake, card)
        _validates(approval.args["blocks"])
        assert approval.args["thread_ts"] == MENTION_TS
        buttons = block_actions(approval, "pi_approve", user="UBOB")["message"]["blocks"]
        controls = next(b for b in buttons if b["type"] == "actions")["elements"]
        assert [(e["text"]["text"], e.get("style")) for e in controls] == [
            ("Approve", "primary"), ("Request changes", None), ("Decline", "danger"),
        ]  # fmt: skip
        assert controls[2]["confirm"]["confirm"]["text"] == "Decline"
        await w.interact(block_actions(approval, "pi_approve", user="UBOB"))
        await wait_status(w.store, run_id, RunStatus.FINISHED)
        done = await w.fake.wait_for("chat.postMessage", lambda c: "Published" in c.text)
        assert done.args["text"] == "Published v1.4.0. Approved."
        assert done.args["thread_ts"] == MENTION_TS
        closed = await w.fake.wait_for(
            "chat.update", lambda c: c.args["ts"] == approval.result["ts"]
        )
        assert "Approved by <@UBOB>" in closed.text


async def test_an_answer_cut_at_the_output_limit_is_said_under_it(tmp_path: Path) -> None:
    async with world(tmp_path, recipe=CUT_SHORT) as w:
        await w.mention("<@UBOT> Write the report", ts=MENTION_TS)
        run_id = await w.run_id()
        approval = await w.fake.wait_for("chat.postMessage", is_card)
        await w.interact(block_actions(approval, "pi_approve", user="UBOB"))
        await wait_status(w.store, run_id, RunStatus.FINISHED)
        warned = await w.fake.wait_for("chat.postMessage", lambda c: "⚠️" in c.text)
        replies = [c.args["text"] for c in w.fake.of("chat.postMessage") if not is_card(c)]
        assert replies[-2:] == [
            "The report, part one of three: sales",
            "⚠️ The model's last answer stopped at the model's output limit (max_tokens), so it "
            "may be cut short; raise the model's max_tokens or ask for less.",
        ]
        assert warned.args["thread_ts"] == MENTION_TS


async def test_request_changes_opens_a_modal_whose_feedback_is_the_revision(
    tmp_path: Path,
) -> None:
    async with world(tmp_path) as w:
        await w.mention("<@UBOT> Release v2.0.0")
        run_id = await w.run_id()
        card = await w.fake.wait_for("chat.postMessage", is_card)
        await w.interact(block_actions(card, "pi_pick.0", user="UALICE"))
        approval = await next_card(w.fake, card)
        click = block_actions(approval, "pi_changes", user="UALICE")
        await w.interact(click)
        opened = await w.fake.wait_for("views.open")
        assert opened.args["trigger_id"] == click["trigger_id"]
        view = View(**opened.args["view"])  # slack-sdk reads the modal back
        assert view.to_dict() == opened.args["view"]
        assert (await events_of(w.store, run_id, "interaction_answered"))[1:] == []

        ack = await w.interact(view_submission(opened, "Wait for QA <!here>", user="UALICE"))
        assert "payload" not in ack  # an empty ack closes the modal
        await wait_status(w.store, run_id, RunStatus.FINISHED)
        answered = (await events_of(w.store, run_id, "interaction_answered"))[-1]
        assert await payload_of(w.store, answered) == {
            "approved": False,
            "feedback": "Wait for QA <!here>",
        }
        closed = await w.fake.wait_for(
            "chat.update", lambda c: c.args["ts"] == approval.result["ts"]
        )
        assert "Changes requested by <@UALICE> — feedback: Wait for QA &lt;!here&gt;" in closed.text
        reply = await w.fake.wait_for("chat.postMessage", lambda c: "Did not publish" in c.text)
        assert "Revision requested. Feedback: Wait for QA &lt;!here&gt;" in reply.args["text"]


async def test_a_multiple_choice_is_ticked_then_submitted(tmp_path: Path) -> None:
    async with world(tmp_path, recipe=f"{RECIPES}:toppings") as w:
        await w.mention("<@UBOT> pizza")
        run_id = await w.run_id()
        card = await w.fake.wait_for("chat.postMessage", is_card)
        _validates(card.args["blocks"])
        kinds = [e["type"] for e in card.args["blocks"][-2]["elements"]]
        assert kinds == ["checkboxes", "button", "button"]  # the boxes, Submit, Other…
        tick = block_actions(card, "pi_checks", user="UALICE", checked=[2])
        await w.interact(tick)  # ticking a box answers nothing
        await w.interact(block_actions(card, "pi_submit", user="UALICE", checked=[0, 2]))
        await wait_status(w.store, run_id, RunStatus.FINISHED)
        [answered] = await events_of(w.store, run_id, "interaction_answered")
        assert await payload_of(w.store, answered) == {"answers": ["Cheese", "Olives"]}
        reply = await w.fake.wait_for("chat.postMessage", lambda c: "The tool said" in c.text)
        assert reply.args["text"] == 'The tool said: Answers: ["Cheese","Olives"]'


async def test_other_opens_a_modal_and_the_typed_answer_is_stored(tmp_path: Path) -> None:
    async with world(tmp_path) as w:
        await w.mention("<@UBOT> Release v3.0.0")
        run_id = await w.run_id()
        card = await w.fake.wait_for("chat.postMessage", is_card)
        await w.interact(block_actions(card, "pi_other", user="UALICE"))
        opened = await w.fake.wait_for("views.open")
        assert json.loads(opened.args["view"]["private_metadata"])["ref"] == [
            run_id, "int-call_channel",
        ]  # fmt: skip
        await w.interact(view_submission(opened, "canary", user="UALICE"))
        approval = await next_card(w.fake, card)
        assert "Publish v3.0.0 to canary?" in approval.text
        [answered] = await events_of(w.store, run_id, "interaction_answered")
        assert await payload_of(w.store, answered) == {"answer": "canary"}


async def test_a_redelivered_mention_starts_one_run(tmp_path: Path) -> None:
    async with world(tmp_path) as w:
        first = await w.mention("<@UBOT> Release v1.0.0", event_id="EvONCE")
        again = await w.fake.send_envelope(
            "events_api",
            {**_mention_body("EvONCE"), "event": {**_mention_body("EvONCE")["event"]}},
            retry_attempt=1,
        )
        assert set(first) == set(again) == {"envelope_id"}
        run_id = await w.run_id()
        await w.fake.wait_for("chat.postMessage", is_card)
        assert [r.id for r in await w.store.list_runs()] == [run_id] == ["run-slack-EvONCE"]


def _mention_body(event_id: str) -> dict[str, object]:
    from tests.hosts.slack.payloads import app_mention

    return app_mention("<@UBOT> Release v1.0.0", event_id=event_id)


async def test_a_select_past_five_options_answers_when_chosen(tmp_path: Path) -> None:
    async with world(tmp_path, recipe=f"{RECIPES}:flavours") as w:
        await w.mention("<@UBOT> ice cream")
        run_id = await w.run_id()
        card = await w.fake.wait_for("chat.postMessage", is_card)
        [menu] = card.args["blocks"][-2]["elements"]  # fixed options: no Other…
        assert menu["type"] == "static_select" and len(menu["options"]) == 7
        await w.interact(block_actions(card, "pi_select", user="UALICE", option=6))
        await wait_status(w.store, run_id, RunStatus.FINISHED)
        reply = await w.fake.wait_for("chat.postMessage", lambda c: "The tool said" in c.text)
        assert reply.args["text"] == "The tool said: Answer: Coffee"


async def test_a_free_text_question_is_answered_in_its_modal(tmp_path: Path) -> None:
    async with world(tmp_path, recipe=f"{RECIPES}:free_text") as w:
        await w.mention("<@UBOT> name it")
        run_id = await w.run_id()
        card = await w.fake.wait_for("chat.postMessage", is_card)
        await w.interact(block_actions(card, "pi_other", user="UALICE"))
        opened = await w.fake.wait_for("views.open")
        assert opened.args["view"]["title"]["text"] == "Your answer"
        await w.interact(view_submission(opened, "Blue Heron", user="UALICE"))
        await wait_status(w.store, run_id, RunStatus.FINISHED)
        reply = await w.fake.wait_for("chat.postMessage", lambda c: "The tool said" in c.text)
        assert reply.args["text"] == "The tool said: Answer: Blue Heron"


async def test_a_hostile_long_question_is_posted_escaped_and_cut(tmp_path: Path) -> None:
    async with world(
        tmp_path, recipe=f"{RECIPES}:hostile", full_text_url="https://pi.example/r/{run_id}"
    ) as w:
        await w.mention("<@UBOT> go")
        run_id = await w.run_id()
        card = await w.fake.wait_for("chat.postMessage", is_card)
        _validates(card.args["blocks"])
        shown = card.text
        for text in [*mrkdwn_texts(card.args["blocks"]), card.args["text"]]:
            assert markup_left(text) == "", text  # nothing Slack would parse but our own tokens
        assert "&lt;!channel&gt;" in card.args["blocks"][1]["text"]["text"]
        assert card.args["blocks"][1]["text"]["text"].endswith("…")
        assert f"<https://pi.example/r/{run_id}|Full text>" in shown
        labels = [e["text"]["text"] for e in card.args["blocks"][-2]["elements"]]
        assert labels[0] == "<!here>" and len(labels[1]) == 75  # plain text: shown, not parsed


async def test_option_labels_and_descriptions_are_escaped_once(tmp_path: Path) -> None:
    """The descriptions section escaped each label and description, then the whole section
    again: ``<!channel>`` showed as ``&amp;lt;!channel&amp;gt;`` (typed text no one wrote)."""
    async with world(tmp_path, recipe=f"{RECIPES}:described") as w:
        await w.mention("<@UBOT> go")
        card = await w.fake.wait_for("chat.postMessage", is_card)
        _validates(card.args["blocks"])
        sections = [b["text"]["text"] for b in card.args["blocks"] if b["type"] == "section"]
        assert sections == [
            "How loud?",
            "• *&lt;!channel&gt; now* — pings &lt;!here&gt; &amp; &lt;@U0ADMIN&gt;\n"
            "• *Quietly* — a &amp; b &lt; c &gt; d",
        ]
        labels = [e["text"]["text"] for e in card.args["blocks"][-2]["elements"]]
        assert labels == ["<!channel> now", "Quietly", "Other…"]  # plain text: shown as typed


async def test_a_modal_slack_will_not_open_is_said_to_the_clicker(tmp_path: Path) -> None:
    async with world(tmp_path, recipe=f"{RECIPES}:free_text") as w:
        await w.mention("<@UBOT> name it", ts=MENTION_TS)
        run_id = await w.run_id()
        card = await w.fake.wait_for("chat.postMessage", is_card)
        w.fake.refuse["views.open"] = "expired_trigger_id"  # Slack answered too late a click
        await w.interact(block_actions(card, "pi_other", user="UALICE"))
        refused = await w.fake.wait_for("views.open")
        assert refused.result == {"ok": False, "error": "expired_trigger_id"}
        told = await w.fake.wait_for("chat.postEphemeral")
        assert told.args["user"] == "UALICE" and told.args["thread_ts"] == MENTION_TS
        assert told.args["text"] == (
            "The form did not open (Slack refused it, or the click came too late): click again."
        )
        assert await events_of(w.store, run_id, "interaction_answered") == []
