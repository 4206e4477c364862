"""An async question in Slack: its card says the run keeps working; a click answers it, and as
the last answer the run's await waited for, it continues the run (the reply in the thread)."""

from __future__ import annotations

from pathlib import Path

import pytest

from interactions.store import RunStatus
from tests.hosts.slack.harness import (
    RECIPES,
    events_of,
    is_card,
    wait_event,
    wait_status,
    world,
)
from tests.hosts.slack.payloads import block_actions

pytestmark = pytest.mark.anyio


async def test_an_async_question_card_answered_continues_the_awaiting_run(
    tmp_path: Path,
) -> None:
    async with world(tmp_path, recipe=f"{RECIPES}:async_asker") as w:
        await w.mention("<@UBOT> name it", ts="1699999999.000100")
        run_id = await w.run_id()
        card = await w.fake.wait_for("chat.postMessage", is_card)
        texts = [e["text"] for b in card.args["blocks"] if b["type"] == "context"
                 for e in b["elements"]]  # fmt: skip
        assert "_Asked while the run keeps working: answer when you are ready._" in texts
        await wait_status(w.store, run_id, RunStatus.PAUSED_WAITING_HUMAN)  # the await
        assert len([c for c in w.fake.of("chat.postMessage") if is_card(c)]) == 1, (
            "the await itself has no card: the question's card is the one to answer"
        )
        await w.interact(block_actions(card, "pi_pick.1", user="UALICE"))
        await wait_status(w.store, run_id, RunStatus.FINISHED)
        reply = await w.fake.wait_for(
            "chat.postMessage", lambda c: "The tool said" in c.args.get("text", "")
        )
        assert reply.args["text"].endswith(f"- [{run_id}_asker_async_1] Q: Which name? — A: Comet")
        assert reply.args["thread_ts"] == "1699999999.000100"


async def test_a_restarted_host_keeps_every_card_of_a_run_and_updates_each(
    tmp_path: Path,
) -> None:
    async with world(tmp_path, recipe=f"{RECIPES}:two_async") as first:
        await first.mention("<@UBOT> name it and date it")
        run_id = await first.run_id()
        await wait_event(first.store, run_id, "slack_card_posted", 2)
        await wait_status(first.store, run_id, RunStatus.PAUSED_WAITING_HUMAN)
        cards = [c for c in first.fake.of("chat.postMessage") if is_card(c)]
        day = next(c for c in cards if "Which day?" in c.text)
    async with world(tmp_path, recipe=f"{RECIPES}:two_async") as second:  # a restart
        await second.interact(block_actions(day, "pi_pick.1", user="UALICE"))
        updated = await second.fake.wait_for("chat.update")
        assert updated.args["ts"] == day.result["ts"]
        assert "Answered by <@UALICE>: *Tue*" in updated.text
        assert not any(b["type"] == "actions" for b in updated.args["blocks"])
        assert [c for c in second.fake.of("chat.postMessage") if is_card(c)] == [], (
            "both cards were posted before the restart: none is posted again (the run's lane "
            "caught up before it redrew)"
        )


async def test_a_question_closed_by_its_run_s_end_says_the_run_ended_not_cancelled(
    tmp_path: Path,
) -> None:
    async with world(tmp_path, recipe=f"{RECIPES}:async_unawaited") as w:
        await w.mention("<@UBOT> name it")
        run_id = await w.run_id()
        card = await w.fake.wait_for("chat.postMessage", lambda c: "Which name?" in c.text)
        assert is_card(card), "open while the run waits on its other question"
        ready = await w.fake.wait_for("chat.postMessage", lambda c: "Ready to finish?" in c.text)
        await w.interact(block_actions(ready, "pi_pick.0", user="UALICE"))
        await wait_status(w.store, run_id, RunStatus.FINISHED)
        closed = await w.fake.wait_for("chat.update", lambda c: c.args["ts"] == card.result["ts"])
        assert not any(b["type"] == "actions" for b in closed.args["blocks"])
        assert "🚫 Closed: the run ended before it was answered." in closed.text
        assert "cancelled" not in closed.text

        await w.interact(block_actions(card, "pi_pick.0", user="UALICE"))  # a stale card
        told = await w.fake.wait_for("chat.postEphemeral")
        assert told.args["text"] == "This question is closed: the run ended before it was answered."
        closed_by = [e.data["answered_by"] for e in await events_of(w.store, run_id,
                     "interaction_answered") if e.data["interaction_id"] != "int-c1"]  # fmt: skip
        assert closed_by == ["system"]
