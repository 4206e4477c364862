"""Reminders and escalation in Slack: a reminder and an escalation written by the sweep (at an
injected "now") are replied in the question's thread on the fake Slack, and once escalated a
member of the escalated group answers the card (refused before)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from hosts._kit import load_users
from interactions.reminders import remind_due
from tests.hosts.slack.harness import RECIPES, is_card, wait_event, world
from tests.hosts.slack.payloads import block_actions
from tests.hosts.slack.test_people import users_file

pytestmark = pytest.mark.anyio


async def test_a_reminder_and_an_escalation_are_said_in_the_question_s_thread(
    tmp_path: Path,
) -> None:
    users = load_users(users_file(tmp_path))
    async with world(tmp_path, recipe=f"{RECIPES}:reminding", users=users) as w:
        await w.mention("<@UBOT> Ship?", ts="1699999999.000100")
        run_id = await w.run_id()
        card = await w.fake.wait_for("chat.postMessage", is_card)
        [posted] = await wait_event(w.store, run_id, "slack_card_posted")
        thread = posted.data["thread_ts"] or posted.data["ts"]
        (record,) = await w.store.list_interactions(run_id)

        mark = len(w.fake.calls)
        await w.interact(block_actions(card, "pi_pick.0", user="UBOB"))  # bob is in ops
        refusal = await w.fake.wait_for("chat.postEphemeral", after=mark)
        assert refusal.args["text"] == "Only ada may answer this: nothing was stored."

        await remind_due(w.store, now=record.requested_at + timedelta(hours=1))
        reminder = await w.fake.wait_for(
            "chat.postMessage", lambda c: "Reminder" in (c.args.get("text") or ""), after=mark
        )
        assert reminder.args["thread_ts"] == thread
        assert reminder.args["text"] == (
            "⏰ Reminder 1: this question still waits for an answer from ada."
        )
        await remind_due(w.store, now=record.requested_at + timedelta(hours=4))
        escalated = await w.fake.wait_for(
            "chat.postMessage", lambda c: "Escalated" in (c.args.get("text") or ""), after=mark
        )
        assert escalated.args["thread_ts"] == thread
        said = "⬆️ Escalated to group:ops: ada, group:ops may answer it now."
        assert escalated.args["text"] == said

        await w.interact(block_actions(card, "pi_pick.0", user="UBOB"))
        [answered] = await wait_event(w.store, run_id, "interaction_answered")
        assert answered.data["answered_by"] == "bob"
