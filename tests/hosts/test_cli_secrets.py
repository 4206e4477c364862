"""The real command line keeps every credential it holds out of its output and its store, even
when the provider echoes them back: the model's key and the environment's other credentials.

The provider is a real HTTP server on 127.0.0.1 speaking the OpenAI wire format
(``OPENAI_BASE_URL``), echoing the secrets in each place a provider can: error fields at any
depth, a body that is not JSON, an SSE ``error`` event, a malformed SSE line, a partial
``sk-...abcd`` echo. A key with a stray line break, which httpx would quote in the error refusing
the header, is tried too.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.hosts.cli_helpers import cli_env, pi
from tests.hosts.fake_openai import RawReply, fake_openai

KEY = "sk-proj-Xk3LEAKOPENAI7f0c9a2b4d6e8Zq9W"
ENV_TOKEN = "tok.LEAKENV.0123456789/+=Wx7R"  # GITHUB_TOKEN: no known key shape


def _json(status: int, payload: object) -> RawReply:
    return RawReply(status, json.dumps(payload).encode())


def _sse(data: str) -> RawReply:
    return RawReply(200, f"data: {data}\n\n".encode(), "text/event-stream")


BOTH = f"{KEY} and {ENV_TOKEN}"
CASES: dict[str, tuple[list[RawReply], str]] = {
    "error fields at any depth": (
        [
            _json(
                401,
                {
                    "error": {
                        "message": f"Incorrect API key provided: {BOTH}",
                        "type": KEY,
                        "code": ENV_TOKEN,
                        "param": {"headers": [f"Bearer {KEY}", ENV_TOKEN]},
                    }
                },
            )
        ],
        "failed",
    ),
    "nested object without a message": (
        [_json(422, {"detail": [{"loc": ["header"], "input": {"auth": [KEY, ENV_TOKEN]}}]})],
        "failed",
    ),
    "non-JSON body, retried": (
        [RawReply(503, f"<html>proxy rejected {BOTH}</html>".encode(), "text/html")] * 3,
        "failed_resumable",
    ),
    "SSE error event": (
        [_sse(json.dumps({"error": {"message": BOTH, "type": KEY, "code": ENV_TOKEN}}))],
        "failed",
    ),
    "malformed SSE line": ([_sse(f"{{{BOTH}")], "failed"),
    "partial echoes": (
        [
            _json(
                401,
                {
                    "error": {
                        "message": f"Incorrect key: sk-proj-{'*' * 24}Zq9W or tok...Wx7R",
                        "type": "sk-...Zq9W",
                        "code": "invalid_api_key",
                    }
                },
            )
        ],
        "failed",
    ),
}


def _tells() -> list[str]:
    return [
        KEY,
        ENV_TOKEN,
        json.dumps(ENV_TOKEN)[1:-1],
        repr(KEY)[1:-1],
        "LEAKOPENAI",
        "LEAKENV",
        "Zq9W",
        "Wx7R",
    ]


def _store_bytes(cwd: Path) -> bytes:
    """Every byte of the CLI's store: the database and its WAL/SHM files."""
    files = sorted((cwd / ".pi-recipes").glob("state.db*"))
    assert files, "the run should be stored"
    return b"".join(f.read_bytes() for f in files)


def _recipe(tmp_path: Path) -> Path:
    recipe = tmp_path / "chat.py"
    recipe.write_text(
        "def recipe(api):\n    api.register_agent('chat', 'Answer briefly.')\n", encoding="utf-8"
    )
    return recipe


@pytest.mark.parametrize(("replies", "status"), CASES.values(), ids=CASES.keys())
def test_echoed_secrets_reach_no_output_and_no_store(
    tmp_path: Path, replies: list[RawReply], status: str
) -> None:
    recipe = _recipe(tmp_path)
    with fake_openai(list(replies)) as api:
        env = cli_env(OPENAI_BASE_URL=api.base_url, OPENAI_API_KEY=KEY, GITHUB_TOKEN=ENV_TOKEN)
        args = ["Say hi", "--no-interactive", "--model", "openai:local-model"]
        done = pi("run", str(recipe), *args, cwd=tmp_path, env=env)
    stored = _store_bytes(tmp_path)
    for tell in _tells():
        assert tell not in done.stdout + done.stderr
        assert tell.encode() not in stored
    assert b"Say hi" in stored  # the run really is in these bytes
    assert done.returncode == 1, done.stderr
    assert "***" in done.stderr, "the echo is shown, scrubbed"
    assert len(api.requests) == len(replies)
    assert ("pi-recipes runs retry" in done.stderr) == (status == "failed_resumable")


def test_a_key_with_a_stray_line_break_is_refused_without_quoting_it(tmp_path: Path) -> None:
    recipe = _recipe(tmp_path)
    with fake_openai([]) as api:
        env = cli_env(OPENAI_BASE_URL=api.base_url, OPENAI_API_KEY=KEY + "\n")
        args = ["Say hi", "--no-interactive", "--model", "openai:local-model"]
        done = pi("run", str(recipe), *args, cwd=tmp_path, env=env)
    assert done.returncode == 1
    assert f"a line break at position {len(KEY) + 1}" in done.stderr
    assert api.requests == [], "nothing was sent"
    for tell in _tells():
        assert tell not in done.stdout + done.stderr
        assert tell.encode() not in _store_bytes(tmp_path)


LEAKY = '''\
"""A recipe whose code quotes a credential in its exceptions: its tool (the model reads the
failure, the transcript keeps it) and its own model (the run fails with it)."""

import os

from recipes.messages import AssistantMessage, ToolCall


class LeakyModel:
    """A model of the recipe's own that calls ``fetch`` once, then fails quoting the token."""

    name = "leaky:model"

    async def stream(self, request):
        from recipes.models import Completed

        if not any(m.role == "tool" for m in request.messages):
            yield Completed(message=AssistantMessage(tool_calls=[ToolCall(id="c1", name="fetch")]))
            return
        raise RuntimeError(f"the gateway refused token {os.environ['GITHUB_TOKEN']}")


def recipe(api):
    @api.tool
    async def fetch(tool_call_id, params, ctx, on_update):
        """Fetch the report."""
        raise PermissionError(f"GET /report?token={os.environ['GITHUB_TOKEN']} -> 403")

    api.register_agent("leaky", "Fetch the report.")
    api.set_demo_model(LeakyModel())
'''


def test_a_recipes_own_exceptions_quoting_a_credential_reach_no_output_and_no_store(
    tmp_path: Path,
) -> None:
    """Before, the tool's failure went to the model and the transcript, and the model's to the
    run's error and a traceback, each with the token in it."""
    recipe = tmp_path / "leaky.py"
    recipe.write_text(LEAKY, encoding="utf-8")
    done = pi("run", str(recipe), "Fetch it", cwd=tmp_path, env=cli_env(GITHUB_TOKEN=ENV_TOKEN))
    stored = _store_bytes(tmp_path)
    for tell in _tells():
        assert tell not in done.stdout + done.stderr
        assert tell.encode() not in stored
    assert b"GET /report?token=***" in stored  # the tool's failure, as the model read it
    assert b"the gateway refused token ***" in stored  # the run's error
    assert done.returncode == 1
    assert done.stderr.startswith("pi-recipes: error: RuntimeError: the gateway refused token ***")
    assert "Traceback (most recent call last)" in done.stderr  # the bug can still be found


LOADING = """
import os

if os.environ.get("FAIL_AT") == "import":
    raise RuntimeError(f"could not log in with {os.environ['GITHUB_TOKEN']}")
if os.environ.get("FAIL_AT") == "exit":
    raise SystemExit(0)


def recipe(api):
    raise RuntimeError(f"the registry refused {os.environ['GITHUB_TOKEN']}")
"""


@pytest.mark.parametrize("fail_at", ["import", "recipe"])
def test_a_recipe_that_fails_to_load_quoting_a_credential_prints_it_scrubbed(
    tmp_path: Path, fail_at: str
) -> None:
    """A load failure is a usage error, printed as it was: the token in it went to stderr."""
    recipe = tmp_path / "loading.py"
    recipe.write_text(LOADING, encoding="utf-8")
    env = cli_env(GITHUB_TOKEN=ENV_TOKEN, FAIL_AT=fail_at)
    done = pi("run", str(recipe), "Go", "--no-interactive", cwd=tmp_path, env=env)
    assert done.returncode == 2
    for tell in _tells():
        assert tell not in done.stdout + done.stderr
    assert "***" in done.stderr and done.stderr.startswith("pi-recipes: usage: ")


def test_a_recipe_that_exits_while_loading_is_a_failure_not_a_success(tmp_path: Path) -> None:
    """``sys.exit(0)`` in a recipe's import made ``pi-recipes run`` exit 0, silently, no run."""
    recipe = tmp_path / "loading.py"
    recipe.write_text(LOADING, encoding="utf-8")
    done = pi("run", str(recipe), "Go", "--no-interactive", cwd=tmp_path,
              env=cli_env(GITHUB_TOKEN=ENV_TOKEN, FAIL_AT="exit"))  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.startswith("pi-recipes: usage: ")
    assert "importing the recipe failed: SystemExit: 0" in done.stderr


BASE = """
import os

from recipes.messages import AssistantMessage, ToolCall
from recipes.models import ScriptedModel


def recipe(api):
    @api.tool
    async def fetch(tool_call_id, params, ctx, on_update):
        \"\"\"Fetch the report.\"\"\"
        raise BaseException(f"gave up with {os.environ['GITHUB_TOKEN']}")

    api.register_agent("base", "Fetch the report.")
    fetch_it = AssistantMessage(tool_calls=[ToolCall(id="c1", name="fetch")])
    api.set_demo_model(ScriptedModel([fetch_it, AssistantMessage(text="done")]))
"""


def test_a_tool_raising_a_base_exception_is_reported_scrubbed(tmp_path: Path) -> None:
    """It escaped as a BaseExceptionGroup: 80 lines of traceback, the token in them."""
    recipe = tmp_path / "base.py"
    recipe.write_text(BASE, encoding="utf-8")
    done = pi("run", str(recipe), "Fetch", "--no-interactive", "--auto-approve", cwd=tmp_path,
              env=cli_env(GITHUB_TOKEN=ENV_TOKEN))  # fmt: skip
    assert done.returncode == 1
    for tell in _tells():
        assert tell not in done.stdout + done.stderr
    assert done.stderr.startswith("pi-recipes: error: "), done.stderr
    assert "gave up with ***" in done.stderr
