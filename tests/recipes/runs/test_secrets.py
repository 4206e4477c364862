"""Credentials stay in the process: a run on a real provider stores no API key, even when the
provider echoes it (or another credential of the environment) back in its failure."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
import respx

from interactions.store import RunStatus, open_sqlite_store
from recipes import load_recipe
from recipes.events import ToolExecutionUpdate
from recipes.messages import text_of
from recipes.models import ModelError
from recipes.runs import Runner
from recipes.session import create_agent_session
from tests.recipes.models._wire import sse, stream_response
from tests.recipes.runs.conftest import ENV_PRINTER, RELEASE

pytestmark = pytest.mark.anyio

KEY = "sk-test-DO-NOT-STORE-0123456789abcdef"


def _tool_call_stream() -> httpx.Response:
    call = {"index": 0, "id": "call_channel", "type": "function"}
    name = {"name": "choose_channel", "arguments": ""}
    args = {"arguments": json.dumps({"version": "v9"})}
    chunks = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Asking."}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [{**call, "function": name}]}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": args}]}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        {"choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 5}},
        "[DONE]",
    ]  # fmt: skip
    return stream_response(sse(*chunks))


def _stored_bytes(folder: Path) -> bytes:
    """Every byte of the database and its WAL/SHM files."""
    return b"".join(p.read_bytes() for p in folder.iterdir() if p.name.startswith("state.db"))


async def test_paused_run_on_openai_stores_no_key(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    with respx.mock(base_url="https://api.openai.com/v1", assert_all_called=True) as api:
        route = api.post("/chat/completions").mock(side_effect=[_tool_call_stream()])
        async with await open_sqlite_store(db) as store:
            runner = Runner(store, env={"OPENAI_API_KEY": KEY})
            paused = await runner.start(RELEASE, "Release v9", model="openai:gpt-4.1-mini")
            assert paused.status is RunStatus.PAUSED_WAITING_HUMAN
            run = await store.get_run(paused.run_id)
            assert run.model_name == "openai:gpt-4.1-mini"
        assert route.calls.last.request.headers["authorization"] == f"Bearer {KEY}"
    stored = _stored_bytes(tmp_path)
    assert b"Release v9" in stored  # the run really is in these bytes
    assert KEY.encode() not in stored
    assert b"sk-test" not in stored


ENV_TOKEN = "tok.LEAKENV.0123456789/+=Wx7R"  # a credential of the environment, no known shape


def _tells(secret: str) -> list[bytes]:
    """The secret as stored text could hold it: as is, JSON-escaped, and its distinctive part."""
    marker = "LEAKENV" if secret == ENV_TOKEN else "DO-NOT-STORE"
    return [secret.encode(), json.dumps(secret)[1:-1].encode(), marker.encode()]


ECHOES = {
    # status 401: the run fails for good
    "error fields": lambda s: httpx.Response(
        401,
        json={"error": {"message": f"bad key {s}", "type": s, "code": s, "param": {"k": [s]}}},
    ),
    # a quota with the secret in every field: the run is failed_resumable
    "quota": lambda s: httpx.Response(
        429, json={"error": {"message": f"quota of {s}", "type": "insufficient_quota", "code": s}}
    ),
    "non-JSON body": lambda s: httpx.Response(400, text=f"<html>rejected {s}</html>"),
    "nested object": lambda s: httpx.Response(422, json={"detail": [{"input": f"Bearer {s}"}]}),
    "SSE error event": lambda s: stream_response(sse({"error": {"message": s, "type": s}})),
    "malformed SSE line": lambda s: stream_response(f"data: {{{s}\n\n".encode()),
}


@pytest.mark.parametrize("echo", ECHOES.values(), ids=ECHOES.keys())
@pytest.mark.parametrize("secret", [KEY, ENV_TOKEN], ids=["model's key", "GITHUB_TOKEN"])
async def test_a_failed_run_stores_no_echoed_secret(
    tmp_path: Path, echo: Callable[[str], httpx.Response], secret: str
) -> None:
    db = tmp_path / "state.db"
    with respx.mock(base_url="https://api.openai.com/v1") as api:
        api.post("/chat/completions").mock(return_value=echo(secret))
        async with await open_sqlite_store(db) as store:
            runner = Runner(store, env={"OPENAI_API_KEY": KEY, "GITHUB_TOKEN": ENV_TOKEN})
            with pytest.raises(ModelError) as info:
                await runner.start(RELEASE, "Release v9", model="openai:gpt-4.1-mini")
            assert info.value.run_id is not None
            run = await store.get_run(info.value.run_id)
            events = await store.list_events(run.id)
            while_open = _stored_bytes(tmp_path)
    after_close = _stored_bytes(tmp_path)
    for tell in _tells(secret):
        assert tell not in while_open
        assert tell not in after_close
    assert b"Release v9" in while_open + after_close  # the run really is in these bytes
    assert run.status in (RunStatus.FAILED, RunStatus.FAILED_RESUMABLE)
    assert run.error is not None and "***" in run.error, "the echo is stored, scrubbed"
    [leg] = [e for e in events if e.type == "leg_ended"]  # the failure is in the audit trail
    assert leg.data["outcome"] == "error" and "***" in leg.data["error"]


DB_PASSWORD = "pa55w0rd-0123456789"
ENV = {"OPENAI_API_KEY": KEY, "DATABASE_URL": f"postgresql://app:{DB_PASSWORD}@db/app",
       "PATH": "/usr/bin:/bin"}  # fmt: skip


async def test_a_tool_that_prints_its_environment_stores_and_tells_no_credential(
    tmp_path: Path,
) -> None:
    """A tool's result went to the model, the transcript and the store as it was: a tool that
    printed its environment stored every key the process held."""
    async with await open_sqlite_store(tmp_path / "state.db") as store:
        done = await Runner(store, env=ENV).start(ENV_PRINTER, "Show me")
        assert done.status is RunStatus.FINISHED
        seen = done.text or ""  # what the model read: it says it back
        assert "OPENAI_API_KEY=***" in seen and "PATH=/usr/bin:/bin" in seen
        assert "DATABASE_URL=postgresql://app:***@db/app" in seen
        assert "escaped: ***" in seen
        checkpoint = (await store.get_run(done.run_id)).checkpoint
        [result] = [m for m in checkpoint["messages"] if m["role"] == "tool"]
        assert result["details"]["env"]["OPENAI_API_KEY"] == "***"
        assert result["details"]["sk-like"] == "sk-not-a-secret-just-an-example"  # kept
    stored = _stored_bytes(tmp_path)
    assert b"Show me" in stored  # the run really is in these bytes
    assert KEY.encode() not in stored and DB_PASSWORD.encode() not in stored


async def test_a_tools_progress_updates_tell_no_credential() -> None:
    session = create_agent_session(load_recipe(ENV_PRINTER), env=ENV)
    updates: list[str] = []
    session.on_event(
        lambda e: updates.append(text_of(e.partial.content))
        if isinstance(e, ToolExecutionUpdate) else None
    )  # fmt: skip
    await session.prompt("Show me")
    [update] = updates
    assert "OPENAI_API_KEY=***" in update and KEY not in update
