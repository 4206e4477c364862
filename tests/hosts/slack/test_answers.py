"""Who may answer, who wins a race, and cards that follow answers given anywhere else (the CLI
in another process, the expiry sweep)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import anyio
import pytest

from hosts.slack import AllowList
from hosts.slack._replies import MAX_REPOSTS
from interactions import DECLINED_TEXT
from interactions.store import RunStatus
from interactions.testing.store_conformance import store_snapshot
from recipes.runs import Runner
from tests.hosts.cli_helpers import cli_env, pi
from tests.hosts.slack.harness import (
    PROMPT,
    RECIPES,
    RELEASE,
    ROOT,
    events_of,
    is_card,
    next_card,
    payload_of,
    wait_event,
    wait_status,
    world,
)
from tests.hosts.slack.payloads import block_actions
from tests.hosts.slack.recipes_for_slack import LONG_PICKS

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("allow", "members", "groups"),
    [
        (["UALICE"], {}, {}),
        (["channel"], {"CRELEASE": ["UALICE", "UCAROL"]}, {}),
        (["S0RELEASE,UDAVE"], {}, {"S0RELEASE": ["UALICE"]}),
    ],
    ids=["user-ids", "channel-members", "user-groups"],
)
async def test_someone_not_on_the_allow_list_is_told_so_and_nothing_changes(
    tmp_path: Path, allow: list[str], members: dict[str, list[str]], groups: dict[str, list[str]]
) -> None:
    from hosts.slack import AllowList

    async with world(tmp_path, allow=AllowList.parse(allow)) as w:
        w.fake.members.update(members)
        w.fake.groups.update(groups)
        await w.mention("<@UBOT> Release v1.4.0", ts="1699999999.000100")
        run_id = await w.run_id()
        card = await w.fake.wait_for("chat.postMessage", is_card)
        await wait_event(w.store, run_id, "slack_card_posted")
        before = await store_snapshot(w.store)

        for action in ("pi_pick.0", "pi_other"):
            mark = len(w.fake.calls)
            ack = await w.interact(block_actions(card, action, user="UBOB"))
            assert set(ack) == {"envelope_id"}
            refusal = await w.fake.wait_for("chat.postEphemeral", after=mark)
            assert refusal.args == {
                "channel": "CRELEASE",
                "user": "UBOB",
                "text": "You are not allowed to answer this.",
                "thread_ts": "1699999999.000100",
            }
        assert await store_snapshot(w.store) == before
        assert w.fake.of("views.open") == [] and w.fake.of("chat.update") == []

        await w.interact(block_actions(card, "pi_pick.0", user="UALICE"))
        [answered] = await wait_event(w.store, run_id, "interaction_answered")
        assert answered.data["answered_by"] == "UALICE"


@pytest.mark.parametrize("same_button", [True, False], ids=["same-button", "different-buttons"])
async def test_two_people_clicking_at_once_one_wins_the_other_is_told(
    tmp_path: Path, same_button: bool
) -> None:
    async with world(tmp_path) as w:
        await w.mention("<@UBOT> Release v1.4.0")
        run_id = await w.run_id()
        card = await w.fake.wait_for("chat.postMessage", is_card)
        clicks = {
            "UALICE": block_actions(card, "pi_pick.0", user="UALICE"),
            "UBOB": block_actions(card, "pi_pick.0" if same_button else "pi_pick.1", user="UBOB"),
        }
        async with anyio.create_task_group() as group:
            for click in clicks.values():
                group.start_soon(w.interact, click)
        [answered] = await wait_event(w.store, run_id, "interaction_answered")
        winner = answered.data["answered_by"]
        loser = "UBOB" if winner == "UALICE" else "UALICE"
        told = await w.fake.wait_for("chat.postEphemeral")
        assert told.args["user"] == loser
        assert told.args["text"] == f"Already answered by <@{winner}>."
        await wait_event(w.store, run_id, "slack_card_posted", 2)  # the approval's card
        assert len(await events_of(w.store, run_id, "interaction_answered")) == 1
        assert len(w.fake.of("chat.postEphemeral")) == 1


async def test_an_answer_from_the_cli_in_another_process_updates_the_card(
    tmp_path: Path,
) -> None:
    async with world(tmp_path) as w:
        await w.mention("<@UBOT> Release v1.4.0")
        run_id = await w.run_id()
        card = await w.fake.wait_for("chat.postMessage", is_card)
        await wait_event(w.store, run_id, "slack_card_posted")
        done = await anyio.to_thread.run_sync(
            lambda: pi(
                "runs",
                "answer",
                run_id,
                "int-call_channel",
                "Beta",
                "--as",
                "alice@example.com",
                "--store",
                str(w.db),
                cwd=tmp_path,
                env=cli_env(),
            )
        )
        assert done.returncode == 0, done.stderr
        updated = await w.fake.wait_for("chat.update", lambda c: c.args["ts"] == card.result["ts"])
        assert "Answered by alice@example.com via cli: *Beta*" in updated.text
        assert (await w.store.get_run(run_id)).status is RunStatus.PAUSED_WAITING_HUMAN


async def test_a_run_started_elsewhere_is_asked_in_the_channel_and_resumed_here(
    tmp_path: Path,
) -> None:
    async with world(tmp_path, channel="CALERTS") as w:
        elsewhere = Runner(w.store, env={}, host="cli", cwd=ROOT)
        paused = await elsewhere.start(RELEASE, "Release v9.9.9")
        card = await w.fake.wait_for("chat.postMessage", is_card)
        assert card.args["channel"] == "CALERTS" and card.args.get("thread_ts") is None
        assert w.fake.of("chat.postMessage") == [card]  # its replies are not Slack's to post
        await w.interact(block_actions(card, "pi_pick.1", user="UALICE"))
        approval = await next_card(w.fake, card)
        await w.interact(block_actions(approval, "pi_decline", user="UALICE"))
        await wait_status(w.store, paused.run_id, RunStatus.FINISHED)
        closed = await w.fake.wait_for(
            "chat.update", lambda c: c.args["ts"] == approval.result["ts"]
        )
        assert "Declined by <@UALICE>" in closed.text
        result = await elsewhere.status(paused.run_id)
        assert result.text == f"Did not publish v9.9.9: {DECLINED_TEXT}"


async def test_a_run_started_elsewhere_cannot_choose_the_slack_thread_it_is_asked_in(
    tmp_path: Path,
) -> None:
    """A thread id is the starter's choice (an AG-UI client names its own): one shaped like a
    Slack thread pointed the host's cards and replies at a channel of the starter's choosing."""
    async with world(tmp_path, channel="CALERTS") as w:
        elsewhere = Runner(w.store, env={}, host="web", cwd=ROOT)
        chosen = "slack:CSECRET:1699999999.000100"
        await elsewhere.start(RELEASE, "Release v9.9.8", thread_id=chosen)
        card = await w.fake.wait_for("chat.postMessage", is_card)
        assert card.args["channel"] == "CALERTS" and card.args.get("thread_ts") is None
        assert [c.args["channel"] for c in w.fake.of("chat.postMessage")] == ["CALERTS"]


async def test_an_expired_question_says_so_on_its_card(tmp_path: Path) -> None:
    async with world(tmp_path, channel="CALERTS", expire_every=0.2) as w:
        short = Runner(w.store, env={"PI_INTERRUPT_TTL_SECONDS": "1"}, host="cli", cwd=ROOT)
        paused = await short.start(RELEASE, "Release v0.0.1")
        card = await w.fake.wait_for("chat.postMessage", is_card)
        assert "left)" in card.text  # the time left is on the open card
        expired = await w.fake.wait_for("chat.update", lambda c: c.args["ts"] == card.result["ts"])
        assert "⌛ Expired" in expired.text and "no answer was given" in expired.text
        assert not any(b["type"] == "actions" for b in expired.args["blocks"])
        [answered] = await events_of(w.store, paused.run_id, "interaction_answered")
        assert answered.data["status"] == "expired"

        await w.interact(block_actions(card, "pi_pick.0", user="UALICE"))  # a stale card
        told = await w.fake.wait_for("chat.postEphemeral")
        assert told.args["text"] == "This question has expired: it no longer takes answers."
        assert len(await events_of(w.store, paused.run_id, "interaction_answered")) == 1


async def test_a_card_redraw_slack_refused_is_tried_again(tmp_path: Path) -> None:
    """A failed ``chat.update`` left the card drawn open for good."""
    async with world(tmp_path, channel="CALERTS", repost_every=0.2) as w:
        paused = await Runner(w.store, env={}, host="cli", cwd=ROOT).start(RELEASE, "Release v4")
        card = await w.fake.wait_for("chat.postMessage", is_card)
        await wait_event(w.store, paused.run_id, "slack_card_posted")
        w.fake.refuse["chat.update"] = "internal_error"
        elsewhere = Runner(w.store, env={}, host="web", cwd=ROOT)
        await elsewhere.answer(paused.run_id, "int-call_channel", {"answer": "Beta"})
        redrawn = await w.fake.wait_for("chat.update", lambda c: c.result["ok"])
        refused = w.fake.of("chat.update")[0]
        assert refused.result["error"] == "internal_error"
        assert redrawn.args["ts"] == card.result["ts"]
        assert "Answered by someone via web: *Beta*" in redrawn.text
        await wait_event(w.store, paused.run_id, "slack_card_closed")


async def test_other_on_a_question_past_its_expiry_says_so_and_opens_no_form(
    tmp_path: Path,
) -> None:
    """Before the sweep settled it, an expired question still opened the typed-answer form,
    which then refused what was typed."""
    async with world(tmp_path, channel="CALERTS") as w:  # the sweep: once an hour
        short = Runner(w.store, env={"PI_INTERRUPT_TTL_SECONDS": "3"}, host="cli", cwd=ROOT)
        paused = await short.start(RELEASE, "Release v0.0.2")
        card = await w.fake.wait_for("chat.postMessage", is_card)
        [asked] = await w.store.list_interactions(paused.run_id)
        left = (asked.expires_at - datetime.now(UTC)).total_seconds()
        await anyio.sleep(left + 0.1)  # past the question's expiry, which only the clock settles
        await w.interact(block_actions(card, "pi_other", user="UALICE"))
        told = await w.fake.wait_for("chat.postEphemeral")
        assert told.args["text"] == "This question has expired: it no longer takes answers."
        assert w.fake.of("views.open") == []
        redrawn = await w.fake.wait_for("chat.update")
        assert "⌛ Expired" in redrawn.text


async def test_a_card_slack_refused_is_posted_again_while_its_question_is_open(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with world(tmp_path, channel="CALERTS", repost_every=0.2) as w:
        w.fake.refuse["chat.postMessage"] = "not_in_channel"  # until someone invites the app
        paused = await Runner(w.store, env={}, host="cli", cwd=ROOT).start(RELEASE, "Release v3")
        card = await w.fake.wait_for("chat.postMessage", lambda c: c.result["ok"])
        refused, posted = w.fake.of("chat.postMessage")
        assert refused.result["error"] == "not_in_channel" and refused.text == card.text
        assert is_card(posted) and posted.args["channel"] == "CALERTS"
        [spot] = await wait_event(w.store, paused.run_id, "slack_card_posted")
        assert spot.data["ts"] == posted.result["ts"]
        await anyio.sleep(0.5)  # posted once: nothing more is posted
        assert w.fake.of("chat.postMessage") == [refused, posted]
        await w.interact(block_actions(posted, "pi_pick.1", user="UALICE"))
        await wait_event(w.store, paused.run_id, "interaction_answered")
    said = [r.getMessage() for r in caplog.records if "could not be posted" in r.getMessage()]
    assert said == [
        f"the card of int-call_channel (run {paused.run_id}) could not be posted in CALERTS; no "
        "one sees the question in Slack until it is: trying again every 0.2 s"
    ]


async def test_a_card_that_cannot_be_posted_is_not_posted_after_its_question_closes(
    tmp_path: Path,
) -> None:
    async with world(tmp_path, channel="CALERTS", repost_every=0.3) as w:
        w.fake.refuse["chat.postMessage"] = "not_in_channel"
        elsewhere = Runner(w.store, env={}, host="cli", cwd=ROOT)
        paused = await elsewhere.start(RELEASE, "Release v4")
        await w.fake.wait_for("chat.postMessage")
        await elsewhere.cancel(paused.run_id)
        await anyio.sleep(0.8)
        [refused] = w.fake.of("chat.postMessage")
        assert refused.result["ok"] is False


async def test_a_rate_limited_post_is_retried_after_retry_after(tmp_path: Path) -> None:
    async with world(tmp_path) as w:
        w.fake.rate_limit["chat.postMessage"] = 1
        await w.mention("<@UBOT> Release v1.4.0")
        await w.fake.wait_for("chat.postMessage", is_card)
        first, second = w.fake.of("chat.postMessage")[:2]
        assert first.result["error"] == "ratelimited" and second.result["ok"] is True
        assert first.args["text"] == second.args["text"] == "Let me ask where to publish."
        assert second.at - first.at >= 1.0


async def test_a_rate_limit_longer_than_the_host_waits_does_not_hold_up_the_cards(
    tmp_path: Path,
) -> None:
    async with world(tmp_path) as w:
        w.fake.rate_limit["chat.postMessage"] = 3600  # the run's first reply: "wait an hour"
        await w.mention("<@UBOT> Release v1.4.0")
        card = await w.fake.wait_for("chat.postMessage", is_card)
        limited, *_ = w.fake.of("chat.postMessage")
        assert limited.result["error"] == "ratelimited"
        assert limited.args["text"] == "Let me ask where to publish."
        assert card.at - limited.at < 5.0


async def test_a_reply_slack_refused_is_posted_again_in_its_thread(tmp_path: Path) -> None:
    """It was logged and dropped: the thread never showed what the assistant said."""
    async with world(tmp_path, repost_every=0.5) as w:
        w.fake.rate_limit["chat.postMessage"] = 3600  # the run's first reply
        await w.mention("<@UBOT> Release v1.4.0", ts="1699999999.000100")
        said = await w.fake.wait_for(
            "chat.postMessage",
            lambda c: c.args.get("text") == "Let me ask where to publish." and c.result["ok"],
        )
        assert said.args["thread_ts"] == "1699999999.000100"


async def test_replies_slack_refuses_for_good_are_given_up_and_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A thread Slack never took a reply in again (an archived channel, the app removed) had
    its replies posted again every ``repost_every``, forever."""
    closed = ("chat.postMessage", "CRELEASE")
    async with world(tmp_path, repost_every=0.01) as w:
        w.fake.rate_limit_in[closed] = 3600  # past what the host waits: each post refused
        await w.mention("<@UBOT> Release v1.4.0", ts="1699999999.000100")

        def tries() -> int:
            return len([c for c in w.fake.of("chat.postMessage") if c.args.get("text") == PROMPT])

        await w.fake.wait_for("chat.postMessage", lambda _: tries() == 1 + MAX_REPOSTS)
        await anyio.sleep(0.2)  # the first post, then each repost: no more
        assert tries() == 1 + MAX_REPOSTS
        del w.fake.rate_limit_in[closed]  # the channel takes posts again
        await w.fake.wait_for("chat.postMessage", lambda c: is_card(c) and c.result["ok"])
        await anyio.sleep(0.2)  # reposts go on for the card, not for the reply given up
        assert tries() == 1 + MAX_REPOSTS
    [said] = [r.getMessage() for r in caplog.records if "given up" in r.getMessage()]
    assert said == (
        "the replies kept for thread 1699999999.000100 of CRELEASE (1) are given up: Slack "
        f"refused them {MAX_REPOSTS} times in a row over {MAX_REPOSTS * 0.01:g} s"
    )


async def test_a_run_whose_ids_are_too_long_for_a_block_id_is_answered_all_the_same(
    tmp_path: Path,
) -> None:
    async with world(tmp_path, channel="CALERTS") as w:
        elsewhere = Runner(w.store, env={}, host="cli", cwd=ROOT)
        paused = await elsewhere.start(RELEASE, "Release v1", run_id="run-" + "x" * 300)
        card = await w.fake.wait_for("chat.postMessage", is_card)
        block_id = next(b for b in card.args["blocks"] if b["type"] == "actions")["block_id"]
        assert paused.run_id not in block_id and len(block_id) <= 255
        await w.interact(block_actions(card, "pi_pick.2", user="UALICE"))
        [answered] = await wait_event(w.store, paused.run_id, "interaction_answered")
        assert await payload_of(w.store, answered) == {"answer": "nightly"}


async def test_a_host_started_later_posts_open_questions_once_and_keeps_their_cards(
    tmp_path: Path,
) -> None:
    from interactions.store import open_sqlite_store

    async with await open_sqlite_store(tmp_path / "state.db") as store:
        paused = await Runner(store, env={}, host="cli", cwd=ROOT).start(RELEASE, "Release v7")
    async with world(tmp_path, channel="CALERTS") as first:  # asked while no host ran
        card = await first.fake.wait_for("chat.postMessage", is_card)
        assert card.args["channel"] == "CALERTS"
        await wait_event(first.store, paused.run_id, "slack_card_posted")
    async with world(tmp_path, channel="CALERTS") as second:  # a restart: no second card
        elsewhere = Runner(second.store, env={}, host="web", cwd=ROOT)
        await elsewhere.answer(paused.run_id, "int-call_channel", {"answer": "Beta"})
        updated = await second.fake.wait_for("chat.update")
        assert (updated.args["channel"], updated.args["ts"]) == ("CALERTS", card.result["ts"])
        assert "Answered by someone via web: *Beta*" in updated.text
        assert second.fake.of("chat.postMessage") == []  # its lane caught up first: nothing


async def test_a_channel_longer_than_the_host_reads_is_said_so_not_called_a_refusal(
    tmp_path: Path,
) -> None:
    """The host reads at most 50 pages of a channel's members; a member past them was told
    "You are not allowed to answer this." as if the allow-list had refused them."""
    async with world(tmp_path, allow=AllowList.parse(["channel"])) as w:
        w.fake.members["CRELEASE"] = [f"U{i:04d}" for i in range(50)] + ["UALICE"]
        w.fake.members_page = 1  # 51 pages
        await w.mention("<@UBOT> Release v1.4.0")
        run_id = await w.run_id()
        card = await w.fake.wait_for("chat.postMessage", is_card)
        await wait_event(w.store, run_id, "slack_card_posted")
        before = await store_snapshot(w.store)
        await w.interact(block_actions(card, "pi_pick.0", user="UALICE"))
        told = await w.fake.wait_for("chat.postEphemeral")
        assert told.args["text"] == (
            "Nothing was stored: Slack would not say who may answer this (the channel has more "
            "members than the 50 pages read). Try again later, or tell whoever runs this Slack "
            "app."
        )
        assert await store_snapshot(w.store) == before
        assert len(w.fake.of("conversations.members")) == 50


async def test_an_allow_list_slack_will_not_read_is_said_so_not_called_a_refusal(
    tmp_path: Path,
) -> None:
    async with world(tmp_path, allow=AllowList.parse(["channel"])) as w:
        w.fake.members["CRELEASE"] = ["UALICE"]
        await w.mention("<@UBOT> Release v1.4.0")
        run_id = await w.run_id()
        card = await w.fake.wait_for("chat.postMessage", is_card)
        await wait_event(w.store, run_id, "slack_card_posted")
        before = await store_snapshot(w.store)
        w.fake.refuse["conversations.members"] = "missing_scope"
        await w.interact(block_actions(card, "pi_pick.0", user="UALICE"))
        told = await w.fake.wait_for("chat.postEphemeral")
        assert told.args["user"] == "UALICE"
        assert told.args["text"] == (
            "Nothing was stored: Slack would not say who may answer this (missing_scope). "
            "Try again later, or tell whoever runs this Slack app."
        )
        assert await store_snapshot(w.store) == before

        await w.interact(block_actions(card, "pi_pick.0", user="UALICE"))  # the lookup works again
        [answered] = await wait_event(w.store, run_id, "interaction_answered")
        assert answered.data["answered_by"] == "UALICE"


async def test_an_answer_too_long_for_a_section_still_closes_its_card(tmp_path: Path) -> None:
    """Many long choices made an outcome past Slack's 3,000 characters a section: slack-sdk
    refused to build the closed card, and the card kept its controls."""
    async with world(tmp_path, recipe=f"{RECIPES}:long_picks", channel="CALERTS") as w:
        elsewhere = Runner(w.store, env={}, host="cli", cwd=ROOT)
        paused = await elsewhere.start(f"{RECIPES}:long_picks", "Pick them all")
        card = await w.fake.wait_for("chat.postMessage", is_card)
        await wait_event(w.store, paused.run_id, "slack_card_posted")
        await elsewhere.answer(paused.run_id, "int-c1", {"answers": LONG_PICKS})
        closed = await w.fake.wait_for("chat.update", lambda c: c.args["ts"] == card.result["ts"])
        assert not any(b["type"] == "actions" for b in closed.args["blocks"])
        outcome = closed.args["blocks"][-2]["text"]["text"]
        assert outcome.startswith(f"✅ Answered by someone via cli: *{LONG_PICKS[0]}*")
        assert len(outcome) <= 3000 and outcome.endswith("…")


async def test_a_late_click_on_a_card_of_long_ids_says_who_answered(tmp_path: Path) -> None:
    """Ids too long for a block id travel as a digest, which was looked for among the open
    questions only: a late click said 'no longer open here' instead of who answered."""
    async with world(tmp_path, channel="CALERTS") as w:
        starter = Runner(w.store, env={}, host="cli", cwd=ROOT)
        paused = await starter.start(RELEASE, "Release v1", run_id="run-" + "x" * 400)
        card = await w.fake.wait_for("chat.postMessage", is_card)
        await wait_event(w.store, paused.run_id, "slack_card_posted")
        await w.interact(block_actions(card, "pi_pick.0", user="UALICE"))
        await wait_event(w.store, paused.run_id, "interaction_answered")
        await w.interact(block_actions(card, "pi_pick.1", user="UBOB"))  # too late
        told = await w.fake.wait_for("chat.postEphemeral")
        assert (told.args["user"], told.args["text"]) == ("UBOB", "Already answered by <@UALICE>.")
    async with world(tmp_path, channel="CALERTS") as again:  # a restart knows its cards too
        await again.interact(block_actions(card, "pi_pick.1", user="UCAROL"))
        told = await again.fake.wait_for("chat.postEphemeral")
        assert told.args["text"] == "Already answered by <@UALICE>."
