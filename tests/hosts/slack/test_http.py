"""The HTTP endpoints, served by uvicorn on a real socket: Slack's signature is checked on every
request, and a request that fails it changes nothing."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from interactions.store import RunStatus
from interactions.testing.store_conformance import store_snapshot
from tests.hosts.slack.harness import (
    World,
    events_of,
    is_card,
    next_card,
    payload_of,
    wait_event,
    wait_status,
    world,
)
from tests.hosts.slack.payloads import (
    app_mention,
    block_actions,
    command_body,
    form_body,
    signed,
    slash_command,
)

pytestmark = pytest.mark.anyio

JSON = {"Content-Type": "application/json"}
FORM = {"Content-Type": "application/x-www-form-urlencoded"}


async def _mention(w: World, text: str = "<@UBOT> Release v5.0.0", **kwargs: Any) -> Any:
    body = json.dumps(app_mention(text, **kwargs)).encode()
    return await w.post("/slack/events", body, {**JSON, **signed(body)})


async def test_slack_s_url_check_is_answered(tmp_path: Path) -> None:
    async with world(tmp_path, socket_mode_on=False, http=True) as w:
        body = json.dumps({"type": "url_verification", "challenge": "c-123", "token": "t"})
        reply = await w.post("/slack/events", body.encode(), {**JSON, **signed(body.encode())})
        assert (reply.status_code, reply.json()) == (200, {"challenge": "c-123"})


def _forged(body: bytes) -> dict[str, str]:
    return {**signed(body), "X-Slack-Signature": "v0=" + "0" * 64}


def _signed_by_another_secret(body: bytes) -> dict[str, str]:
    return signed(body, secret="not-the-secret")


def _replayed(body: bytes) -> dict[str, str]:
    return signed(body, at=time.time() - 5 * 60 - 30)  # a genuine signature, 5.5 minutes old


def _from_the_future(body: bytes) -> dict[str, str]:
    return signed(body, at=time.time() + 10 * 60)


def _no_signature(body: bytes) -> dict[str, str]:
    return {"X-Slack-Request-Timestamp": signed(body)["X-Slack-Request-Timestamp"]}


def _no_timestamp(body: bytes) -> dict[str, str]:
    return {"X-Slack-Signature": signed(body)["X-Slack-Signature"]}


def _no_headers(body: bytes) -> dict[str, str]:
    return {}


def _non_numeric_timestamp(body: bytes) -> dict[str, str]:
    return {**signed(body), "X-Slack-Request-Timestamp": "yesterday"}


def _empty_headers(body: bytes) -> dict[str, str]:
    return {"X-Slack-Request-Timestamp": "", "X-Slack-Signature": ""}


BAD = [
    _forged,
    _signed_by_another_secret,
    _replayed,
    _from_the_future,
    _no_signature,
    _no_timestamp,
    _no_headers,
    _non_numeric_timestamp,
    _empty_headers,
]


@pytest.mark.parametrize("headers", BAD, ids=[f.__name__.strip("_") for f in BAD])
async def test_an_unsigned_or_stale_request_is_401_and_changes_nothing(
    tmp_path: Path, headers: Any
) -> None:
    async with world(tmp_path, socket_mode_on=False, http=True) as w:
        assert (await _mention(w)).status_code == 200
        run_id = await w.run_id()
        card = await w.fake.wait_for("chat.postMessage", is_card)
        await wait_event(w.store, run_id, "slack_card_posted")
        before, calls = await store_snapshot(w.store), len(w.fake.calls)

        click = form_body(block_actions(card, "pi_pick.0", user="UALICE"))
        mention = json.dumps(app_mention("<@UBOT> Release v6.0.0")).encode()
        command = command_body(slash_command("Release v7"))
        for path, body, kind in [
            ("/slack/interactivity", click, FORM),
            ("/slack/events", mention, JSON),
            ("/slack/commands", command, FORM),
        ]:
            reply = await w.post(path, body, {**kind, **headers(body)})
            assert reply.status_code == 401, (path, reply.text)

        # a genuine request after them all is served: nothing was waiting to happen
        reply = await w.post("/slack/interactivity", click, {**FORM, **signed(click)})
        assert reply.status_code == 200
        await w.fake.wait_for("chat.update")
        after = await store_snapshot(w.store)
        assert after.runs[0].id == run_id and len(after.runs) == len(before.runs)
        new_events = after.events[run_id][len(before.events[run_id]) :]
        assert new_events[0].type == "interaction_answered"  # the genuine click, first
        assert w.fake.calls[calls].method == "chat.update"


async def test_a_signed_click_is_applied_once_however_often_slack_sends_it(
    tmp_path: Path,
) -> None:
    async with world(tmp_path, socket_mode_on=False, http=True) as w:
        await _mention(w, event_id="EvHTTP1")
        again = json.dumps(app_mention("<@UBOT> Release v5.0.0", event_id="EvHTTP1")).encode()
        retry = {**JSON, **signed(again), "X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "x"}
        assert (await w.post("/slack/events", again, retry)).status_code == 200
        run_id = await w.run_id()
        card = await w.fake.wait_for("chat.postMessage", is_card)
        click = block_actions(card, "pi_pick.2", user="UALICE")
        body = form_body(click)
        first = await w.post("/slack/interactivity", body, {**FORM, **signed(body)})
        second = await w.post(
            "/slack/interactivity", body, {**FORM, **signed(body), "X-Slack-Retry-Num": "1"}
        )
        assert first.status_code == second.status_code == 200 and first.content == b""
        await next_card(w.fake, card)
        assert [r.id for r in await w.store.list_runs()] == [run_id]
        answered = await events_of(w.store, run_id, "interaction_answered")
        assert [await payload_of(w.store, e) for e in answered] == [{"answer": "nightly"}]
        assert w.fake.of("chat.postEphemeral") == []  # the same person: no "already answered"


@pytest.mark.parametrize(
    ("path", "body", "reason"),
    [
        ("/slack/events", b"{not json", "not JSON"),
        ("/slack/events", b"[1, 2]", "not a JSON object"),
        ("/slack/events", b"[" * 100_000 + b"]" * 100_000, "not JSON"),  # too deep to read
        ("/slack/interactivity", b"nothing=here", "no payload"),
        ("/slack/interactivity", form_body({"type": "block_actions"}), "block_actions"),
        ("/slack/interactivity", b"payload=%7B%22type", "not JSON"),
        ("/slack/commands", b"text=hi", "command"),
    ],
)
async def test_a_signed_body_slack_would_never_send_is_400(
    tmp_path: Path, path: str, body: bytes, reason: str
) -> None:
    async with world(tmp_path, socket_mode_on=False, http=True) as w:
        reply = await w.post(path, body, {**FORM, **signed(body)})
        assert reply.status_code == 400 and reason in reply.text
        assert reply.headers["X-Slack-No-Retry"] == "1"
        assert await w.store.list_runs() == []


async def test_a_body_that_is_not_utf8_cannot_be_signed_and_is_401(tmp_path: Path) -> None:
    async with world(tmp_path, socket_mode_on=False, http=True) as w:
        body = b"payload=\xff\xfe"
        headers = {**FORM, **signed(b"payload=??")}
        assert (await w.post("/slack/interactivity", body, headers)).status_code == 401


async def test_the_slash_command_starts_a_run_in_a_new_thread(tmp_path: Path) -> None:
    async with world(tmp_path, socket_mode_on=False, http=True, command="/release") as w:
        body = command_body(slash_command("Release v8.0.0 <@U0X>"))
        reply = await w.post("/slack/commands", body, {**FORM, **signed(body)})
        started = {"response_type": "ephemeral", "text": "Starting: follow the thread."}
        assert reply.json() == started
        opening = await w.fake.wait_for("chat.postMessage")
        assert opening.args["text"] == "<@UALICE> asked: Release v8.0.0 &lt;@U0X&gt;"
        card = await w.fake.wait_for("chat.postMessage", is_card)
        assert card.args["thread_ts"] == opening.result["ts"]
        run_id = await w.run_id()
        assert (await w.store.get_run(run_id)).thread_id == f"slack:CRELEASE:{opening.result['ts']}"

        other = command_body(slash_command("x", command="/deploy"))
        reply = await w.post("/slack/commands", other, {**FORM, **signed(other)})
        assert reply.json()["text"] == "I do not handle /deploy."
        await wait_status(w.store, run_id, RunStatus.PAUSED_WAITING_HUMAN)


async def test_a_slash_command_where_the_app_cannot_post_says_nothing_started(
    tmp_path: Path,
) -> None:
    async with world(tmp_path, socket_mode_on=False, http=True, command="/release") as w:
        w.fake.refuse["chat.postMessage"] = "not_in_channel"  # the app is not in the channel
        form = slash_command("Release v8.0.0", channel="CELSEWHERE", response_url=w.fake.hook_url)
        body = command_body(form)
        reply = await w.post("/slack/commands", body, {**FORM, **signed(body)})
        assert reply.json()["text"] == "Starting: follow the thread."
        told = await w.fake.wait_for("response_url")
        assert told.args == {
            "text": "Nothing was started: Slack would not let this app post here. Invite the app "
            "to this channel, or use /release in a channel it is in.",
            "response_type": "ephemeral",
        }
        assert (await store_snapshot(w.store)).runs == []


@pytest.mark.parametrize("value", ["²", "٣", "-1", "1.0"])
async def test_a_signed_click_on_an_option_not_on_the_card_is_400_and_changes_nothing(
    tmp_path: Path, value: str
) -> None:
    async with world(tmp_path, socket_mode_on=False, http=True) as w:
        await _mention(w)
        run_id = await w.run_id()
        card = await w.fake.wait_for("chat.postMessage", is_card)
        await wait_event(w.store, run_id, "slack_card_posted")
        before = await store_snapshot(w.store)
        reply = await w.post_interaction(block_actions(card, "pi_pick.0", user="UALICE",
                                                       value=value))  # fmt: skip
        assert reply.status_code == 400 and "not an option of the card" in reply.text
        assert reply.headers["X-Slack-No-Retry"] == "1"
        assert await store_snapshot(w.store) == before
