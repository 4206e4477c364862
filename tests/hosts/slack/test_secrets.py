"""Tokens and the signing secret reach Slack's client and the signature check, and nothing
else: not a log line (at DEBUG, slack-sdk's own included), not the store, not a run's tools."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from interactions.store import RunStatus
from interactions.testing.store_conformance import store_snapshot
from tests.hosts.slack.fake_slack import APP_TOKEN, BOT_TOKEN, SIGNING_SECRET
from tests.hosts.slack.harness import is_card, next_card, wait_status, world
from tests.hosts.slack.payloads import block_actions

pytestmark = pytest.mark.anyio


async def test_no_secret_is_logged_or_stored(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    async with world(tmp_path, http=True) as w:
        await w.mention("<@UBOT> Release v1.4.0")
        run_id = await w.run_id()
        card = await w.fake.wait_for("chat.postMessage", is_card)
        reply = await w.post_interaction(block_actions(card, "pi_pick.0", user="UALICE"))
        assert reply.status_code == 200
        approval = await next_card(w.fake, card)
        await w.interact(block_actions(approval, "pi_approve", user="UALICE"))
        await wait_status(w.store, run_id, RunStatus.FINISHED)
        stored = await store_snapshot(w.store)
        seen_by_tools = w.host.runner.env
    logged = caplog.text + "\n".join(str(r.args) for r in caplog.records)
    assert "Sending a request" in logged  # slack-sdk's debug log was on, headers and all
    kept = json.dumps([r.model_dump(mode="json") for r in stored.runs]) + json.dumps(
        {k: [e.model_dump(mode="json") for e in v] for k, v in stored.events.items()}
    )
    for secret in (BOT_TOKEN, APP_TOKEN, SIGNING_SECRET):
        assert secret not in logged
        assert secret not in kept
        assert secret not in json.dumps(seen_by_tools)
