"""Session events as pi 1.6 records, and messages in pi's shapes (pure translation)."""

from __future__ import annotations

import pytest

from hosts.rpc._messages import Timestamps, pi_message
from hosts.rpc._records import EventRecords
from recipes import ToolResult
from recipes.events import (
    AgentEnd,
    AgentStart,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
)
from recipes.messages import (
    AssistantMessage,
    ImagePart,
    TextPart,
    Thinking,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from recipes.models import TextDelta, ToolCallDelta


def records() -> EventRecords:
    return EventRecords("openai:gpt-x", Timestamps(clock=lambda: 1700000000.5))


def test_a_streamed_message_numbers_its_blocks_as_pi_does() -> None:
    translate = records()
    final = AssistantMessage(
        text="Hi",
        tool_calls=[ToolCall(id="c1", name="look", arguments={"q": 1})],
        stop_reason="tool_use",
        model="openai:gpt-x",
    )
    out = translate.records(MessageStart(message=AssistantMessage()))
    assert out[0]["message"]["stopReason"] == "pending"
    for delta in (
        TextDelta(delta="H"),
        TextDelta(delta="i"),
        ToolCallDelta(id="c1", name="look", arguments_delta='{"q":'),
        ToolCallDelta(id="c1", arguments_delta="1}"),
    ):
        out += translate.records(MessageUpdate(delta=delta, text=""))
    out += translate.records(MessageEnd(message=final))
    events = [r["assistantMessageEvent"] for r in out if r["type"] == "message_update"]
    assert events == [
        {"type": "text_start", "contentIndex": 0},
        {"type": "text_delta", "contentIndex": 0, "delta": "H"},
        {"type": "text_delta", "contentIndex": 0, "delta": "i"},
        {"type": "text_end", "contentIndex": 0, "content": "Hi"},
        {"type": "toolcall_start", "contentIndex": 1, "id": "c1", "toolName": "look"},
        {"type": "toolcall_delta", "contentIndex": 1, "delta": '{"q":'},
        {"type": "toolcall_delta", "contentIndex": 1, "delta": "1}"},
        {
            "type": "toolcall_end",
            "contentIndex": 1,
            "toolCall": {"type": "toolCall", "id": "c1", "name": "look", "arguments": {"q": 1}},
        },
    ]
    assert all("usage" in r for r in out if r["type"] == "message_update")
    end = out[-1]["message"]
    assert end["content"] == [
        {"type": "text", "text": "Hi"},
        {"type": "toolCall", "id": "c1", "name": "look", "arguments": {"q": 1}},
    ]
    assert (end["provider"], end["model"], end["stopReason"]) == ("openai", "gpt-x", "toolUse")
    assert end["rawStopReason"] == "tool_use" and end["timestamp"] == 1700000000500


def test_tool_records_carry_args_partial_results_and_results() -> None:
    translate = records()
    start = translate.records(
        ToolExecutionStart(tool_call_id="c1", tool_name="look", arguments={"q": 1})
    )
    update = translate.records(
        ToolExecutionUpdate(tool_call_id="c1", tool_name="look", partial=ToolResult.of_text("50%"))
    )
    result = ToolResultMessage(
        tool_call_id="c1", tool_name="look", content=[TextPart(text="done")], details={"n": 1}
    )
    end = translate.records(ToolExecutionEnd(tool_call_id="c1", tool_name="look", result=result))
    assert start == [
        {"type": "tool_execution_start", "toolCallId": "c1", "toolName": "look", "args": {"q": 1}}
    ]
    assert update == [
        {
            "type": "tool_execution_update",
            "toolCallId": "c1",
            "toolName": "look",
            "args": {"q": 1},
            "partialResult": {"content": [{"type": "text", "text": "50%"}], "details": {}},
        }
    ]
    assert end == [
        {
            "type": "tool_execution_end",
            "toolCallId": "c1",
            "toolName": "look",
            "result": {"content": [{"type": "text", "text": "done"}], "details": {"n": 1}},
            "isError": False,
        }
    ]


def test_agent_end_lists_the_runs_messages_and_says_why_it_ended() -> None:
    translate = records()
    user = UserMessage.of_text("hi")
    translate.records(AgentStart(session_id="s", agent="a"))
    translate.records(MessageStart(message=user))
    translate.records(MessageEnd(message=user))
    (end,) = translate.records(AgentEnd(status="aborted", error="aborted by the client"))
    assert end == {
        "type": "agent_end",
        "messages": [translate.message(user)],
        "willRetry": False,
        "status": "aborted",
        "error": "aborted by the client",
    }


@pytest.mark.parametrize(
    ("raw", "calls", "word"),
    [
        ("end_turn", False, "stop"),
        ("stop", False, "stop"),
        ("max_tokens", False, "length"),
        ("aborted", False, "aborted"),
        (None, True, "toolUse"),
        (None, False, "stop"),
        ("content_filter", False, "stop"),
    ],
)
def test_stop_reasons_in_pis_words(raw: str | None, calls: bool, word: str) -> None:
    message = AssistantMessage(
        text="t", stop_reason=raw, tool_calls=[ToolCall(id="c", name="n")] if calls else []
    )
    record = pi_message(message, timestamp=1, model_name="anthropic:claude")
    assert record["stopReason"] == word
    assert record.get("rawStopReason") == (raw if raw not in (None, word) else None)


def test_user_images_and_usage_in_pis_shapes() -> None:
    user = UserMessage(content=[TextPart(text="see"), ImagePart(data="AAA", mime_type="image/png")])
    assert pi_message(user, timestamp=5, model_name="m") == {
        "role": "user",
        "content": [
            {"type": "text", "text": "see"},
            {"type": "image", "data": "AAA", "mimeType": "image/png"},
        ],
        "timestamp": 5,
    }
    usage = Usage(input_tokens=3, output_tokens=4, cache_read_tokens=1)
    reply = pi_message(AssistantMessage(text="x", usage=usage), timestamp=5, model_name="a:b")
    assert reply["usage"]["input"] == 3 and reply["usage"]["output"] == 4
    assert reply["usage"]["cacheRead"] == 1 and reply["usage"]["totalTokens"] == 8


def test_thinking_in_pis_shape_before_the_text() -> None:
    message = AssistantMessage(
        text="Done.",
        thinking=[Thinking(text="Plan.", signature="c2ln"), Thinking(redacted="RW5j")],
    )
    assert pi_message(message, timestamp=5, model_name="anthropic:claude")["content"] == [
        {"type": "thinking", "thinking": "Plan.", "thinkingSignature": "c2ln"},
        {"type": "thinking", "thinking": "", "thinkingSignature": "RW5j", "redacted": True},
        {"type": "text", "text": "Done."},
    ]


def test_a_message_keeps_its_first_timestamp() -> None:
    now = [1.0]
    stamps = Timestamps(clock=lambda: now[0])
    message = UserMessage.of_text("x")
    assert stamps.of(message) == 1000
    now[0] = 2.0
    assert stamps.of(message) == 1000
    assert stamps.of(UserMessage.of_text("x")) == 2000  # an equal message is another message
