"""A tool call's approval in Slack, through the fake Slack in Socket Mode: its card's "Edit
arguments…" opens a modal of the arguments (a field per flat parameter, else one JSON text),
prefilled with the call's own; sent, it approves the call with them, or, when they do not fit
the tool's parameters, shows why under the inputs (``response_action: errors``) and stores
nothing. The card's "Always…" menu answers with a decision that sticks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from slack_sdk.models.views import View

from interactions.store import RunStatus
from tests.hosts.slack.harness import (
    RECIPES,
    events_of,
    is_card,
    payload_of,
    wait_event,
    wait_status,
    world,
)
from tests.hosts.slack.payloads import block_actions, filled_in, view_state_submission
from tests.hosts.slack.recipes_for_slack import SHIP_ARGS

pytestmark = pytest.mark.anyio


def _inputs(opened: object) -> dict[str, dict[str, object]]:
    view = opened.args["view"]  # type: ignore[attr-defined]
    return {b["label"]["text"]: b for b in view["blocks"] if b["type"] == "input"}


async def test_edited_arguments_approve_the_call_with_them(tmp_path: Path) -> None:
    async with world(tmp_path, recipe=f"{RECIPES}:shipper") as w:
        await w.mention("<@UBOT> ship it")
        run_id = await w.run_id()
        card = await w.fake.wait_for("chat.postMessage", is_card)
        labels = [e.get("text", {}).get("text") for e in card.args["blocks"][-2]["elements"]]
        assert labels == ["Approve", "Request changes", "Edit arguments…", "Decline", None]
        shown = [b["text"]["text"] for b in card.args["blocks"] if b["type"] == "section"]
        assert any('"replicas": 2' in text for text in shown)  # the arguments are on the card
        await w.interact(block_actions(card, "pi_edit", user="UALICE"))
        opened = await w.fake.wait_for("views.open")
        assert View(**opened.args["view"]).to_dict() == opened.args["view"]  # slack-sdk reads it
        assert opened.args["view"]["callback_id"] == "pi_args"
        fields = _inputs(opened)
        assert list(fields) == ["mode", "notify", "replicas", "target"]
        assert fields["mode"]["element"]["initial_option"]["value"] == "safe"
        assert "initial_options" not in fields["notify"]["element"]
        assert fields["replicas"]["element"]["initial_value"] == "2"
        assert fields["replicas"]["element"]["is_decimal_allowed"] is False
        assert fields["target"]["element"]["initial_value"] == "staging"
        assert fields["target"]["hint"]["text"] == "where to ship"
        assert fields["target"]["optional"] is False and fields["mode"]["optional"] is True
        assert await events_of(w.store, run_id, "interaction_answered") == []

        values = filled_in(opened, target="prod <!here>", replicas="3", mode="fast", notify=True)
        ack = await w.interact(view_state_submission(opened, values, user="UALICE"))
        assert "payload" not in ack  # an empty ack closes the modal
        await wait_status(w.store, run_id, RunStatus.FINISHED)
        [answered] = await events_of(w.store, run_id, "interaction_answered")
        edited = {"target": "prod <!here>", "replicas": 3, "mode": "fast", "notify": True}
        assert await payload_of(w.store, answered) == {"approved": True, "args": edited}
        reply = await w.fake.wait_for("chat.postMessage", lambda c: "The tool said" in c.text)
        assert "Shipped to prod &lt;!here&gt; x3 (fast, True)" in reply.args["text"]
        closed = await w.fake.wait_for("chat.update", lambda c: c.args["ts"] == card.result["ts"])
        assert "✅ Approved with edited arguments by <@UALICE>" in closed.text


async def test_an_edit_that_does_not_fit_is_shown_in_the_modal_and_nothing_is_stored(
    tmp_path: Path,
) -> None:
    async with world(tmp_path, recipe=f"{RECIPES}:shipper") as w:
        await w.mention("<@UBOT> ship it")
        run_id = await w.run_id()
        card = await w.fake.wait_for("chat.postMessage", is_card)
        await w.interact(block_actions(card, "pi_edit", user="UALICE"))
        opened = await w.fake.wait_for("views.open")
        blocks = {label: b["block_id"] for label, b in _inputs(opened).items()}
        too_many = filled_in(opened, replicas="99")
        ack = await w.interact(view_state_submission(opened, too_many, user="UALICE"))
        assert ack["payload"] == {
            "response_action": "errors",
            "errors": {blocks["replicas"]: "99 is greater than the maximum of 10"},
        }
        no_target = filled_in(opened, target=None)
        ack = await w.interact(view_state_submission(opened, no_target, user="UALICE"))
        assert ack["payload"]["errors"] == {blocks["target"]: "Required."}
        assert await events_of(w.store, run_id, "interaction_answered") == []
        assert (await w.store.get_run(run_id)).status == RunStatus.PAUSED_WAITING_HUMAN
        assert w.fake.of("chat.postEphemeral") == []

        ack = await w.interact(view_state_submission(opened, filled_in(opened), user="UALICE"))
        assert "payload" not in ack  # unchanged: approved with the call's own arguments
        await wait_status(w.store, run_id, RunStatus.FINISHED)
        [answered] = await events_of(w.store, run_id, "interaction_answered")
        assert await payload_of(w.store, answered) == {"approved": True, "args": SHIP_ARGS}


async def test_arguments_that_are_not_flat_are_edited_as_json(tmp_path: Path) -> None:
    async with world(tmp_path, recipe=f"{RECIPES}:batcher") as w:
        await w.mention("<@UBOT> ship both")
        run_id = await w.run_id()
        card = await w.fake.wait_for("chat.postMessage", is_card)
        await w.interact(block_actions(card, "pi_edit", user="UALICE"))
        opened = await w.fake.wait_for("views.open")
        [(label, block)] = _inputs(opened).items()
        assert label == "Arguments (JSON)" and block["block_id"] == "pi_args_json"
        assert json.loads(block["element"]["initial_value"]) == {"targets": ["eu", "us"]}
        for typed, said in [
            ('{"targets": [', "not JSON: "),
            ("[1]", "the arguments must be one JSON object"),
            ('{"targets": "asia"}', "targets: 'asia' is not of type 'array'"),
        ]:
            values = filled_in(opened, **{label: typed})
            ack = await w.interact(view_state_submission(opened, values, user="UALICE"))
            assert ack["payload"]["response_action"] == "errors"
            assert ack["payload"]["errors"]["pi_args_json"].startswith(said), typed
        assert await events_of(w.store, run_id, "interaction_answered") == []
        values = filled_in(opened, **{label: '{"targets": ["asia"]}'})
        await w.interact(view_state_submission(opened, values, user="UALICE"))
        await wait_status(w.store, run_id, RunStatus.FINISHED)
        reply = await w.fake.wait_for("chat.postMessage", lambda c: "The tool said" in c.text)
        assert "Batched asia" in reply.args["text"]


@pytest.mark.parametrize(
    ("option", "payload", "said"),
    [
        (0, {"approved": True, "remember": {"scope": "run", "args": False}},
         "✅ Approved always (this run) by <@UALICE>"),
        (3, {"approved": False, "remember": {"scope": "thread", "args": False}},
         "🚫 Denied always (this thread) by <@UALICE>"),
    ],
)  # fmt: skip
async def test_the_always_menu_answers_with_a_decision_that_sticks(
    tmp_path: Path, option: int, payload: dict[str, object], said: str
) -> None:
    async with world(tmp_path, recipe=f"{RECIPES}:shipper") as w:
        await w.mention("<@UBOT> ship it")
        run_id = await w.run_id()
        card = await w.fake.wait_for("chat.postMessage", is_card)
        menu = card.args["blocks"][-2]["elements"][-1]
        assert menu["type"] == "overflow" and menu["confirm"]["title"]["text"] == "Make it stick?"
        assert [o["text"]["text"] for o in menu["options"]] == [
            "Approve always (this run)",
            "Approve always (this thread)",
            "Deny always (this run)",
            "Deny always (this thread)",
        ]
        await w.interact(block_actions(card, "pi_always", user="UALICE", option=option))
        [answered] = await wait_event(w.store, run_id, "interaction_answered")
        assert await payload_of(w.store, answered) == payload
        closed = await w.fake.wait_for("chat.update", lambda c: c.args["ts"] == card.result["ts"])
        assert said in closed.text
        await wait_status(w.store, run_id, RunStatus.FINISHED)
