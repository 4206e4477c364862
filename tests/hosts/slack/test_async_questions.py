"""An async question in Slack: its card says the run keeps working; a click answers it, and as
the last answer the run's await waited for, it continues the run (the reply in the thread)."""

from __future__ import annotations

from pathlib import Path

import pytest

from interactions.store import RunStatus
from tests.hosts.slack.harness import RECIPES, is_card, wait_status, world
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
