"""``pi-recipes slack`` as users run it: a real process, the demo recipe, the fake Slack — in
Socket Mode and over HTTP; and what it says when Slack refuses a token. Its output never
carries a secret."""

from __future__ import annotations

import json
import signal
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx
import pytest
from anyio.abc import Process
from anyio.streams.text import TextReceiveStream

from tests.hosts.cli_helpers import PI_RECIPES, cli_env
from tests.hosts.slack.fake_slack import (
    APP_TOKEN,
    BOT_TOKEN,
    SIGNING_SECRET,
    FakeSlack,
    fake_slack,
)
from tests.hosts.slack.harness import RELEASE, is_card, next_card
from tests.hosts.slack.payloads import app_mention, block_actions, form_body, signed

pytestmark = pytest.mark.anyio

SECRETS = (BOT_TOKEN, APP_TOKEN, SIGNING_SECRET)
START = 60.0  # a fresh interpreter importing everything on a busy machine


class Output:
    """A process's standard error, read line by line as it comes."""

    def __init__(self, process: Process) -> None:
        assert process.stderr is not None
        self._stream = TextReceiveStream(process.stderr)
        self._pending = ""
        self.lines: list[str] = []

    async def until(self, needle: str) -> str:
        with anyio.fail_after(START):
            while True:
                for line in self.lines:
                    if needle in line:
                        return line
                chunk = await self._stream.receive()
                self._pending += chunk
                *complete, self._pending = self._pending.split("\n")
                self.lines += complete

    async def rest(self) -> str:
        try:
            async for chunk in self._stream:
                self._pending += chunk
        except anyio.EndOfStream:
            pass
        return "\n".join([*self.lines, self._pending])


def _env(fake: FakeSlack, **extra: str) -> dict[str, str]:
    base = {k: v for k, v in cli_env().items() if "proxy" not in k.lower()}
    return base | {"SLACK_API_URL": fake.api_url, "SLACK_BOT_TOKEN": BOT_TOKEN, **extra}


@asynccontextmanager
async def _pi_slack(
    tmp_path: Path, env: dict[str, str], *args: str
) -> AsyncIterator[tuple[Process, Output]]:
    command = [PI_RECIPES, "slack", RELEASE, "--store", str(tmp_path / "state.db"), *args]
    async with await anyio.open_process(command, cwd=tmp_path, env=env) as process:
        output = Output(process)
        try:
            yield process, output
        finally:
            if process.returncode is None:
                process.kill()


async def _stop(process: Process, output: Output) -> str:
    process.send_signal(signal.SIGINT)
    with anyio.fail_after(START):
        code = await process.wait()
        text = await output.rest()
    assert code == 0, text
    assert "pi-recipes slack: stopping" in text
    return text


def _no_secrets(*texts: str) -> None:
    for text in texts:
        for secret in SECRETS:
            assert secret not in text


async def test_the_demo_in_socket_mode(tmp_path: Path) -> None:
    async with fake_slack() as fake:
        env = _env(fake, SLACK_APP_TOKEN=APP_TOKEN)
        async with _pi_slack(tmp_path, env, "--allow", "UALICE") as (process, output):
            ready = await output.until("answers from")
            assert "serving" in ready and "as @pibot in Test Team" in ready and "UALICE" in ready
            await output.until("connected in Socket Mode")
            ack = await fake.send_envelope("events_api", app_mention("<@UBOT> Release v1.4.0"))
            assert set(ack) == {"envelope_id"}
            card = await fake.wait_for("chat.postMessage", is_card)
            await fake.send_envelope("interactive", block_actions(card, "pi_pick.0", user="UALICE"))
            approval = await next_card(fake, card)
            assert "Publish v1.4.0 to stable?" in approval.text
            text = await _stop(process, output)
        _no_secrets(text, json.dumps([c.args for c in fake.calls]))


async def test_the_demo_over_http(tmp_path: Path) -> None:
    async with fake_slack() as fake:
        env = _env(fake, SLACK_SIGNING_SECRET=SIGNING_SECRET)
        async with _pi_slack(tmp_path, env, "--http", "127.0.0.1:0") as (process, output):
            line = await output.until("listening on http://")
            base = line.split("listening on ")[1].split("/slack/")[0]
            async with httpx.AsyncClient(base_url=base, timeout=START, trust_env=False) as http:
                body = json.dumps(app_mention("<@UBOT> Release v2.0.0")).encode()
                headers = {"Content-Type": "application/json", **signed(body)}
                assert (await http.post("/slack/events", content=body, headers=headers)).is_success
                card = await fake.wait_for("chat.postMessage", is_card)
                click = form_body(block_actions(card, "pi_pick.1", user="UALICE"))
                forged = {**signed(click), "X-Slack-Signature": "v0=" + "1" * 64}
                assert (await http.post("/slack/interactivity", content=click,
                                        headers=forged)).status_code == 401  # fmt: skip
                reply = await http.post(
                    "/slack/interactivity", content=click, headers=signed(click)
                )
                assert reply.status_code == 200
            approval = await next_card(fake, card)
            assert "Publish v2.0.0 to beta?" in approval.text
            text = await _stop(process, output)
        _no_secrets(text)


@pytest.mark.parametrize(
    ("env", "args", "said"),
    [
        ({"SLACK_BOT_TOKEN": "xoxb-refused-by-slack-42"}, ["--http", "127.0.0.1:0"],
         "Slack refused SLACK_BOT_TOKEN (invalid_auth)"),
        ({"SLACK_APP_TOKEN": "xapp-refused-by-slack-42"}, [],
         "Slack refused SLACK_APP_TOKEN (invalid_auth)"),
        ({"SLACK_BOT_TOKEN": ""}, [], "set SLACK_BOT_TOKEN in the environment"),
        ({}, [], "set SLACK_APP_TOKEN in the environment"),
        ({"SLACK_SIGNING_SECRET": None}, ["--http", "127.0.0.1:0"],
         "set SLACK_SIGNING_SECRET in the environment"),
        ({"SLACK_APP_TOKEN": APP_TOKEN}, ["--allow", "alice"], "--allow 'alice'"),
    ],
)  # fmt: skip
async def test_a_refused_or_missing_secret_stops_it_with_the_variable_s_name(
    tmp_path: Path, env: dict[str, str | None], args: list[str], said: str
) -> None:
    async with fake_slack() as fake:
        full = _env(fake, SLACK_SIGNING_SECRET=SIGNING_SECRET) if "--http" in args else _env(fake)
        full |= {k: v for k, v in env.items() if v is not None}
        full = {k: v for k, v in full.items() if env.get(k, "") is not None}
        async with _pi_slack(tmp_path, full, *args) as (process, output):
            with anyio.fail_after(START):
                code = await process.wait()
            text = await output.rest()
    assert code == 2, text
    [line] = text.splitlines()  # one line: nothing of the SDK's, no "serving" before it
    assert line.startswith(f"pi-recipes: usage: {said}"), text
    _no_secrets(text)
    assert "refused-by-slack-42" not in text


async def test_slack_out_of_reach_stops_it_in_one_line(tmp_path: Path) -> None:
    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{closed.getsockname()[1]}/api/"
    env = {k: v for k, v in cli_env().items() if "proxy" not in k.lower()}
    env |= {"SLACK_API_URL": url, "SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_APP_TOKEN": APP_TOKEN}
    async with _pi_slack(tmp_path, env) as (process, output):
        with anyio.fail_after(START):
            code = await process.wait()
        text = await output.rest()
    assert code == 2, text
    assert f"pi-recipes: usage: cannot reach Slack at {url} (" in text
    assert "check the network, or SLACK_API_URL if it is set" in text
    assert "Traceback" not in text
    _no_secrets(text)


def test_the_cli_says_what_is_missing_without_the_slack_extra() -> None:
    import subprocess

    probe = (
        "import sys; sys.modules['slack_sdk'] = None; from hosts.cli import main; "
        "sys.exit(main(['slack', 'r.py']))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, env=cli_env()
    )
    assert done.returncode == 2
    assert "pi-recipes slack needs slack_sdk: pip install 'pi-recipes[slack]'" in done.stderr


@pytest.mark.parametrize(
    ("method", "said"),
    [
        ("auth.test", "Slack at {api} did not answer (HTTP 503: upstream unavailable); try "
         "again later, or check SLACK_API_URL if it is set"),
        ("apps.connections.open", "Slack at {api} did not open a Socket Mode connection "
         "(HTTP 503: upstream unavailable); try again later"),
    ],
)  # fmt: skip
async def test_a_reply_at_startup_that_is_not_slack_s_stops_it_in_one_line(
    tmp_path: Path, method: str, said: str
) -> None:
    """A proxy's ``text/plain`` 503 was read as Slack's JSON: a 61-line traceback."""
    async with fake_slack() as fake:
        fake.unavailable[method] = 3  # the call and the client's two retries
        async with _pi_slack(tmp_path, _env(fake, SLACK_APP_TOKEN=APP_TOKEN)) as (process, output):
            with anyio.fail_after(START):
                code = await process.wait()
            text = await output.rest()
    assert code == 2, text
    assert f"pi-recipes: usage: {said.format(api=fake.api_url)}" in text.splitlines()
    assert "Traceback" not in text
    _no_secrets(text)


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--store", "mysql://root:hunter2@db/x"], "mysql://… is not a store this pi-recipes can"),
        (["--store", "temporal://127.0.0.1:1/default"], "names an engine, not a store: give it as"),
        (["--engine", "runs.db"], "--engine names a store, not an engine: give it as --store"),
        (["--store", ""], "--store needs a SQLite file path or a postgresql:// URL, got ''"),
    ],
)
def test_a_store_the_command_line_refuses_is_refused_alike(
    tmp_path: Path, flags: list[str], said: str
) -> None:
    """``slack`` read ``--store mysql://…`` (or ``temporal://…``) as a SQLite file and made a
    folder for it; ``--store ''`` served the default store. It opens what ``--store`` names as
    every command does now, and refuses alike before Slack is called, creating nothing."""
    import subprocess

    env = cli_env(SLACK_BOT_TOKEN=BOT_TOKEN, SLACK_APP_TOKEN=APP_TOKEN,
                  SLACK_API_URL="http://127.0.0.1:1/api/")  # fmt: skip
    done = subprocess.run(
        [PI_RECIPES, "slack", RELEASE, *flags], cwd=tmp_path, capture_output=True, text=True,
        timeout=60, env=env,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert said in done.stderr and "hunter2" not in done.stderr
    assert list(tmp_path.iterdir()) == [], "nothing was created"
    for secret in SECRETS:
        assert secret not in done.stderr
