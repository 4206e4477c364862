"""A durable run on a Claude model with extended thinking: the thinking of the turn that called
the tool is stored with the paused run and sent back when the run resumes, as the API needs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from interactions.store import RunStatus, Store
from recipes.models import AnthropicModel
from recipes.runs import Runner
from tests.recipes.models._wire import content_block, sse, stream_response
from tests.recipes.runs.conftest import ACT_AFTER_APPROVAL

pytestmark = pytest.mark.anyio

ENV = {"ANTHROPIC_API_KEY": "sk-ant-test-0123456789"}
THINKING = {"type": "enabled", "budget_tokens": 1024}


def _stream(*blocks: dict[str, Any], stop: str) -> httpx.Response:
    """A messages-API stream of ``blocks`` (content block start/delta/stop events)."""
    events = [
        {"type": "message_start", "message": {"model": "claude-test", "usage": {}}},
        *blocks,
        {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 9}},
        {"type": "message_stop"},
    ]
    return stream_response(sse(*events, event_names=[e["type"] for e in events]))


CALLS_CLEAN = _stream(
    *content_block(
        0,
        {"type": "thinking", "thinking": ""},
        {"type": "thinking_delta", "thinking": "The junk file should go, once approved."},
        {"type": "signature_delta", "signature": "U2lnbmVkIGJ5IHRoZSBBUEk="},
    ),
    *content_block(
        1,
        {"type": "tool_use", "id": "toolu_1", "name": "clean", "input": {}},
        {"type": "input_json_delta", "partial_json": '{"topic": "junk.txt"}'},
    ),
    stop="tool_use",
)
SAYS_DONE = _stream(
    *content_block(0, {"type": "text", "text": ""}, {"type": "text_delta", "text": "Cleaned up."}),
    stop="end_turn",
)


async def test_a_paused_run_sends_its_thinking_back_when_it_resumes(
    tmp_path: Path, store: Store
) -> None:
    """The thinking was dropped from the transcript, so the resumed turn sent the tool's result
    after a tool call without its thinking, which the API refuses (400)."""
    (tmp_path / "junk.txt").write_text("x")
    model = AnthropicModel("claude-test", env=ENV, extra_body={"thinking": THINKING})
    with respx.mock(assert_all_called=True) as api:
        route = api.post("https://api.anthropic.com/v1/messages")
        route.side_effect = [CALLS_CLEAN, SAYS_DONE]
        runner = Runner(store, env=ENV, model=model, cwd=tmp_path)
        paused = await runner.start(ACT_AFTER_APPROVAL, "Clean up")
        assert paused.status is RunStatus.PAUSED_WAITING_HUMAN
        resumed = Runner(store, env=ENV, model=model, cwd=tmp_path)  # as another process would
        done = await resumed.answer(paused.run_id, "int-toolu_1", {"approved": True}, resume=True)
        assert done.run is not None and done.run.status is RunStatus.FINISHED
        assert done.run.text == "Cleaned up."
        assert not (tmp_path / "junk.txt").exists()
        second = json.loads(route.calls[1].request.content)
    assert second["thinking"] == THINKING
    assistant, results = second["messages"][1:3]
    assert assistant == {
        "role": "assistant",
        "content": [
            {
                "type": "thinking",
                "thinking": "The junk file should go, once approved.",
                "signature": "U2lnbmVkIGJ5IHRoZSBBUEk=",
            },
            {"type": "tool_use", "id": "toolu_1", "name": "clean", "input": {"topic": "junk.txt"}},
        ],
    }
    assert [r["tool_use_id"] for r in results["content"]] == ["toolu_1"]


async def test_a_run_resumed_where_its_model_thinks_no_more_sends_no_thinking(
    tmp_path: Path, store: Store
) -> None:
    """Resumed by a process that names the model only (as ``pi-recipes runs answer --resume``
    does), the request has no thinking, and the API refuses thinking blocks in such a request:
    the turns go back without theirs, and the run finishes."""
    (tmp_path / "junk.txt").write_text("x")
    thinking = AnthropicModel("claude-test", env=ENV, extra_body={"thinking": THINKING})
    with respx.mock(assert_all_called=True) as api:
        route = api.post("https://api.anthropic.com/v1/messages")
        route.side_effect = [CALLS_CLEAN, SAYS_DONE]
        paused = await Runner(store, env=ENV, model=thinking, cwd=tmp_path).start(
            ACT_AFTER_APPROVAL, "Clean up"
        )
        named = Runner(store, env=ENV, cwd=tmp_path)  # the model from the run's model name
        done = await named.answer(paused.run_id, "int-toolu_1", {"approved": True}, resume=True)
        assert done.run is not None and done.run.status is RunStatus.FINISHED
        second = json.loads(route.calls[1].request.content)
    assert "thinking" not in second
    assert [b["type"] for b in second["messages"][1]["content"]] == ["tool_use"]
