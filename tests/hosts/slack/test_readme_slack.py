"""The Slack page (docs/hosts/slack.md) holds: its command parses, its manifest asks for what
the host uses and points at the host's endpoints."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from hosts.slack import build_parser, slack_routes

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
