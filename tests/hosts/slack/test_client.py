"""Slack's Web API failing under the host: an error body that is not JSON (a proxy's 503), a
reply slower than the client's timeout. Each is a failed call like any other: logged, and the
card posted again; a membership lookup that fails says why."""

from __future__ import annotations

import logging
from pathlib import Path

import anyio
import pytest

from hosts.slack import AllowList
from interactions.testing.store_conformance import store_snapshot
from recipes.runs import Runner
from tests.hosts.slack.fake_slack import UNAVAILABLE, WAIT
from tests.hosts.slack.harness import RELEASE, ROOT, is_card, wait_event, world
from tests.hosts.slack.payloads import block_actions

pytestmark = pytest.mark.anyio

FAILED_TRIES = 3  # a call and the client's two retries of a server error


async def test_a_card_post_slack_answers_in_plain_text_is_logged_and_posted_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """slack-sdk reads a ``text/plain`` body as a str: the card was lost on an AttributeError,
    and never posted again."""
    async with world(tmp_path, channel="CALERTS", repost_every=0.2) as w:
        w.fake.unavailable["chat.postMessage"] = FAILED_TRIES
        paused = await Runner(w.store, env={}, host="cli", cwd=ROOT).start(RELEASE, "Release v5")
        [spot] = await wait_event(w.store, paused.run_id, "slack_card_posted")
        *failed, posted = w.fake.of("chat.postMessage")
        assert [c.result["error"] for c in failed] == [f"HTTP 503: {UNAVAILABLE}"] * FAILED_TRIES
        assert is_card(posted) and posted.result["ts"] == spot.data["ts"]
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert f"Slack refused chat.postMessage: HTTP 503: {UNAVAILABLE}" in warned


async def test_a_card_post_past_the_client_timeout_fails_then_and_is_posted_again(
    tmp_path: Path,
) -> None:
    """The client's timeout was not applied (slack-sdk ignores its own when given a session):
    a Slack that never answered held the card for aiohttp's five minutes."""
    async with world(tmp_path, channel="CALERTS", client_timeout=1, repost_every=0.2) as w:
        w.fake.stall["chat.postMessage"] = 3 * WAIT  # the first post: far past the timeout
        start = anyio.current_time()
        paused = await Runner(w.store, env={}, host="cli", cwd=ROOT).start(RELEASE, "Release v9")
        [spot] = await wait_event(w.store, paused.run_id, "slack_card_posted")
        assert anyio.current_time() - start < WAIT  # the timeout and a repost, not the stall
        [posted] = [c for c in w.fake.of("chat.postMessage") if is_card(c)]  # the stalled
        assert posted.result["ts"] == spot.data["ts"]  # call is not answered yet: the repost


@pytest.mark.parametrize(
    ("fail", "said"),
    [
        ("unavailable", f"HTTP 503: {UNAVAILABLE}"),
        ("stall", "TimeoutError"),
    ],
)
async def test_a_membership_lookup_that_fails_is_said_so_and_stores_nothing(
    tmp_path: Path, fail: str, said: str
) -> None:
    allow = AllowList.parse(["channel"])
    async with world(tmp_path, allow=allow, client_timeout=1) as w:
        w.fake.members["CRELEASE"] = ["UALICE"]
        await w.mention("<@UBOT> Release v1.4.0")
        run_id = await w.run_id()
        card = await w.fake.wait_for("chat.postMessage", is_card)
        await wait_event(w.store, run_id, "slack_card_posted")
        before = await store_snapshot(w.store)
        if fail == "unavailable":
            w.fake.unavailable["conversations.members"] = FAILED_TRIES
        else:
            w.fake.stall["conversations.members"] = 3 * WAIT
        await w.interact(block_actions(card, "pi_pick.0", user="UALICE"))
        told = await w.fake.wait_for("chat.postEphemeral")
        assert told.args["user"] == "UALICE"
        assert told.args["text"] == (
            f"Nothing was stored: Slack would not say who may answer this ({said}). "
            "Try again later, or tell whoever runs this Slack app."
        )
        assert await store_snapshot(w.store) == before
