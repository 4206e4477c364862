"""OpenAIChatModel against a faked chat-completions API (respx)."""

from __future__ import annotations

import logging
from typing import Any

import httpx
import pytest
import respx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recipes.messages import (
    AssistantMessage,
    TextPart,
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
from recipes.models.openai import OpenAIChatModel

from ._wire import (
    HELLO,
    JSON_VALUES,
    TOOL_BATCH,
    TOOLS,
    RecordingSleep,
    answer,
    api_fixture,
    completed,
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

KEY = "sk-test-OPENAI-0123456789"
URL = "https://api.openai.com/v1/chat/completions"
api = api_fixture(URL)  # the faked API: each test sets its answers on this route


def chunk(
    delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any
) -> dict[str, Any]:
    return {
        "model": "gpt-test-2025",
        "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}],
        **extra,
    }


def tool_chunk(**fragment: Any) -> dict[str, Any]:
    """A chunk with one tool call fragment (``index``, ``id``, ``function``...)."""
    return chunk({"tool_calls": [fragment]})


def text_stream(*pieces: str) -> bytes:
    return sse(*(chunk({"content": p}) for p in pieces), chunk(finish="stop"), "[DONE]")


@pytest.fixture
def model(sleep: RecordingSleep) -> OpenAIChatModel:
    return OpenAIChatModel("gpt-test", env={"OPENAI_API_KEY": KEY}, retry=fast_policy(sleep))


@pytest.mark.anyio
async def test_streams_text_and_completes(api: respx.Route, model: OpenAIChatModel) -> None:
    api.mock(return_value=stream_response(text_stream("Hel", "lo")))
    events = await run(model)
    assert events[:2] == [TextDelta(delta="Hel"), TextDelta(delta="lo")]
    assert events[-1] == Completed(
        message=AssistantMessage(text="Hello", stop_reason="end_turn", model="gpt-test-2025")
    )
    body = sent(api)
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
    ]
    assert "tools" not in body
    assert api.calls[-1].request.headers["authorization"] == f"Bearer {KEY}"


@pytest.mark.anyio
async def test_streamed_tool_calls_are_assembled_by_index(
    api: respx.Route, model: OpenAIChatModel
) -> None:
    def call(index: int, **fields: Any) -> dict[str, Any]:
        return tool_chunk(index=index, **fields)

    api.mock(
        return_value=stream_response(
            sse(
                chunk({"role": "assistant", "content": None}),
                call(0, id="call_a", type="function", function={"name": "greet", "arguments": ""}),
                call(
                    1, id="call_b", type="function", function={"name": "greet", "arguments": '{"na'}
                ),
                call(0, function={"arguments": '{"name": '}),
                call(0, function={"arguments": '"Ada"}'}),
                call(1, function={"arguments": 'me": "Bob"}'}),
                call(2, id="call_c", function={"name": "greet", "arguments": "not json"}),
                chunk(finish="tool_calls"),
                {
                    "choices": [],
                    "usage": {
                        "prompt_tokens": 30,
                        "completion_tokens": 7,
                        "prompt_tokens_details": {"cached_tokens": 10},
                    },
                },
                "[DONE]",
            )
        )
    )
    events = await run(model, HELLO.model_copy(update={"tools": TOOLS}))
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert deltas[0] == ToolCallDelta(id="call_a", name="greet", arguments_delta="")
    assert "".join(d.arguments_delta for d in deltas if d.id == "call_b") == '{"name": "Bob"}'
    message = completed(events)
    assert message.tool_calls == [
        ToolCall(id="call_a", name="greet", arguments={"name": "Ada"}),
        ToolCall(id="call_b", name="greet", arguments={"name": "Bob"}),
        ToolCall(id="call_c", name="greet", invalid_arguments="not json"),
    ]
    assert message.stop_reason == "tool_use"
    assert message.usage == Usage(input_tokens=20, output_tokens=7, cache_read_tokens=10)
    assert sent(api)["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "greet",
                "description": "Greet someone",
                "parameters": {"type": "object"},
            },
        }
    ]


@pytest.mark.anyio
async def test_tool_calls_without_index(api: respx.Route, model: OpenAIChatModel) -> None:
    """Some compatible servers send whole calls without ``index``."""
    api.mock(
        return_value=stream_response(
            sse(
                tool_chunk(id="x", function={"name": "a", "arguments": "{}"}),
                tool_chunk(id="y", function={"name": "b", "arguments": '{"k"'}),
                tool_chunk(function={"arguments": ": 1}"}),
                chunk(finish="tool_calls"),
                "[DONE]",
            )
        )
    )
    message = await answer(model)
    assert message.tool_calls == [
        ToolCall(id="x", name="a"),
        ToolCall(id="y", name="b", arguments={"k": 1}),
    ]


@pytest.mark.anyio
async def test_multi_turn_request_body(api: respx.Route, model: OpenAIChatModel) -> None:
    api.mock(return_value=stream_response(text_stream("ok")))
    request = ModelRequest(
        messages=[
            *TOOL_BATCH,
            AssistantMessage(text="Done."),
            UserMessage.of_text("Thanks"),
        ],
        tools=TOOLS,
    )
    await run(model, request)
    assert sent(api)["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Look:"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,QUJD"}},
            ],
        },
        {
            "role": "assistant",
            "content": "Calling.",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "greet", "arguments": '{"name": "Ada"}'},
                },
                {"id": "c2", "type": "function", "function": {"name": "greet", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "Hello Ada"},
        {"role": "tool", "tool_call_id": "c2", "content": "bad args"},
        {"role": "assistant", "content": "Done."},
        {"role": "user", "content": "Thanks"},
    ]


@pytest.mark.anyio
async def test_429_waits_per_retry_after(
    api: respx.Route, model: OpenAIChatModel, sleep: RecordingSleep
) -> None:
    api.side_effect = [
        httpx.Response(
            429,
            headers={"retry-after": "0.01"},
            json={"error": {"code": "rate_limit_exceeded", "message": "slow"}},
        ),
        stream_response(text_stream("ok")),
    ]
    events = await run(model)
    assert isinstance(events[-1], Completed)
    assert sleep.delays == [0.01]
    assert api.call_count == 2


@pytest.mark.anyio
@pytest.mark.parametrize(
    "headers",
    [
        {"retry-after": "-5"},
        {"retry-after-ms": "-250"},
        {"retry-after": "-1", "retry-after-ms": "-1"},
    ],
)
async def test_a_negative_retry_after_backs_off(
    api: respx.Route, model: OpenAIChatModel, sleep: RecordingSleep, headers: dict[str, str]
) -> None:
    """A negative wait means nothing: every retry waits the policy's backoff, not 0 s, and the
    error says no wait is known."""
    api.mock(return_value=httpx.Response(503, headers=headers))
    error = await failure(model)
    assert sleep.delays == [0.001, 0.002]
    assert (error.error_class, error.retry_after) == ("transient_exhausted", None)


@pytest.mark.anyio
async def test_retry_after_beyond_the_cap_fails_with_usage_window(
    api: respx.Route, model: OpenAIChatModel, sleep: RecordingSleep
) -> None:
    api.mock(return_value=httpx.Response(503, headers={"retry-after": "3600"}))
    error = await failure(model)
    assert (error.error_class, error.retry_after) == ("usage_window", 3600)
    assert error.last_error_class == "unavailable"
    assert sleep.delays == []
    assert api.call_count == 1


@pytest.mark.anyio
async def test_insufficient_quota_is_not_retried(api: respx.Route, model: OpenAIChatModel) -> None:
    api.mock(
        return_value=httpx.Response(
            429,
            json={
                "error": {
                    "type": "insufficient_quota",
                    "code": "insufficient_quota",
                    "message": "You exceeded your current quota",
                }
            },
        )
    )
    error = await failure(model)
    assert error.error_class == "usage_window"
    assert api.call_count == 1


@pytest.mark.anyio
@pytest.mark.parametrize("status", [400, 401, 403, 404])
async def test_client_errors_are_never_retried(
    api: respx.Route, model: OpenAIChatModel, status: int
) -> None:
    api.mock(return_value=httpx.Response(status, json={"error": {"message": "no"}}))
    error = await failure(model)
    assert error.error_class == ("auth" if status in (401, 403) else "unclassified")
    assert error.status_code == status
    assert api.call_count == 1


@pytest.mark.anyio
async def test_503_then_success(
    api: respx.Route, model: OpenAIChatModel, sleep: RecordingSleep
) -> None:
    api.side_effect = [httpx.Response(503), stream_response(text_stream("ok"))]
    events = await run(model)
    assert isinstance(events[-1], Completed)
    assert events[-1].message.text == "ok"
    assert sleep.delays == [0.001]


@pytest.mark.anyio
async def test_a_503_is_retried_soon_whatever_its_rate_limit_headers_say(
    api: respx.Route, model: OpenAIChatModel, sleep: RecordingSleep
) -> None:
    """OpenAI sends its rate-limit windows on every response: on a 503 they are no reason to
    wait minutes, nor to call the failure a usage window."""
    windows = {"x-ratelimit-reset-requests": "1s", "x-ratelimit-reset-tokens": "6m0s"}
    api.side_effect = [
        httpx.Response(503, headers=windows, json={"error": {"message": "down"}}),
        stream_response(text_stream("ok")),
    ]
    events = await run(model)
    assert isinstance(events[-1], Completed) and events[-1].message.text == "ok"
    assert sleep.delays == [0.001]


@pytest.mark.anyio
async def test_503_exhausted(
    api: respx.Route, model: OpenAIChatModel, sleep: RecordingSleep
) -> None:
    api.mock(return_value=httpx.Response(503, json={"error": {"message": "down"}}))
    error = await failure(model)
    assert (error.error_class, error.last_error_class, error.status_code) == (
        "transient_exhausted",
        "unavailable",
        503,
    )
    assert isinstance(error.__cause__, ModelError)
    assert error.__cause__.error_class == "unavailable"
    assert api.call_count == 3
    assert sleep.delays == [0.001, 0.002]


@pytest.mark.anyio
@pytest.mark.parametrize("exc", [httpx.ConnectError, httpx.ConnectTimeout, httpx.ReadTimeout])
async def test_connection_failures_retry_then_exhaust(
    api: respx.Route, model: OpenAIChatModel, exc: type[httpx.HTTPError]
) -> None:
    api.side_effect = exc
    error = await failure(model)
    assert (error.error_class, error.last_error_class) == (
        "transient_exhausted",
        "unavailable",
    )
    assert api.call_count == 3


@pytest.mark.anyio
async def test_connection_refused_then_success(api: respx.Route, model: OpenAIChatModel) -> None:
    api.side_effect = [httpx.ConnectError("refused"), stream_response(text_stream("ok"))]
    assert isinstance((await run(model))[-1], Completed)


@pytest.mark.anyio
async def test_stream_cut_after_text_is_an_error_not_a_retry(
    api: respx.Route, model: OpenAIChatModel
) -> None:
    api.side_effect = [
        cut_response(sse(chunk({"content": "Hel"}))),
        stream_response(text_stream("Hello")),
    ]
    seen, error = await until_failure(model)
    assert seen == [TextDelta(delta="Hel")]
    assert (error.error_class, error.last_error_class) == ("unclassified", "unavailable")
    assert api.call_count == 1


@pytest.mark.anyio
async def test_stream_cut_before_any_output_is_retried(
    api: respx.Route, model: OpenAIChatModel
) -> None:
    api.side_effect = [
        cut_response(sse(chunk({"role": "assistant"}))),
        stream_response(text_stream("ok")),
    ]
    events = await run(model)
    assert [e for e in events if isinstance(e, TextDelta)] == [TextDelta(delta="ok")]
    assert api.call_count == 2


@pytest.mark.anyio
async def test_stream_ending_without_done_after_text(
    api: respx.Route, model: OpenAIChatModel
) -> None:
    api.mock(return_value=stream_response(sse(chunk({"content": "Hel"}))))
    error = await failure(model)
    assert (error.error_class, error.last_error_class) == ("unclassified", "unavailable")


@pytest.mark.anyio
async def test_finish_reason_without_done_is_accepted(
    api: respx.Route, model: OpenAIChatModel
) -> None:
    api.mock(return_value=stream_response(sse(chunk({"content": "ok"}), chunk(finish="length"))))
    message = await answer(model)
    assert message.stop_reason == "max_tokens"


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "not a JSON object"),
        ('"text"', "not a JSON object"),
    ],
)
async def test_malformed_sse_data(
    api: respx.Route, model: OpenAIChatModel, data: str, fragment: str
) -> None:
    api.mock(return_value=stream_response(sse(data, "[DONE]")))
    error = await failure(model)
    assert error.error_class == "unclassified"
    assert fragment in str(error)
    assert api.call_count == 1


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("payload", "error_class", "calls"),
    [
        (
            {"error": {"message": "context too long", "type": "invalid_request_error"}},
            "unclassified",
            1,
        ),
        ({"error": {"message": "busy", "type": "server_error"}}, "transient_exhausted", 3),
    ],
)
async def test_error_chunk_in_the_stream(
    api: respx.Route, model: OpenAIChatModel, payload: dict[str, Any], error_class: str, calls: int
) -> None:
    api.mock(return_value=stream_response(sse(payload)))
    error = await failure(model)
    assert error.error_class == error_class
    assert api.call_count == calls


@pytest.mark.anyio
async def test_missing_key_names_the_variable_and_sends_nothing(api: respx.Route) -> None:
    model = OpenAIChatModel("gpt-test", env={})
    error = await failure(model)
    assert error.error_class == "auth"
    assert "OPENAI_API_KEY" in str(error)
    assert api.call_count == 0


@pytest.mark.anyio
async def test_local_server_without_key() -> None:
    with respx.mock:
        route = respx.post("http://localhost:8000/v1/chat/completions").mock(
            return_value=stream_response(text_stream("local"))
        )
        model = OpenAIChatModel("llama3.1:8b", env={"OPENAI_BASE_URL": "http://localhost:8000/v1/"})
        assert model.name == "openai:llama3.1:8b"
        async with httpx.AsyncClient() as client:
            injected = OpenAIChatModel(
                "llama3.1:8b", base_url="http://localhost:8000/v1", http_client=client
            )
            assert (await run(injected))[-1] == (await run(model))[-1]
            assert not client.is_closed
    assert "authorization" not in route.calls[-1].request.headers


@pytest.mark.anyio
async def test_key_never_leaks(
    api: respx.Route, model: OpenAIChatModel, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    echo = {"error": {"message": f"Incorrect API key provided: {KEY}", "code": "invalid_api_key"}}
    api.side_effect = [httpx.Response(500, json=echo), httpx.Response(401, json=echo)]
    error = await failure(model)
    assert error.error_class == "auth"
    assert caplog.records, "the retry should have been logged"
    for text in (str(error), repr(error), repr(model), caplog.text):
        assert KEY not in text
        assert KEY[:12] not in text


def test_name_and_repr() -> None:
    model = OpenAIChatModel("gpt-4.1-mini", api_key=KEY)
    assert model.name == "openai:gpt-4.1-mini"
    assert (
        repr(model) == "OpenAIChatModel(model='gpt-4.1-mini', base_url='https://api.openai.com/v1')"
    )
    assert isinstance(model, Model)


@pytest.mark.anyio
async def test_extra_body_and_timeout(api: respx.Route, sleep: RecordingSleep) -> None:
    api.mock(return_value=stream_response(text_stream("ok")))
    model = OpenAIChatModel(
        "gpt-test",
        api_key=KEY,
        extra_body={"temperature": 0, "stream": False},
        retry=fast_policy(sleep),
    )
    await run(model)
    body = sent(api)
    assert (body["temperature"], body["stream"]) == (0, True)
    assert api.calls[-1].request.extensions["timeout"]["read"] == 300.0


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        pytest.param(
            sse(
                {
                    "object": "error",
                    "message": "This model's maximum context length is 4096 tokens",
                    "type": "BadRequestError",
                    "code": 400,
                },
                "[DONE]",
            ),
            "maximum context length",
            id="vLLM error object",
        ),
        pytest.param(
            b'event: error\ndata: {"message": "model is loading"}\n\n',
            "model is loading",
            id="named error event",
        ),
    ],
)
async def test_errors_in_the_stream_in_other_shapes_are_raised(
    api: respx.Route, model: OpenAIChatModel, body: bytes, fragment: str
) -> None:
    """Compatible servers report a failure inside the stream in their own shapes: it is raised,
    never taken for an empty answer or a dropped connection."""
    api.mock(return_value=stream_response(body))
    error = await failure(model)
    assert fragment in str(error)
    assert api.call_count == 1


@pytest.mark.anyio
@pytest.mark.parametrize(
    "body",
    [
        pytest.param(sse("[DONE]"), id="only [DONE]"),
        pytest.param(
            sse({"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 0}}, "[DONE]"),
            id="only usage",
        ),
    ],
)
async def test_a_stream_without_an_answer_is_an_error(
    api: respx.Route, model: OpenAIChatModel, body: bytes
) -> None:
    api.mock(return_value=stream_response(body))
    error = await failure(model)
    assert error.error_class == "unclassified"
    assert "no answer" in str(error)


@pytest.mark.anyio
async def test_a_refusal_is_the_answer(api: respx.Route, model: OpenAIChatModel) -> None:
    api.mock(
        return_value=stream_response(
            sse(
                chunk({"role": "assistant", "content": None, "refusal": ""}),
                chunk({"refusal": "I can't help "}),
                chunk({"refusal": "with that."}),
                chunk(finish="stop"),
                "[DONE]",
            )
        )
    )
    events = await run(model)
    assert events[:2] == [TextDelta(delta="I can't help "), TextDelta(delta="with that.")]
    message = completed(events)
    assert (message.text, message.stop_reason) == ("I can't help with that.", "refusal")


@pytest.mark.anyio
async def test_a_tool_call_cut_by_the_length_limit_is_not_runnable(
    api: respx.Route, model: OpenAIChatModel
) -> None:
    """Cut right after its name, a call has no arguments yet: it is not taken as ``{}``."""
    api.mock(
        return_value=stream_response(
            sse(
                tool_chunk(index=0, id="a", function={"name": "greet"}),
                tool_chunk(index=0, function={"arguments": "{}"}),
                tool_chunk(index=1, id="b", function={"name": "greet"}),
                chunk(finish="length"),
                "[DONE]",
            )
        )
    )
    message = await answer(model)
    assert message.tool_calls == [
        ToolCall(id="a", name="greet"),
        ToolCall(id="b", name="greet", invalid_arguments=""),
    ]
    assert message.stop_reason == "max_tokens"


@pytest.mark.anyio
async def test_tool_calls_sharing_an_id_get_distinct_ids(
    api: respx.Route, model: OpenAIChatModel
) -> None:
    """Each call gets its own result: with one id for two calls, one result would be lost."""
    api.mock(
        return_value=stream_response(
            sse(
                tool_chunk(index=0, id="c", function={"name": "a"}),
                tool_chunk(index=1, id="c", function={"name": "b"}),
                tool_chunk(index=1, function={"arguments": '{"k": 1}'}),
                tool_chunk(index=2, id="c_2", function={"name": "c"}),
                chunk(finish="tool_calls"),
                "[DONE]",
            )
        )
    )
    events = await run(model)
    message = completed(events)
    ids = [call.id for call in message.tool_calls]
    assert len(set(ids)) == 3
    assert ids[0] == "c"
    deltas = [e.id for e in events if isinstance(e, ToolCallDelta)]
    assert deltas == [ids[0], ids[1], ids[1], ids[2]]
    assert message.tool_calls[1] == ToolCall(id=ids[1], name="b", arguments={"k": 1})


@pytest.mark.anyio
async def test_parallel_calls_streamed_at_one_index_stay_apart(
    api: respx.Route, model: OpenAIChatModel
) -> None:
    """Ollama (and other compatible servers) stream every call of a parallel batch at index 0,
    each under its own id: a new id there starts a new call, never more arguments of the last."""

    def call(**fields: Any) -> dict[str, Any]:
        return tool_chunk(index=0, **fields)

    api.mock(
        return_value=stream_response(
            sse(
                call(id="call_a", function={"name": "greet", "arguments": '{"name": '}),
                call(function={"arguments": '"Ada"}'}),
                call(id="call_b", function={"name": "wave", "arguments": '{"to": "Bob"}'}),
                call(id="call_c", function={"name": "greet", "arguments": '{"name": "Cy"}'}),
                chunk(finish="tool_calls"),
                "[DONE]",
            )
        )
    )
    events = await run(model, HELLO.model_copy(update={"tools": TOOLS}))
    message = completed(events)
    assert message.tool_calls == [
        ToolCall(id="call_a", name="greet", arguments={"name": "Ada"}),
        ToolCall(id="call_b", name="wave", arguments={"to": "Bob"}),
        ToolCall(id="call_c", name="greet", arguments={"name": "Cy"}),
    ]
    starts = [(e.id, e.name) for e in events if isinstance(e, ToolCallDelta) and e.name]
    assert starts == [("call_a", "greet"), ("call_b", "wave"), ("call_c", "greet")]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"name": "Ada"}, ToolCall(id="a", name="greet", arguments={"name": "Ada"})),
        (["Ada"], ToolCall(id="a", name="greet", invalid_arguments='["Ada"]')),
        (7, ToolCall(id="a", name="greet", invalid_arguments="7")),
    ],
)
@pytest.mark.anyio
async def test_arguments_sent_as_json_rather_than_a_string_are_kept(
    api: respx.Route, model: OpenAIChatModel, arguments: Any, expected: ToolCall
) -> None:
    """llama.cpp's server (some builds) and TGI send ``arguments`` as a JSON value, not as a
    string of JSON: the call keeps them, never runs with its defaults as if none were given."""
    fragment = tool_chunk(index=0, id="a", function={"name": "greet", "arguments": arguments})
    api.mock(return_value=stream_response(sse(fragment, chunk(finish="tool_calls"), "[DONE]")))
    message = await answer(model, HELLO.model_copy(update={"tools": TOOLS}))
    assert message.tool_calls == [expected]


@pytest.mark.parametrize("reason", ["error", "abort"])
@pytest.mark.anyio
async def test_an_answer_the_server_ended_in_failure_is_an_error(
    api: respx.Route, model: OpenAIChatModel, reason: str
) -> None:
    """vLLM ends a request that failed inside the engine (``error``: "retryable request-level
    internal error") or that it cancelled (``abort``) with that finish_reason, after whatever text
    it had: the text so far is not an answer."""
    api.mock(
        return_value=stream_response(
            sse(chunk({"content": "The report is"}), chunk(finish=reason), "[DONE]")
        )
    )
    seen, error = await until_failure(model)
    assert seen == [TextDelta(delta="The report is")]
    assert f"finish_reason {reason!r}" in str(error)
    assert (error.error_class, error.last_error_class) == ("unclassified", "unavailable")


@pytest.mark.anyio
async def test_a_failed_finish_before_any_output_is_retried(
    api: respx.Route, model: OpenAIChatModel
) -> None:
    api.side_effect = [
        stream_response(sse(chunk({"role": "assistant"}), chunk(finish="error"), "[DONE]")),
        stream_response(text_stream("ok")),
    ]
    message = await answer(model)
    assert (message.text, message.stop_reason) == ("ok", "end_turn")
    assert api.call_count == 2


@pytest.mark.anyio
async def test_an_id_changing_mid_call_without_a_name_continues_the_call(
    api: respx.Route, model: OpenAIChatModel
) -> None:
    """A proxy that stamps each fragment with a fresh id still streams one call: only a fragment
    with a name starts a new call at a taken index."""
    api.mock(
        return_value=stream_response(
            sse(
                tool_chunk(index=0, id="x1", function={"name": "greet"}),
                tool_chunk(index=0, id="x2", function={"arguments": '{"n'}),
                tool_chunk(index=0, id="x3", function={"arguments": '": 1}'}),
                chunk(finish="tool_calls"),
                "[DONE]",
            )
        )
    )
    message = await answer(model)
    assert message.tool_calls == [ToolCall(id="x1", name="greet", arguments={"n": 1})]


@pytest.mark.anyio
async def test_an_assistant_message_without_text_is_sent_as_the_api_accepts(
    api: respx.Route, model: OpenAIChatModel
) -> None:
    """An empty assistant answer went out as ``{"role": "assistant", "content": null}``, which
    the API refuses without ``tool_calls`` ("expected a string, got null"): every later call of
    the conversation failed. It is left out; tool calls alone keep ``content: null``."""
    api.mock(return_value=stream_response(text_stream("ok")))
    request = ModelRequest(
        messages=[
            UserMessage.of_text("Hi"),
            AssistantMessage(tool_calls=[ToolCall(id="c1", name="greet")]),
            ToolResultMessage(tool_call_id="c1", tool_name="greet", content=[TextPart(text="hi")]),
            AssistantMessage(),
            UserMessage.of_text("Still there?"),
        ]
    )
    await run(model, request)
    assert sent(api)["messages"] == [
        {"role": "user", "content": "Hi"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "greet", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "hi"},
        {"role": "user", "content": "Still there?"},
    ]


@pytest.mark.anyio
async def test_blank_data_lines_are_heartbeats(api: respx.Route, model: OpenAIChatModel) -> None:
    """A proxy that keeps the stream alive with blank ``data:`` lines failed the call with
    "SSE data is not valid JSON"."""
    api.mock(
        return_value=stream_response(
            b"data:\n\n"
            + sse(chunk({"content": "o"}), "", chunk({"content": "k"}), "  ")
            + text_stream()
        )
    )
    message = await answer(model)
    assert message.text == "ok"


@pytest.mark.anyio
async def test_a_blank_error_event_is_still_an_error(
    api: respx.Route, model: OpenAIChatModel
) -> None:
    api.mock(return_value=stream_response(b"event: error\ndata:\n\n" + text_stream("ok")))
    with pytest.raises(ModelError):
        await run(model)


@pytest.mark.anyio
async def test_deeply_nested_json_is_a_model_error_or_invalid_arguments(
    api: respx.Route, model: OpenAIChatModel
) -> None:
    """JSON nested deeper than Python reads raised a bare RecursionError out of the stream; in a
    tool call's arguments (or nested deeper than a transcript can be saved, or holding a lone
    surrogate) it crashed the run when the call was read or checkpointed, and ``NaN`` was saved
    as ``null``. An event is a ModelError; such arguments are invalid, kept raw."""
    api.mock(return_value=stream_response(b"data: " + b"[" * 100_000 + b"\n\n"))
    error = await failure(model)
    assert (error.error_class, api.call_count) == ("unclassified", 1)
    assert "nested" in str(error)

    too_deep = "[" * 100_000 + "]" * 100_000
    deep = '{"a": ' * 400 + "1" + "}" * 400
    nan = '{"a": NaN}'
    surrogate = '{"a": "\\ud800"}'
    fragments = [
        {"index": i, "id": f"c{i}", "function": {"name": "greet", "arguments": raw}}
        for i, raw in enumerate([too_deep, deep, nan, surrogate])
    ]
    api.mock(
        return_value=stream_response(
            sse(chunk({"tool_calls": fragments}), chunk(finish="tool_calls"), "[DONE]")
        )
    )
    message = await answer(model)
    invalid = [c.invalid_arguments for c in message.tool_calls]
    assert invalid == [too_deep, deep, nan, surrogate]
    message.model_dump_json()  # the transcript can be saved


@pytest.mark.anyio
async def test_a_stream_without_a_finish_reason_is_not_a_whole_answer(
    api: respx.Route, model: OpenAIChatModel
) -> None:
    """``[DONE]`` with no ``finish_reason`` before it (a proxy that cut the answer and ended the
    stream cleanly): the text read as a whole answer, with no warning."""
    api.mock(return_value=stream_response(sse(chunk({"content": "The total is"}), "[DONE]")))
    message = await answer(model)
    assert message.text == "The total is"
    assert "no stop reason" in warning_of(message)


@pytest.mark.anyio
async def test_a_tool_calls_finish_without_a_tool_call_is_not_a_silent_finish(
    api: respx.Route, model: OpenAIChatModel
) -> None:
    api.mock(
        return_value=stream_response(
            sse(chunk({"content": "Checking."}), chunk(finish="tool_calls"), "[DONE]")
        )
    )
    message = await answer(model)
    assert "no tool call" in warning_of(message)


@pytest.mark.anyio
async def test_whole_calls_without_index_or_id_stay_apart(
    api: respx.Route, model: OpenAIChatModel
) -> None:
    """Some compatible servers send each call whole, with neither ``index`` nor ``id``: every
    call after the first was merged into it (``{"name": "Ada"}{"name": "Bob"}``, invalid), so
    the model's parallel calls ran as one failed call."""

    def call(**function: Any) -> dict[str, Any]:
        return tool_chunk(type="function", function=function)

    api.mock(
        return_value=stream_response(
            sse(
                call(name="greet", arguments='{"name": "Ada"}'),
                call(name="greet", arguments='{"name": "Bob"}'),
                call(name="wave", arguments='{"to'),
                call(arguments='": "Cy"}'),
                chunk(finish="tool_calls"),
                "[DONE]",
            )
        )
    )
    message = await answer(model, HELLO.model_copy(update={"tools": TOOLS}))
    calls = [(c.name, c.arguments, c.invalid_arguments) for c in message.tool_calls]
    assert calls == [
        ("greet", {"name": "Ada"}, None),
        ("greet", {"name": "Bob"}, None),
        ("wave", {"to": "Cy"}, None),
    ]
    assert len({c.id for c in message.tool_calls}) == 3


@pytest.mark.anyio
async def test_content_sent_as_a_list_of_parts_is_the_answer(
    api: respx.Route, model: OpenAIChatModel
) -> None:
    """Mistral's thinking models (Magistral) stream ``content`` as a list of ``thinking`` and
    ``text`` parts: the list was not read at all, so the answer came back empty (or cut to its
    plain-string pieces) with no warning. The text parts are the answer; thinking is left out."""
    thinking = {"type": "thinking", "thinking": [{"type": "text", "text": "Let me think."}]}
    api.mock(
        return_value=stream_response(
            sse(
                chunk({"role": "assistant", "content": [thinking]}),
                chunk({"content": [{"type": "text", "text": "Hel"}]}),
                chunk({"content": "lo"}),
                chunk(finish="stop"),
                "[DONE]",
            )
        )
    )
    events = await run(model)
    assert [e for e in events if isinstance(e, TextDelta)] == [
        TextDelta(delta="Hel"),
        TextDelta(delta="lo"),
    ]
    message = completed(events)
    assert (message.text, message.stop_reason) == ("Hello", "end_turn")


@pytest.mark.anyio
async def test_text_with_halves_of_surrogate_pairs_can_be_stored(
    api: respx.Route, model: OpenAIChatModel
) -> None:
    """JSON can escape half of a UTF-16 surrogate pair, and a gateway that cuts text by UTF-16
    code units sends an emoji's halves in two chunks: the answer held text no UTF-8 store can
    keep, and the run failed ('could not store where the run's leg ended ... fix the tool').
    A split pair is joined again; a lone half is U+FFFD."""
    api.mock(
        return_value=stream_response(
            sse(
                '{"choices": [{"delta": {"content": "Done \\ud83d"}}]}',
                '{"choices": [{"delta": {"content": "\\ude00 \\udc00!"}}]}',
                '{"choices": [{"delta": {"content": " \\ud83d"}}]}',
                chunk(finish="stop"),
                "[DONE]",
            )
        )
    )
    events = await run(model)
    message = completed(events)
    assert message.text == "Done \U0001f600 \ufffd! \ufffd"
    deltas = "".join(e.delta for e in events if isinstance(e, TextDelta))
    deltas.encode("utf-8")  # every streamed piece can be shown
    message.model_dump_json()  # and the answer stored


_json = JSON_VALUES
_value = st.text(max_size=12) | _json  # mostly what servers send, sometimes not
_call = st.builds(
    lambda index, call_id, name, arguments: {
        "index": index, "id": call_id, "type": "function",
        "function": {"name": name, "arguments": arguments},
    },
    st.integers(0, 2) | _json, _value, _value, st.sampled_from(['{"a"', ": 1}", ""]) | _value,
)  # fmt: skip
_parts = st.lists(
    st.fixed_dictionaries({"type": st.sampled_from(["text", "thinking"]), "text": _value}),
    max_size=2,
)
_delta = st.builds(
    lambda content, refusal, calls: {"role": "assistant", "content": content,
                                     "refusal": refusal, "tool_calls": calls},
    st.none() | _value | _parts, st.none() | _value, st.none() | st.lists(_call, max_size=2),
)  # fmt: skip
_finish = st.none() | st.sampled_from(["stop", "tool_calls", "length"]) | _value
_chunk = st.one_of(
    st.builds(lambda d, f: {"model": "gpt-test", "choices": [{"index": 0, "delta": d,
                                                              "finish_reason": f}]},
              _delta, _finish),
    st.builds(lambda u: {"choices": [], "usage": u},
              st.fixed_dictionaries({"prompt_tokens": _json, "completion_tokens": _json})),
    _json.map(lambda v: {"choices": v}),
)  # fmt: skip


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # parsing: one event loop is enough
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_chunk, max_size=6), st.booleans())
async def test_any_stream_gives_a_storable_message_or_a_model_error(
    anyio_backend: str, chunks: list[dict[str, Any]], done: bool
) -> None:
    """Whatever chunks come, with whatever values: a message that a transcript can hold (and
    send back), or a ``ModelError``; nothing else."""
    body = sse(*chunks, *(["[DONE]"] if done else []))
    model = OpenAIChatModel("gpt-test", env={"OPENAI_API_KEY": KEY},
                            retry=fast_policy(RecordingSleep(), max_retries=0))  # fmt: skip
    await storable_or_model_error(model, URL, body)
