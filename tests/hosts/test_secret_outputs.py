"""A credential of the environment, set as a user sets it, reaches none of the outputs of a real
process: its standard output and error, its log lines (tracebacks included), its store's bytes
(a SQLite file, PostgreSQL's rows), and what its hosts send (an MCP tool result, HTTP, Slack).

Each way in is one a user meets: a model that streams a key back in 4-character pieces; a graph
tool node whose command prints one; an MCP tool that prints its environment; a model whose
failure quotes the Slack bot token, under ``serve`` and ``slack``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import anyio
import pytest

from tests.hosts.cli_helpers import PI_RECIPES, cli_env, pi
from tests.hosts.fake_openai import RawReply, fake_openai
from tests.hosts.web.server import serving, wait_for_status

KEY = "sk-proj-Sp1itLEAKopenai0c9a2b4d6e8Zq9W"  # OPENAI_API_KEY
TOKEN = "xoxb-4242-LEAKslack-7f0c9a2b4d6e"  # SLACK_BOT_TOKEN
TELLS = (KEY, TOKEN, "LEAK")
SERVER = os.environ.get("PI_RECIPES_TEST_POSTGRES")


def _no_tells(*outputs: str | bytes) -> None:
    for output in outputs:
        text = output.decode("utf-8", "replace") if isinstance(output, bytes) else output
        for tell in TELLS:
            assert tell not in text


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[list[str], object]]:
    """``--store`` arguments and a function returning every byte the store holds: the SQLite
    file with its WAL, or every row of a fresh PostgreSQL schema as text."""
    if request.param == "sqlite":
        path = tmp_path / "state.db"

        def sqlite_bytes() -> bytes:
            return b"".join(f.read_bytes() for f in sorted(tmp_path.glob("state.db*")))

        yield ["--store", str(path)], sqlite_bytes
        return
    if not SERVER:
        pytest.skip("set PI_RECIPES_TEST_POSTGRES to run the PostgreSQL store tests")
    import psycopg

    schema = f"pi_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(SERVER, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
        sep = "&" if "?" in SERVER else "?"
        url = f"{SERVER}{sep}options={quote(f'-csearch_path={schema}')}"

        def rows() -> bytes:
            tables = conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
                (schema,),
            ).fetchall()
            assert tables, "the run should be stored"
            found = []
            for (table,) in tables:
                query = f'SELECT t::text FROM "{schema}"."{table}" t'
                found += [row[0] for row in conn.execute(query).fetchall()]  # type: ignore[arg-type]
            return "\n".join(found).encode()

        try:
            yield ["--store", url], rows
        finally:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


CHAT = "def recipe(api):\n    api.register_agent('chat', 'Answer briefly.')\n"


def _in_pieces(text: str, size: int) -> RawReply:
    """An OpenAI stream of ``text`` in deltas of ``size`` characters."""
    chunks = [
        {"choices": [{"index": 0, "delta": {"content": text[i : i + size]}}]}
        for i in range(0, len(text), size)
    ]
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    return RawReply(200, body.encode(), "text/event-stream")


@pytest.mark.parametrize("size", [1, 4, 7])
def test_a_key_the_model_streams_in_pieces_reaches_no_output_and_no_store(
    tmp_path: Path, store: tuple[list[str], object], size: int
) -> None:
    """Each delta was scrubbed on its own: a key split across them went whole to the
    terminal, the transcript and the store."""
    where, dump = store
    (tmp_path / "chat.py").write_text(CHAT, encoding="utf-8")
    with fake_openai([_in_pieces(f"Your key is {KEY}, keep it safe.", size)]) as api:
        env = cli_env(OPENAI_BASE_URL=api.base_url, OPENAI_API_KEY=KEY)
        args = ["Say my key", "--no-interactive", "--model", "openai:local-model", *where]
        done = pi("run", "chat.py", *args, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    stored = dump()  # type: ignore[operator]
    _no_tells(done.stdout, done.stderr, stored)
    assert "Your key is ***, keep it safe." in done.stdout
    assert b"Your key is ***, keep it safe." in stored


TOOL_FLOW = """\
tool read:
  command: `cat key.txt; cat key.txt`

workflow leak:
  entry: read
  read -> done
"""


def test_a_tool_nodes_output_is_stored_scrubbed(
    tmp_path: Path, store: tuple[list[str], object]
) -> None:
    """The output of a command that prints a credential (the key the process holds, read from
    a file) went into the run as written."""
    where, dump = store
    (tmp_path / "flow.iter").write_text(TOOL_FLOW, encoding="utf-8")
    (tmp_path / "key.txt").write_text(KEY + "\n", encoding="utf-8")
    done = pi("graph", "run", "flow.iter", *where, cwd=tmp_path, env=cli_env(OPENAI_API_KEY=KEY))
    assert done.returncode == 0, done.stderr
    stored = dump()  # type: ignore[operator]
    _no_tells(done.stdout, done.stderr, stored)
    assert b"***" in stored and b"result" in stored  # the output is stored, scrubbed


ENV_RECIPE = '''\
import os


def recipe(api):
    @api.tool
    async def environment(tool_call_id, params, ctx, on_update):
        """Print the environment."""
        on_update("reading " + os.environ["OPENAI_API_KEY"])
        return "\\n".join(f"{k}={v}" for k, v in sorted(os.environ.items()))

    api.register_agent("env", "Print the environment.")
'''


@pytest.mark.anyio
async def test_an_mcp_tool_that_prints_its_environment_hands_the_client_no_key(
    tmp_path: Path,
) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    (tmp_path / "envs.py").write_text(ENV_RECIPE, encoding="utf-8")
    errors = tmp_path / "stderr.log"
    params = StdioServerParameters(
        command=PI_RECIPES, args=["mcp", "envs.py"], cwd=tmp_path,
        env=cli_env(OPENAI_API_KEY=KEY, SLACK_BOT_TOKEN=TOKEN),
    )  # fmt: skip
    progress: list[str] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(message or "")

    with errors.open("w") as stderr:
        async with (
            stdio_client(params, errlog=stderr) as (read, write),
            ClientSession(read, write) as session,
        ):
            with anyio.fail_after(60):
                await session.initialize()
                result = await session.call_tool(
                    "environment", {}, progress_callback=on_progress
                )
    sent = result.model_dump_json()
    _no_tells(sent, errors.read_text(), *progress)
    assert "OPENAI_API_KEY=***" in sent and "SLACK_BOT_TOKEN=***" in sent


FAILING = '''\
import os

from recipes.models import ScriptedModel


class Refused(ScriptedModel):
    async def stream(self, request):
        raise RuntimeError(f"the gateway refused {os.environ['SLACK_BOT_TOKEN']}")
        yield


def recipe(api):
    api.register_agent("failing", "Fail.")
    api.set_demo_model(Refused([], label="refused"))
'''


def test_serve_logs_and_sends_a_failed_leg_without_the_token(tmp_path: Path) -> None:
    """``serve`` logged the failure's traceback with the bot token in it."""
    (tmp_path / "failing.py").write_text(FAILING, encoding="utf-8")
    env = cli_env(SLACK_BOT_TOKEN=TOKEN, OPENAI_API_KEY=KEY)
    with (
        serving(tmp_path, recipe=str(tmp_path / "failing.py"), env=env) as server,
        server.client() as http,
    ):
        reply = http.post("/api/runs", json={"prompt": "go"})
        assert reply.status_code == 202, reply.text
        run_id = reply.json()["run_id"]
        run = wait_for_status(http, run_id, {"failed", "failed_resumable"})
        sent = http.get(f"/api/runs/{run_id}").text + http.get("/api/runs").text
    logged = server.log.read_text()
    _no_tells(json.dumps(run), sent, logged, "".join(server.banner))
    assert "the gateway refused ***" in sent


def test_a_traceback_logged_anywhere_is_scrubbed(tmp_path: Path) -> None:
    """Any logger, any handler, once a host's entry point ran: message, arguments and the
    traceback's text (a Slack SDK's or uvicorn's logger writes as the library's own does)."""
    probe = (
        "import logging, sys\n"
        "from interactions.secrets import scrub_logs\n"
        "scrub_logs()\n"
        "handler = logging.StreamHandler(sys.stdout)\n"
        "logging.getLogger('slack_sdk').addHandler(handler)\n"
        "log = logging.getLogger('slack_sdk.web')\n"
        "import os\n"
        "token = os.environ['SLACK_BOT_TOKEN']\n"
        "try:\n"
        "    raise ValueError('refused ' + token)\n"
        "except ValueError as exc:\n"
        "    log.exception('call with %s failed: %r', token, exc)\n"
        "log.warning({'token': token})\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=60,
        env=cli_env(SLACK_BOT_TOKEN=TOKEN),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    _no_tells(done.stdout, done.stderr)
    assert "call with *** failed: ValueError('refused ***')" in done.stdout
    assert "ValueError: refused ***" in done.stdout  # the traceback, scrubbed


@pytest.mark.parametrize("size", [1, 2, 3, 4, 5, 8, 13])
def test_a_stream_is_shown_as_the_whole_text_scrubbed_however_it_is_cut(size: int) -> None:
    from interactions.secrets import Secrets, TextScrubber

    secrets = Secrets([KEY, "abcab-abcab-abc"])  # the second ends as it starts
    text = f"a {KEY}{KEY} b abcab-abcab-abcab-abcab-abc c sk-proj-Sp1 d abcab"
    scrubber = TextScrubber(secrets)
    shown = [scrubber.feed(text[i : i + size]) for i in range(0, len(text), size)]
    shown.append(scrubber.finish())
    whole = "".join(shown)
    assert whole == secrets.scrub_known(text)
    assert whole.startswith("a ****** b ***") and whole.endswith(" c sk-proj-Sp1 d abcab")
    assert "abcab-abcab-abc" not in whole


@pytest.mark.anyio
async def test_slack_logs_and_posts_a_failed_leg_without_the_token(tmp_path: Path) -> None:
    """``slack`` logged the failure's traceback with its own bot token in it (which the README
    says is never logged)."""
    from tests.hosts.slack.fake_slack import APP_TOKEN, BOT_TOKEN, fake_slack
    from tests.hosts.slack.payloads import app_mention
    from tests.hosts.slack.test_cli_slack import Output, _env, _stop

    (tmp_path / "failing.py").write_text(FAILING, encoding="utf-8")
    async with fake_slack() as fake:
        env = _env(fake, SLACK_APP_TOKEN=APP_TOKEN, OPENAI_API_KEY=KEY)
        command = [PI_RECIPES, "slack", "failing.py", "--store", str(tmp_path / "state.db")]
        async with await anyio.open_process(command, cwd=tmp_path, env=env) as process:
            output = Output(process)
            try:
                await output.until("connected in Socket Mode")
                await fake.send_envelope("events_api", app_mention("<@UBOT> go"))
                await fake.wait_for(
                    "chat.postMessage", lambda call: "refused" in json.dumps(call.args)
                )
                text = await _stop(process, output)
            finally:
                if process.returncode is None:
                    process.kill()
        sent = json.dumps([call.args for call in fake.calls])
    assert BOT_TOKEN not in text + sent and KEY not in text + sent
    assert "the gateway refused ***" in sent
