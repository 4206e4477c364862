"""Credentials stay in the process: a run paused on a real provider stores no API key."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
import respx

from interactions.store import RunStatus, open_sqlite_store
from recipes.runs import Runner
from tests.recipes.models._wire import sse, stream_response
from tests.recipes.runs.conftest import RELEASE

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore:Async generator 'httpx\\.:ResourceWarning"),
]

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
