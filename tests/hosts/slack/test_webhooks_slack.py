"""``pi-recipes slack --webhook URL`` (a real process, the fake Slack): a question a mention
opened reaches a real local receiver, signed; without the webhooks' secret it stops, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from tests.hosts.cli_helpers import cli_env, pi
from tests.hosts.kit.webhook_receiver import Receiver
from tests.hosts.slack.fake_slack import SIGNING_SECRET, fake_slack
from tests.hosts.slack.harness import RELEASE, is_card
from tests.hosts.slack.payloads import app_mention, signed
from tests.hosts.slack.test_cli_slack import START, _env, _pi_slack, _stop

pytestmark = pytest.mark.anyio

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


async def test_a_question_opened_in_slack_reaches_the_webhook(tmp_path: Path) -> None:
    receiver = Receiver(SECRET)
    try:
        async with fake_slack() as fake:
            env = _env(fake, SLACK_SIGNING_SECRET=SIGNING_SECRET,
                       PI_RECIPES_WEBHOOK_SECRET=SECRET)  # fmt: skip
            args = ("--http", "127.0.0.1:0", "--webhook", receiver.url)
            async with _pi_slack(tmp_path, env, *args) as (process, output):
                line = await output.until("listening on http://")
                base = line.split("listening on ")[1].split("/slack/")[0]
                async with httpx.AsyncClient(base_url=base, timeout=START, trust_env=False) as h:
                    body = json.dumps(app_mention("<@UBOT> Release v2.0.0")).encode()
                    headers = {"Content-Type": "application/json", **signed(body)}
                    assert (await h.post("/slack/events", content=body, headers=headers)).is_success
                await fake.wait_for("chat.postMessage", is_card)
                await receiver.wait(received=1, within=START)
                text = await _stop(process, output)
        [opened] = receiver.received[:1]
        assert opened.signed and opened.body["type"] == "interaction.opened"
        assert SECRET not in text
    finally:
        receiver.close()


def test_a_webhook_without_its_secret_stops_it(tmp_path: Path) -> None:
    env = cli_env(SLACK_BOT_TOKEN="xoxb-1", SLACK_APP_TOKEN="xapp-1")
    done = pi("slack", RELEASE, "--webhook", "http://127.0.0.1:9/h", cwd=tmp_path, env=env)
    assert done.returncode == 2, done.stderr
    assert "PI_RECIPES_WEBHOOK_SECRET" in done.stderr
