"""Each run has its own lane to Slack: a channel Slack rate-limits holds up the posts of the runs
in it, never the cards and replies of the runs elsewhere; a run's posts keep their order."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from interactions.store import RunStatus
from recipes.runs import Runner
from tests.hosts.slack.fake_slack import FakeSlack
from tests.hosts.slack.harness import PROMPT, ROOT, is_card, wait_status, world

pytestmark = pytest.mark.anyio

BUSY = ("chat.postMessage", "CBUSY")


def _in(fake: FakeSlack, channel: str) -> list[str]:
    """What was posted in ``channel``, in order: a card's fallback text, or a reply's text."""
    return [
        ("card: " if is_card(c) else "") + c.args["text"]
        for c in fake.of("chat.postMessage")
        if c.args.get("channel") == channel and c.result["ok"]
    ]


async def test_a_rate_limited_channel_does_not_hold_up_the_cards_of_other_channels(
    tmp_path: Path,
) -> None:
    """Every post waited behind the one Slack rate-limited: a run asking in a quiet channel
    got its card only after the busy channel's retries (~10 s a post), or not at all."""
    async with world(tmp_path, repost_every=0.3) as w:
        w.fake.rate_limit_in[BUSY] = 3  # every post in CBUSY: "retry after 3 s"
        await w.mention("<@UBOT> Release v1", channel="CBUSY", ts="1699999999.000100")
        await w.fake.wait_for("chat.postMessage", lambda c: c.args["channel"] == "CBUSY")
        asked = anyio.current_time()
        await w.mention("<@UBOT> Release v2", channel="CQUIET", ts="1699999999.000200")
        card = await w.fake.wait_for(
            "chat.postMessage", lambda c: is_card(c) and c.args["channel"] == "CQUIET"
        )
        assert card.at - asked < 4.0, "the quiet channel's card waited for the busy channel"
        quiet = _in(w.fake, "CQUIET")
        assert quiet[0] == PROMPT and quiet[1].startswith("card: ")  # its own order kept
        assert _in(w.fake, "CBUSY") == []

        del w.fake.rate_limit_in[BUSY]  # the busy channel calms down: its run is shown too
        await w.fake.wait_for(
            "chat.postMessage", lambda c: is_card(c) and c.args["channel"] == "CBUSY"
            and c.result["ok"]
        )  # fmt: skip
        await w.fake.wait_for(
            "chat.postMessage", lambda c: c.args.get("text") == PROMPT
            and c.args["channel"] == "CBUSY" and c.result["ok"]
        )  # fmt: skip


async def test_a_run_further_behind_than_its_lane_holds_is_caught_up_and_its_thread_told(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A run whose channel Slack holds up while it goes on: its lane holds ``lane_capacity``
    updates, and past that takes no more (memory stays bounded), says so in the log, and once
    the channel moves again posts the run's open questions from the store and tells the thread
    that updates were missed."""
    async with world(tmp_path, lane_capacity=2, repost_every=0.3) as w:
        w.fake.hold.add(BUSY)  # Slack takes no post in CBUSY until released
        await w.mention("<@UBOT> Release v1", channel="CBUSY", ts="1699999999.000100")
        run_id = await w.run_id()
        await wait_status(w.store, run_id, RunStatus.PAUSED_WAITING_HUMAN)
        web = Runner(w.store, env={}, host="web", cwd=ROOT)
        await web.answer(run_id, "int-call_channel", {"answer": "Beta"})  # where to publish
        await web.resume_answered(run_id)  # the run goes on to its approval, in the store only
        await wait_status(w.store, run_id, RunStatus.PAUSED_WAITING_HUMAN)
        mark = len(w.fake.calls)
        await w.mention("<@UBOT> Release v2", channel="CQUIET", ts="1699999999.000200")
        await w.fake.wait_for(  # the feed went past the busy run's updates: its lane is full
            "chat.postMessage", lambda c: is_card(c) and c.args["channel"] == "CQUIET", after=mark
        )
        behind = [r.getMessage() for r in caplog.records
                  if "lane is full" in r.getMessage() and run_id in r.getMessage()]  # fmt: skip
        assert behind == [
            f"Slack is 2 updates behind on run {run_id} (its lane is full): what the run does "
            "next is not shown until it moves again; its cards are then brought up to date"
        ]

        w.fake.release(*BUSY)
        approval = await w.fake.wait_for(
            "chat.postMessage", lambda c: is_card(c) and c.args["channel"] == "CBUSY"
            and "Approve" in c.text
        )  # fmt: skip
        said = _in(w.fake, "CBUSY")
        note = next(t for t in said if t.startswith("⚠️ Slack held this thread up"))
        assert note == (
            "⚠️ Slack held this thread up while the run went on: some of what it said and asked "
            f"is missing here; its open questions follow. The whole run: pi-recipes runs show "
            f"{run_id}"
        )
        assert said.index(note) < said.index("card: " + approval.args["text"])
        assert approval.args["thread_ts"] == "1699999999.000100"


async def test_a_host_stopping_with_slack_behind_says_what_it_leaves_unshown(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A host stopping while Slack held a channel up stopped in silence: what it had not
    posted was gone without a word."""
    async with world(tmp_path) as w:
        w.fake.hold.add(BUSY)
        await w.mention("<@UBOT> Release v1", channel="CBUSY", ts="1699999999.000100")
        run_id = await w.run_id()
        await wait_status(w.store, run_id, RunStatus.PAUSED_WAITING_HUMAN)  # its reply held
    said = [r.getMessage() for r in caplog.records if "Slack behind" in r.getMessage()]
    assert len(said) == 1 and "updates of 1 runs not shown" in said[0], said
