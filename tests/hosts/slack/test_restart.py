"""A host that stops, and the host that comes after it: what happened in between is shown, and
what the first one left half done is finished.

Before, a restarted host only posted the cards of questions asked while no host ran: a card
answered elsewhere meanwhile stayed drawn open, a run answered in Slack whose host stopped
before resuming it stayed paused for ever, and a run whose leg a stopping host cut off never
said so in its thread (the follower stopped before the legs)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from interactions.store import RunStatus, open_sqlite_store
from recipes.runs import Runner
from tests.hosts.slack.fake_slack import Call
from tests.hosts.slack.harness import (
    RECIPES,
    RELEASE,
    ROOT,
    is_card,
    wait_event,
    wait_status,
    world,
)
from tests.hosts.slack.payloads import app_mention, slash_command

pytestmark = pytest.mark.anyio

ASKED = "int-call_channel"  # the release recipe's first question: where to publish


async def test_a_card_answered_while_no_host_ran_is_redrawn_once_by_the_next(
    tmp_path: Path,
) -> None:
    async with world(tmp_path, channel="CALERTS") as first:
        paused = await Runner(first.store, env={}, host="cli", cwd=ROOT).start(RELEASE, "v7")
        card = await first.fake.wait_for("chat.postMessage", is_card)
        await wait_event(first.store, paused.run_id, "slack_card_posted")
    async with await open_sqlite_store(tmp_path / "state.db") as store:  # no host runs
        await Runner(store, env={}, host="web", cwd=ROOT).answer(
            paused.run_id, ASKED, {"answer": "Beta"}
        )
    async with world(tmp_path, channel="CALERTS") as second:
        updated = await second.fake.wait_for("chat.update")
        assert (updated.args["channel"], updated.args["ts"]) == ("CALERTS", card.result["ts"])
        assert "Answered by someone via web: *Beta*" in updated.text
        await wait_event(second.store, paused.run_id, "slack_card_closed")
        assert second.fake.of("chat.postMessage") == []
    async with world(tmp_path, channel="CALERTS") as third:
        await third.host.follower.settle(within=5)
        assert third.fake.of("chat.update") == [], "the card was drawn closed already"
        status = (await third.store.get_run(paused.run_id)).status
    assert status is RunStatus.PAUSED_WAITING_HUMAN, "answered on the web, not resumed: it waits"


async def test_a_run_answered_in_slack_whose_host_stopped_before_resuming_it_goes_on(
    tmp_path: Path,
) -> None:
    async with await open_sqlite_store(tmp_path / "state.db") as store:  # no host runs
        starter = Runner(store, env={}, host="cli", cwd=ROOT)
        in_slack = await starter.start(RELEASE, "v8")
        in_cli = await starter.start(RELEASE, "v9")
        await Runner(store, env={}, host="slack", cwd=ROOT).answer(
            in_slack.run_id, ASKED, {"answer": "Beta"}, answered_by="UALICE"
        )
        await starter.answer(in_cli.run_id, ASKED, {"answer": "Beta"})  # no --resume: it waits
    async with world(tmp_path, channel="CALERTS") as w:
        approval = await w.fake.wait_for("chat.postMessage", lambda c: "Approve" in c.text)
        assert is_card(approval)
        [posted] = await wait_event(w.store, in_slack.run_id, "slack_card_posted")  # after it
        assert posted.data["ts"] == approval.result["ts"], "the run went on to its next question"
        left = await w.store.list_interactions(in_cli.run_id)
        assert [r.id for r in left] == [ASKED], "a run answered elsewhere was left as it was"


async def test_a_host_stopping_mid_leg_says_in_the_thread_that_the_run_stopped(
    tmp_path: Path,
) -> None:
    async with world(tmp_path, recipe=f"{RECIPES}:slow", stop_grace=0.2) as w:
        await w.mention("<@UBOT> work")
        run_id = await w.run_id()
        await wait_status(w.store, run_id, RunStatus.RUNNING)
    async with await open_sqlite_store(tmp_path / "state.db") as store:
        status = (await store.get_run(run_id)).status
    said = [c.args["text"] for c in w.fake.of("chat.postMessage")]
    assert status is RunStatus.FAILED_RESUMABLE
    assert said and said[-1].startswith("⚠️ The run stopped: interrupted"), said
    assert said[-1].endswith(f"Retry it with: pi-recipes runs retry {run_id}")


STOPPING = "Nothing was started: this app is stopping. Ask again once it is back."


@pytest.mark.parametrize("how", ["mention", "slash command"])
async def test_a_run_asked_for_while_the_host_stops_is_told_nothing_started(
    tmp_path: Path, how: str
) -> None:
    """A mention (or the slash command) that came while the host was stopping was acknowledged
    and dropped with a log line: the person waited for a run that never started, and no host
    would start it."""
    told: list[Call] = []
    async with (
        anyio.create_task_group() as outside,
        world(tmp_path, recipe=f"{RECIPES}:slow", stop_grace=2.0, socket_mode_on=False,
              command="/release") as w,
    ):  # fmt: skip  # Slack's payloads handed to the host as its transports do
        await w.host.on_event(app_mention("<@UBOT> work", ts="1699999999.000100"))
        run_id = await w.run_id()
        await wait_status(w.store, run_id, RunStatus.RUNNING)

        async def asked_late() -> None:  # runs once the host stops: the slow leg goes on
            if how == "mention":
                await w.host.on_event(app_mention("<@UBOT> more", ts="1699999999.000200"))
            else:
                await w.host.on_command(slash_command("more"))
            told.append(await w.fake.wait_for("chat.postMessage", lambda c: STOPPING in c.text))

        outside.start_soon(asked_late)
    [said] = told
    if how == "mention":
        assert said.args["thread_ts"] == "1699999999.000200"
    else:
        opening = w.fake.wait_for("chat.postMessage", lambda c: "asked: more" in c.text)
        assert said.args["thread_ts"] == (await opening).result["ts"]
    async with await open_sqlite_store(tmp_path / "state.db") as store:
        assert [r.id for r in await store.list_runs()] == [run_id]
