"""The Slack page (docs/hosts/slack.md) holds: its command parses, its manifest asks for what
the host uses and points at the host's endpoints."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import sys
from pathlib import Path

import anyio
import pytest

from hosts.slack import build_parser, slack_routes
from tests.hosts.slack.fake_slack import APP_TOKEN, BOT_TOKEN, fake_slack
from tests.hosts.slack.harness import is_card
from tests.hosts.slack.payloads import app_mention
from tests.hosts.slack.test_cli_slack import Output

PAGE = Path(__file__).resolve().parents[3] / "docs" / "hosts" / "slack.md"


def _section() -> str:
    return PAGE.read_text(encoding="utf-8")


def test_the_one_command_runs_the_demo_recipe() -> None:
    (command,) = [
        line for line in re.findall(r"```sh\n(.*?)```", _section(), flags=re.S)[0].splitlines()
        if "pi-recipes slack" in line
    ]  # fmt: skip
    words = shlex.split(command.split("pi-recipes slack", 1)[1])
    args = build_parser().parse_args(words)
    assert args.recipe == "examples/release.py" and args.channel == "C0123456789"
    assert "SLACK_BOT_TOKEN=" in command and "SLACK_APP_TOKEN=" in command
    assert ".[slack]" in command


def test_the_manifest_matches_the_host() -> None:
    manifest = json.loads(re.findall(r"```json\n(.*?)```", _section(), flags=re.S)[0])
    settings = manifest["settings"]
    assert settings["event_subscriptions"]["bot_events"] == ["app_mention"]
    assert {"app_mentions:read", "chat:write"} <= set(manifest["oauth_config"]["scopes"]["bot"])
    urls = [
        settings["event_subscriptions"]["request_url"],
        settings["interactivity"]["request_url"],
        manifest["features"]["slash_commands"][0]["url"],
    ]
    assert [url.removeprefix("https://your.host") for url in urls] == PATHS


PATHS = ["/slack/events", "/slack/interactivity", "/slack/commands"]


def test_the_endpoints_are_the_readme_s() -> None:
    from slack_sdk.web.async_client import AsyncWebClient

    from hosts.slack import SlackConfig, SlackHost, SlackOut
    from interactions.store import MemoryStore
    from recipes.runs import Runner

    host = SlackHost(SlackConfig(recipe="r.py"), Runner(MemoryStore()), SlackOut(AsyncWebClient()))
    assert [route.path for route in slack_routes(host, "unused")] == PATHS


@pytest.mark.anyio
async def test_the_command_runs_as_printed_against_a_fake_slack(tmp_path: Path) -> None:
    """The printed command (its install step dropped: this install has the extra), with the
    fake Slack's tokens for the placeholders: it connects in Socket Mode, a mention starts the
    demo, and its first question is a card in Slack."""
    (line,) = [
        line for line in re.findall(r"```sh\n(.*?)```", _section(), flags=re.S)[0].splitlines()
        if "pi-recipes slack" in line
    ]  # fmt: skip
    words = shlex.split(line.split("&&")[-1])
    given = dict(word.split("=", 1) for word in words if "=" in word and word[0].isupper())
    assert given == {"SLACK_BOT_TOKEN": "xoxb-…", "SLACK_APP_TOKEN": "xapp-…"}
    command = [word for word in words if word not in {f"{k}={v}" for k, v in given.items()}]
    assert command[0] == ".venv/bin/pi-recipes"
    shutil.copytree(PAGE.parents[2] / "examples", tmp_path / "examples")
    async with fake_slack() as fake:  # Slack's API is the one thing that stands in
        env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
        env |= {"SLACK_API_URL": fake.api_url, "SLACK_BOT_TOKEN": BOT_TOKEN,
                "SLACK_APP_TOKEN": APP_TOKEN}  # fmt: skip
        argv = [str(Path(sys.executable).parent / "pi-recipes"), *command[1:]]
        async with await anyio.open_process(argv, cwd=tmp_path, env=env) as process:
            output = Output(process)
            try:
                await output.until("connected in Socket Mode")
                await fake.send_envelope("events_api", app_mention("<@UBOT> Release v1.4.0"))
                card = await fake.wait_for("chat.postMessage", is_card)
                assert "Where should v1.4.0 be published?" in card.text
                process.send_signal(signal.SIGINT)
                with anyio.fail_after(60):
                    assert await process.wait() == 0, await output.rest()
            finally:
                if process.returncode is None:
                    process.kill()

