"""AnthropicModel against a faked messages API (respx)."""

from __future__ import annotations

import json
import logging
from typing import Any

import httpx
import pytest
import respx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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
from recipes.models import (
    Completed,
    Model,
    ModelError,
    ModelRequest,
    TextDelta,
    ToolCallDelta,
)
from recipes.models.anthropic import AnthropicModel

from ._wire import (
    HELLO,
    JSON_VALUES,
    TOOL_BATCH,
    TOOLS,
    RecordingSleep,
    answer,
    api_fixture,
    completed,
    content_block,
    cut_response,
    failure,
    fast_policy,
    run,
    sent,
    sse,
    storable_or_model_error,
    stream_response,
    until_failure,
    warning_of,
)

KEY = "sk-ant-test-ANTHROPIC-0123456789"
URL = "https://api.anthropic.com/v1/messages"
api = api_fixture(URL)  # the faked API: each test sets its answers on this route

START = {
    "type": "message_start",
    "message": {
        "id": "msg_1",
        "model": "claude-test-2025",
        "usage": {
            "input_tokens": 25,
            "output_tokens": 1,
            "cache_read_input_tokens": 100,
            "cache_creation_input_tokens": 7,
        },
    },
}
PING = {"type": "ping"}


def text_block(index: int, *pieces: str) -> list[dict[str, Any]]:
    deltas = ({"type": "text_delta", "text": p} for p in pieces)
    return content_block(index, {"type": "text", "text": ""}, *deltas)


def tool_block(index: int, call_id: str, *pieces: str) -> list[dict[str, Any]]:
    start = {"type": "tool_use", "id": call_id, "name": "greet", "input": {}}
    deltas = ({"type": "input_json_delta", "partial_json": p} for p in pieces)
    return content_block(index, start, *deltas)


def end(reason: str = "end_turn", output_tokens: int = 12) -> list[dict[str, Any]]:
    return [
        {
            "type": "message_delta",
            "delta": {"stop_reason": reason, "stop_sequence": None},
            "usage": {"output_tokens": output_tokens},
        },
        {"type": "message_stop"},
    ]


def named(*events: dict[str, Any]) -> bytes:
    """The SSE body the API sends: each event named by its ``type``."""
    return sse(*events, event_names=[e["type"] for e in events])


@pytest.fixture
def model(sleep: RecordingSleep) -> AnthropicModel:
    return AnthropicModel("claude-test", env={"ANTHROPIC_API_KEY": KEY}, retry=fast_policy(sleep))


@pytest.mark.anyio
async def test_streams_text_with_usage(api: respx.Route, model: AnthropicModel) -> None:
    api.mock(return_value=stream_response(named(START, PING, *text_block(0, "Hel", "lo"), *end())))
    events = await run(model)
    assert events[:2] == [TextDelta(delta="Hel"), TextDelta(delta="lo")]
    assert events[-1] == Completed(
        message=AssistantMessage(
            text="Hello",
            usage=Usage(
                input_tokens=25, output_tokens=12, cache_read_tokens=100, cache_write_tokens=7
            ),
            stop_reason="end_turn",
            model="claude-test-2025",
        )
    )
    request = api.calls[-1].request
    assert request.headers["x-api-key"] == KEY
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert sent(api) == {
        "model": "claude-test",
        "max_tokens": 4096,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}],
        "stream": True,
        "system": "Be brief.",
    }


@pytest.mark.anyio
async def test_streamed_tool_use(api: respx.Route, model: AnthropicModel) -> None:
    api.mock(
        return_value=stream_response(
            named(
                START,
                *text_block(0, "Let me greet."),
                *tool_block(1, "toolu_a", '{"name"', ': "Ada"}'),
                {
                    "type": "content_block_start",
                    "index": 2,
                    "content_block": {"type": "thinking", "thinking": ""},
                },
                {
                    "type": "content_block_delta",
                    "index": 2,
                    "delta": {"type": "thinking_delta", "thinking": "hm"},
                },
                {"type": "content_block_stop", "index": 2},
                *tool_block(3, "toolu_b"),
                *tool_block(4, "toolu_c", "[1,", "2]"),
                {"type": "some_future_event"},
                *end("tool_use"),
            )
        )
    )
    events = await run(model, HELLO.model_copy(update={"tools": TOOLS}))
    assert ToolCallDelta(id="toolu_a", name="greet") in events
    assert [
        e.arguments_delta for e in events if isinstance(e, ToolCallDelta) and e.id == "toolu_a"
    ] == ["", '{"name"', ': "Ada"}']
    message = completed(events)
    assert message.text == "Let me greet."
    assert message.tool_calls == [
        ToolCall(id="toolu_a", name="greet", arguments={"name": "Ada"}),
        ToolCall(id="toolu_b", name="greet"),
        ToolCall(id="toolu_c", name="greet", invalid_arguments="[1,2]"),
    ]
    assert message.stop_reason == "tool_use"
    assert sent(api)["tools"] == [
        {"name": "greet", "description": "Greet someone", "input_schema": {"type": "object"}}
    ]


@pytest.mark.anyio
async def test_multi_turn_tool_results_batch_into_one_user_message(
    api: respx.Route, model: AnthropicModel
) -> None:
    api.mock(return_value=stream_response(named(START, *text_block(0, "ok"), *end())))
    request = ModelRequest(
        messages=[
            *TOOL_BATCH,
            AssistantMessage(tool_calls=[ToolCall(id="c3", name="greet")]),
            ToolResultMessage(tool_call_id="c3", tool_name="greet", content=[]),
            AssistantMessage(),
            UserMessage.of_text("Thanks"),
        ]
    )
    await run(model, request)
    assert sent(api)["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Look:"},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": "QUJD"},
                },
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Calling."},
                {"type": "tool_use", "id": "c1", "name": "greet", "input": {"name": "Ada"}},
                {"type": "tool_use", "id": "c2", "name": "greet", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "c1",
                    "is_error": False,
                    "content": [{"type": "text", "text": "Hello Ada"}],
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "c2",
                    "is_error": True,
                    "content": [{"type": "text", "text": "bad args"}],
                },
            ],
        },
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "c3", "name": "greet", "input": {}}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "c3", "is_error": False}],
        },
        {"role": "user", "content": [{"type": "text", "text": "Thanks"}]},
    ]
    assert "system" not in sent(api)


@pytest.mark.anyio
async def test_529_overloaded_then_success(
    api: respx.Route, model: AnthropicModel, sleep: RecordingSleep
) -> None:
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    api.side_effect = [
        httpx.Response(529, json=overloaded),
        stream_response(named(START, *text_block(0, "ok"), *end())),
    ]
    assert isinstance((await run(model))[-1], Completed)
    assert sleep.delays == [0.001]


@pytest.mark.anyio
@pytest.mark.parametrize(
    "headers",
    [
        {"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"},
        {"anthropic-ratelimit-requests-reset": "2015-10-21T07:28:00Z"},
    ],
    ids=["Retry-After", "a reset header"],
)
async def test_rate_limit_with_a_wait_in_the_past_backs_off(
    api: respx.Route, model: AnthropicModel, sleep: RecordingSleep, headers: dict[str, str]
) -> None:
    """A moment already past (a clock off, a proxy's stale header) gives no wait to go by: the
    retry waits the policy's backoff, not 0 s (no wait at all, on an API that said slow down)."""
    limited = {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}
    api.side_effect = [
        httpx.Response(429, headers=headers, json=limited),
        stream_response(named(START, *text_block(0, "ok"), *end())),
    ]
    assert isinstance((await run(model))[-1], Completed)
    assert sleep.delays == [0.001]


@pytest.mark.anyio
async def test_rate_limit_exhausted(
    api: respx.Route, model: AnthropicModel, sleep: RecordingSleep
) -> None:
    limited = {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}
    api.mock(return_value=httpx.Response(429, headers={"retry-after": "0.01"}, json=limited))
    error = await failure(model)
    assert (error.error_class, error.last_error_class) == (
        "transient_exhausted",
        "usage_window",
    )
    assert error.retry_after == 0.01
    assert sleep.delays == [0.01, 0.01]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("status", "kind", "error_class"),
    [
        (401, "authentication_error", "auth"),
        (403, "permission_error", "auth"),
        (400, "invalid_request_error", "unclassified"),
        (413, "request_too_large", "unclassified"),
    ],
)
async def test_not_retried(
    api: respx.Route, model: AnthropicModel, status: int, kind: str, error_class: str
) -> None:
    api.mock(
        return_value=httpx.Response(
            status, json={"type": "error", "error": {"type": kind, "message": "no"}}
        )
    )
    error = await failure(model)
    assert error.error_class == error_class
    assert api.call_count == 1


@pytest.mark.anyio
async def test_error_event_before_output_is_retried(
    api: respx.Route, model: AnthropicModel
) -> None:
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    api.side_effect = [
        stream_response(named(START, PING, overloaded)),
        stream_response(named(START, *text_block(0, "ok"), *end())),
    ]
    assert isinstance((await run(model))[-1], Completed)
    assert api.call_count == 2


@pytest.mark.anyio
async def test_error_event_after_output_is_not_retried(
    api: respx.Route, model: AnthropicModel
) -> None:
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    api.mock(return_value=stream_response(named(START, *text_block(0, "Hel"), overloaded)))
    error = await failure(model)
    assert (error.error_class, error.last_error_class) == ("unclassified", "unavailable")
    assert "error in stream overloaded_error: Overloaded" in str(error)
    assert api.call_count == 1


@pytest.mark.anyio
async def test_stream_cut_in_the_middle(api: respx.Route, model: AnthropicModel) -> None:
    api.mock(return_value=cut_response(named(START, *text_block(0, "Hel"))[:-10]))
    seen, error = await until_failure(model)
    assert seen == [TextDelta(delta="Hel")]
    assert error.error_class == "unclassified"
    assert isinstance(error.__cause__, ModelError)
    assert "ReadError: connection reset by peer" in str(error.__cause__)
    assert error.__cause__.__cause__ is None, "the raw httpx error is not chained"


@pytest.mark.anyio
async def test_stream_without_message_stop_before_output_is_retried_then_exhausted(
    api: respx.Route, model: AnthropicModel
) -> None:
    api.mock(return_value=stream_response(named(START, PING)))
    error = await failure(model)
    assert (error.error_class, error.last_error_class) == (
        "transient_exhausted",
        "unavailable",
    )
    assert "message_stop" in str(error)


@pytest.mark.anyio
@pytest.mark.parametrize(
    "body",
    [
        b"event: message_start\ndata: {oops\n\n",
        b"data: 42\n\n",
        named(
            START,
            {
                "type": "content_block_delta",
                "index": 5,
                "delta": {"type": "text_delta", "text": "x"},
            },
        ),
        named(
            START,
            *tool_block(0, "t")[:1],
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "x"},
            },
        ),
    ],
)
async def test_malformed_streams_are_unclassified(
    api: respx.Route, model: AnthropicModel, body: bytes
) -> None:
    api.mock(return_value=stream_response(body))
    error = await failure(model)
    assert error.error_class == "unclassified"
    assert api.call_count == 1


@pytest.mark.anyio
async def test_malformed_error_body(api: respx.Route, model: AnthropicModel) -> None:
    api.mock(return_value=httpx.Response(400, text="<html>Bad Request</html>"))
    error = await failure(model)
    assert error.error_class == "unclassified"
    assert "Bad Request" in str(error)


@pytest.mark.anyio
async def test_missing_key(api: respx.Route) -> None:
    error = await failure(AnthropicModel("claude-test", env={}))
    assert error.error_class == "auth"
    assert "ANTHROPIC_API_KEY" in str(error)
    assert api.call_count == 0


@pytest.mark.anyio
async def test_key_never_leaks(
    api: respx.Route, model: AnthropicModel, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    echo = {"type": "error", "error": {"type": "api_error", "message": f"key {KEY} is odd"}}
    api.mock(return_value=httpx.Response(500, json=echo))
    error = await failure(model)
    assert len(caplog.records) >= 2
    for text in (
        str(error),
        repr(error),
        str(error.__cause__),
        repr(model),
        caplog.text,
    ):
        assert KEY not in text


@pytest.mark.anyio
async def test_base_url_and_max_tokens(sleep: RecordingSleep) -> None:
    with respx.mock:
        route = respx.post("https://proxy.test/anthropic/v1/messages").mock(
            return_value=stream_response(named(START, *text_block(0, "ok"), *end()))
        )
        model = AnthropicModel(
            "claude-test",
            env={"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": "https://proxy.test/anthropic/"},
            max_tokens=100,
            retry=fast_policy(sleep),
        )
        await run(model)
    assert json.loads(route.calls[-1].request.content)["max_tokens"] == 100


def test_name_and_repr() -> None:
    model = AnthropicModel("claude-sonnet-4-5", api_key=KEY)
    assert model.name == "anthropic:claude-sonnet-4-5"
    assert KEY not in repr(model)
    assert repr(model).startswith("AnthropicModel(model='claude-sonnet-4-5'")
    assert isinstance(model, Model)


@pytest.mark.anyio
async def test_tool_input_sent_whole_at_block_start_is_kept(
    api: respx.Route, model: AnthropicModel
) -> None:
    """Some gateways send a call's whole ``input`` in ``content_block_start``, no deltas."""
    whole = {
        "type": "content_block_start",
        "index": 0,
        "content_block": {"type": "tool_use", "id": "t", "name": "greet", "input": {"name": "Ada"}},
    }
    stop = {"type": "content_block_stop", "index": 0}
    api.mock(return_value=stream_response(named(START, whole, stop, *end("tool_use"))))
    events = await run(model)
    message = completed(events)
    assert message.tool_calls == [ToolCall(id="t", name="greet", arguments={"name": "Ada"})]
    assert "".join(e.arguments_delta for e in events if isinstance(e, ToolCallDelta)) == (
        '{"name": "Ada"}'
    )


@pytest.mark.anyio
async def test_a_tool_call_cut_by_max_tokens_is_not_runnable(
    api: respx.Route, model: AnthropicModel
) -> None:
    """Cut before any of its input streamed, a call is not taken as ``{}``."""
    api.mock(
        return_value=stream_response(
            named(START, *tool_block(0, "a", "{}"), *tool_block(1, "b"), *end("max_tokens"))
        )
    )
    message = await answer(model)
    assert message.tool_calls == [
        ToolCall(id="a", name="greet"),
        ToolCall(id="b", name="greet", invalid_arguments=""),
    ]


@pytest.mark.anyio
async def test_tool_calls_sharing_an_id_get_distinct_ids(
    api: respx.Route, model: AnthropicModel
) -> None:
    api.mock(
        return_value=stream_response(
            named(START, *tool_block(0, "t", "{}"), *tool_block(1, "t", "{}"), *end("tool_use"))
        )
    )
    events = await run(model)
    message = completed(events)
    ids = [call.id for call in message.tool_calls]
    assert ids[0] == "t" and len(set(ids)) == 2
    assert [e.id for e in events if isinstance(e, ToolCallDelta)] == [ids[0]] * 2 + [ids[1]] * 2


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        pytest.param(named(START, {"type": "message_stop"}), "no answer", id="no answer"),
        pytest.param(
            named(START, *text_block(0, "Hello "), *text_block(0, "World"), *end()),
            "content block 0 twice",
            id="a block started twice",
        ),
    ],
)
async def test_streams_that_do_not_hold_an_answer_are_errors(
    api: respx.Route, model: AnthropicModel, body: bytes, fragment: str
) -> None:
    api.mock(return_value=stream_response(body))
    error = await failure(model)
    assert error.error_class == "unclassified"
    assert fragment in str(error)


@pytest.mark.anyio
async def test_blank_text_is_never_sent_as_a_text_block(
    api: respx.Route, model: AnthropicModel
) -> None:
    """The messages API refuses a whole request for one empty or whitespace-only text block
    ("text content blocks must be non-empty"): a tool that returned "" or a blank message made
    every later call of the run fail with a 400. Blank text is left out, a tool result with
    nothing left goes without ``content``, and a user message with nothing left says so."""
    api.mock(return_value=stream_response(named(START, *text_block(0, "ok"), *end())))
    image = ImagePart(data="QUJD", mime_type="image/png")
    request = ModelRequest(
        messages=[
            UserMessage(content=[TextPart(text="")]),
            AssistantMessage(text=" \n", tool_calls=[ToolCall(id="c1", name="greet")]),
            ToolResultMessage(tool_call_id="c1", tool_name="greet", content=[TextPart(text="")]),
            AssistantMessage(text="\t", tool_calls=[ToolCall(id="c2", name="greet")]),
            ToolResultMessage(
                tool_call_id="c2",
                tool_name="greet",
                content=[TextPart(text="  "), TextPart(text="failed")],
                is_error=True,
            ),
            AssistantMessage(text=" "),
            UserMessage(content=[TextPart(text="Look:"), TextPart(text=" \n "), image]),
            AssistantMessage(text="Nice."),
            UserMessage(content=[]),
        ]
    )
    await run(model, request)
    assert sent(api)["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "(empty message)"}]},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "c1", "name": "greet", "input": {}}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "c1", "is_error": False}],
        },
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "c2", "name": "greet", "input": {}}],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "c2",
                    "is_error": True,
                    "content": [{"type": "text", "text": "failed"}],
                }
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Look:"},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": "QUJD"},
                },
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "Nice."}]},
        {"role": "user", "content": [{"type": "text", "text": "(empty message)"}]},
    ]


@pytest.mark.anyio
async def test_blank_data_lines_are_heartbeats(api: respx.Route, model: AnthropicModel) -> None:
    """A proxy that keeps the stream alive with blank ``data:`` lines failed the call with
    "SSE data is not valid JSON"."""
    body = named(START, *text_block(0, "ok"), *end())
    heartbeat = b"data:\n\n" + b"data: \n\n" + b"event: ping\ndata:\n\n"
    cut = body.index(b"\n\n", 200) + 2  # between two events
    api.mock(return_value=stream_response(heartbeat + body[:cut] + heartbeat + body[cut:]))
    message = await answer(model)
    assert message.text == "ok"


@pytest.mark.anyio
async def test_deeply_nested_event_data_is_a_model_error(
    api: respx.Route, model: AnthropicModel
) -> None:
    """JSON nested deeper than Python reads raised a bare RecursionError out of the stream."""
    api.mock(return_value=stream_response(named(START) + b"data: " + b"[" * 100_000 + b"\n\n"))
    error = await failure(model)
    assert error.error_class == "unclassified"
    assert "nested" in str(error)


@pytest.mark.anyio
@pytest.mark.parametrize("index", ["0", None, 0.5, True, [0]])
async def test_a_content_block_whose_index_is_not_an_int_is_refused(
    api: respx.Route, model: AnthropicModel, index: Any
) -> None:
    """A tool call announced at index ``"0"`` (a gateway that quotes numbers) was dropped without
    a word, and the answer finished with no tool call; ``true`` was read as block 1."""
    block = {
        "type": "content_block_start",
        "index": index,
        "content_block": {"type": "tool_use", "id": "t", "name": "greet", "input": {"n": 1}},
    }
    stop = {"type": "content_block_stop", "index": index}
    api.mock(return_value=stream_response(named(START, block, stop, *end("tool_use"))))
    error = await failure(model)
    assert error.error_class == "unclassified"
    assert "index" in str(error)
    assert api.call_count == 1


@pytest.mark.anyio
async def test_a_tool_use_stop_without_a_tool_call_is_not_a_silent_finish(
    api: respx.Route, model: AnthropicModel
) -> None:
    """The model said it stopped to call a tool, but no call came (a gateway that drops blocks):
    the run finished as if the answer were whole. Now the finish carries a warning."""
    api.mock(
        return_value=stream_response(named(START, *text_block(0, "Checking."), *end("tool_use")))
    )
    message = await answer(model)
    assert (message.text, message.tool_calls) == ("Checking.", [])
    assert "no tool call" in warning_of(message)


@pytest.mark.anyio
async def test_a_stream_without_a_stop_reason_is_not_a_whole_answer(
    api: respx.Route, model: AnthropicModel
) -> None:
    """``message_stop`` with no ``message_delta`` stop reason before it (a proxy that cut the
    stream and closed it cleanly): the text read as a whole answer, with no warning."""
    api.mock(
        return_value=stream_response(
            named(START, *text_block(0, "The total is"), {"type": "message_stop"})
        )
    )
    message = await answer(model)
    assert message.text == "The total is"
    assert "no stop reason" in warning_of(message)


@pytest.mark.anyio
async def test_text_with_halves_of_surrogate_pairs_can_be_stored(
    api: respx.Route, model: AnthropicModel
) -> None:
    """An emoji's UTF-16 halves, JSON-escaped in two deltas, made an answer no store can keep."""
    start = {"type": "content_block_start", "index": 0, "content_block": {"type": "text"}}
    halves = [
        f'{{"type": "content_block_delta", "index": 0, '
        f'"delta": {{"type": "text_delta", "text": "{text}"}}}}'
        for text in ("Done \\ud83d", "\\ude00 \\udc00")
    ]
    body = named(START, start) + sse(*halves) + named(*end())
    api.mock(return_value=stream_response(body))
    message = await answer(model)
    assert message.text == "Done \U0001f600 \ufffd"
    message.model_dump_json()


def thinking_block(index: int, signature: str | None, *pieces: str) -> list[dict[str, Any]]:
    deltas = [{"type": "thinking_delta", "thinking": p} for p in pieces]
    if signature is not None:
        deltas.append({"type": "signature_delta", "signature": signature})
    return content_block(index, {"type": "thinking", "thinking": ""}, *deltas)


REDACTED = content_block(1, {"type": "redacted_thinking", "data": "EncRypted=="})


@pytest.mark.anyio
async def test_extended_thinking_is_kept_with_its_signature_and_not_shown_as_text(
    api: respx.Route, model: AnthropicModel
) -> None:
    """Thinking blocks were dropped: the message the next turn sends back lacked them."""
    api.mock(
        return_value=stream_response(
            named(
                START,
                *thinking_block(0, "c2lnbmVk", "Ada is ", "the one \ud83d", "\ude00."),
                *REDACTED,
                *text_block(2, "Greeting."),
                *tool_block(3, "toolu_a", '{"name": "Ada"}'),
                *end("tool_use"),
            )
        )
    )
    events = await run(model, HELLO.model_copy(update={"tools": TOOLS}))
    assert [e.delta for e in events if isinstance(e, TextDelta)] == ["Greeting."]
    message = completed(events)
    assert message.thinking == [
        Thinking(text="Ada is the one \U0001f600.", signature="c2lnbmVk"),
        Thinking(redacted="EncRypted=="),
    ]
    assert message.text == "Greeting."
    assert message.tool_calls == [ToolCall(id="toolu_a", name="greet", arguments={"name": "Ada"})]


THOUGHT_OUT = ModelRequest(
    messages=[
        UserMessage.of_text("Greet Ada."),
        AssistantMessage(  # extended thinking, as it streamed
            text="Greeting.",
            tool_calls=[ToolCall(id="toolu_a", name="greet", arguments={"name": "Ada"})],
            thinking=[
                Thinking(text="Ada it is.", signature="c2lnbmVk"),
                Thinking(redacted="EncRypted=="),
                Thinking(text="cut before its signature"),
            ],
        ),
        ToolResultMessage(
            tool_call_id="toolu_a", tool_name="greet", content=[TextPart(text="Hi Ada")]
        ),
        AssistantMessage(thinking=[Thinking(text="nothing said", signature="c2ln")]),
        UserMessage.of_text("Thanks"),
    ]
)
"""A transcript whose assistant turns hold thinking: signed, redacted, unsigned, alone."""


@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["enabled", "adaptive"])
async def test_thinking_goes_back_first_in_its_turn_and_only_when_the_api_takes_it(
    api: respx.Route, sleep: RecordingSleep, kind: str
) -> None:
    api.mock(return_value=stream_response(named(START, *text_block(0, "ok"), *end())))
    thinking = {"type": kind, "budget_tokens": 1024} if kind == "enabled" else {"type": kind}
    model = AnthropicModel("claude-test", env={"ANTHROPIC_API_KEY": KEY},
                           retry=fast_policy(sleep), extra_body={"thinking": thinking})  # fmt: skip
    await run(model, THOUGHT_OUT)
    assert sent(api)["thinking"] == thinking
    assert sent(api)["messages"][1:3] == [
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Ada it is.", "signature": "c2lnbmVk"},
                {"type": "redacted_thinking", "data": "EncRypted=="},
                {"type": "text", "text": "Greeting."},
                {"type": "tool_use", "id": "toolu_a", "name": "greet", "input": {"name": "Ada"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_a",
                    "is_error": False,
                    "content": [{"type": "text", "text": "Hi Ada"}],
                }
            ],
        },
    ]
    assert sent(api)["messages"][3] == {
        "role": "user",
        "content": [{"type": "text", "text": "Thanks"}],
    }


@pytest.mark.anyio
@pytest.mark.parametrize("off", [None, {"type": "disabled"}])
async def test_no_thinking_goes_back_in_a_request_that_does_not_turn_it_on(
    api: respx.Route, sleep: RecordingSleep, off: dict[str, str] | None
) -> None:
    """The API refuses thinking in a request without it ("When thinking is disabled, an
    assistant message cannot contain thinking"): a run started with thinking and resumed by a
    process whose model has none would fail."""
    api.mock(return_value=stream_response(named(START, *text_block(0, "ok"), *end())))
    extra = {"thinking": off} if off else None
    model = AnthropicModel("claude-test", env={"ANTHROPIC_API_KEY": KEY},
                           retry=fast_policy(sleep), extra_body=extra)  # fmt: skip
    await run(model, THOUGHT_OUT)
    [turn] = [m for m in sent(api)["messages"] if m["role"] == "assistant"]
    assert [block["type"] for block in turn["content"]] == ["text", "tool_use"]


@pytest.mark.anyio
async def test_a_thinking_delta_for_a_block_not_started_as_thinking_is_refused(
    api: respx.Route, model: AnthropicModel
) -> None:
    delta = {"type": "content_block_delta", "index": 0,
             "delta": {"type": "signature_delta", "signature": "c2ln"}}  # fmt: skip
    api.mock(return_value=stream_response(named(START, *text_block(0, "x")[:1], delta, *end())))
    with pytest.raises(ModelError, match="signature_delta for content block 0"):
        await run(model)


_json = JSON_VALUES
_value = st.text(max_size=12) | _json  # mostly what the API sends, sometimes not
_KINDS = {  # a block's type: the deltas it takes, and the fields of either
    "text": (["text_delta"], ["text"]),
    "tool_use": (["input_json_delta"], ["id", "name", "input", "partial_json"]),
    "thinking": (["thinking_delta", "signature_delta"], ["thinking", "signature"]),
    "redacted_thinking": ([], ["data"]),
    "server_tool_use": (["citations_delta"], ["id", "name", "input"]),
}


@st.composite
def _content_block(draw: st.DrawFn, index: int) -> list[dict[str, Any]]:
    """One content block's events: mostly well formed, with values of any JSON type."""
    kind = draw(st.sampled_from(sorted(_KINDS)))
    deltas, fields = _KINDS[kind]
    start = {"type": kind} | draw(st.dictionaries(st.sampled_from(fields), _value, max_size=3))
    moves = draw(st.lists(st.sampled_from([*deltas, "text_delta", "signature_delta"]), max_size=4))
    sent = [{"type": m} | draw(st.dictionaries(st.sampled_from([*fields, "text"]), _value,
                                               max_size=2)) for m in moves]  # fmt: skip
    return content_block(index, start, *sent)


_junk = st.one_of(
    st.builds(lambda i, r: {"type": "content_block_delta", "index": i, "delta": r}, _json, _json),
    st.builds(lambda r: {"type": "message_delta", "delta": {"stop_reason": r}}, _value),
    st.just(PING),
)


@st.composite
def _stream_events(draw: st.DrawFn) -> list[dict[str, Any]]:
    blocks = [draw(_content_block(i)) for i in range(draw(st.integers(0, 3)))]
    events = [e for block in blocks for e in block]
    for _ in range(draw(st.integers(0, 2))):  # an event out of place, or of no known shape
        events.insert(draw(st.integers(0, len(events))), draw(_junk))
    return events


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # parsing: one event loop is enough
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_stream_events(), st.booleans())
async def test_any_stream_gives_a_storable_message_or_a_model_error(
    anyio_backend: str, events: list[dict[str, Any]], stops: bool
) -> None:
    """Whatever blocks and deltas come, in whatever order, with whatever values: a message
    that a transcript can hold (and send back), or a ``ModelError``; nothing else."""
    body = named(START, *events, *([{"type": "message_stop"}] if stops else []))
    thinking = {"thinking": {"type": "enabled", "budget_tokens": 1024}}
    model = AnthropicModel(
        "claude-test",
        env={"ANTHROPIC_API_KEY": KEY},
        retry=fast_policy(RecordingSleep(), max_retries=0),
        extra_body=thinking,
    )
    await storable_or_model_error(model, URL, body)
