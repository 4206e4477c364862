"""Test helpers for the HTTP providers: the requests and the transcript both provider tests send,
a faked API (:func:`api_fixture`) and a model of either provider (:func:`provider_model`),
calling a model and reading what came back (:func:`run`, :func:`answer`, :func:`failure`,
:func:`until_failure`, :func:`warning_of`, :func:`sent`), SSE bodies, Anthropic content blocks,
broken streams, a recording sleep, and the property every stream must have
(:func:`storable_or_model_error`)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from typing import Any

import httpx
import pytest
import respx
from hypothesis import strategies as st

from recipes.messages import (
    AssistantMessage,
    ImagePart,
    TextPart,
    ToolCall,
    ToolResultMessage,
    TranscriptAdapter,
    UserMessage,
    stop_warning,
)
from recipes.models import (
    Completed,
    Model,
    ModelError,
    ModelEvent,
    ModelRequest,
    RetryPolicy,
    ToolSpec,
)
from recipes.models.anthropic import AnthropicModel
from recipes.models.openai import OpenAIChatModel

SSE_HEADERS = {"content-type": "text/event-stream"}

HELLO = ModelRequest(instructions="Be brief.", messages=[UserMessage.of_text("Hi")])
"""The request of most tests: instructions and one user message."""
TOOLS = [ToolSpec(name="greet", description="Greet someone", parameters={"type": "object"})]

TOOL_BATCH = (
    UserMessage(content=[TextPart(text="Look:"), ImagePart(data="QUJD", mime_type="image/png")]),
    AssistantMessage(
        text="Calling.",
        tool_calls=[
            ToolCall(id="c1", name="greet", arguments={"name": "Ada"}),
            ToolCall(id="c2", name="greet", invalid_arguments="{oops"),
        ],
    ),
    ToolResultMessage(tool_call_id="c1", tool_name="greet", content=[TextPart(text="Hello Ada")]),
    ToolResultMessage(
        tool_call_id="c2", tool_name="greet", content=[TextPart(text="bad args")], is_error=True
    ),
)
"""A transcript's start that each provider sends in its own wire format: a user message with an
image, an answer with two tool calls (the second with invalid arguments) and their results (the
second an error)."""


def api_fixture(url: str) -> Callable[[], Iterator[respx.Route]]:
    """A fixture faking a provider's API (respx): the route of POSTs to ``url``, for a test to
    set the answers on; a request to any other URL fails. Name it ``api`` in a test module."""

    @pytest.fixture
    def api() -> Iterator[respx.Route]:
        with respx.mock(assert_all_called=False) as mock:
            yield mock.post(url)

    return api


def provider_model(provider: str, **settings: Any) -> tuple[Model, str]:
    """A provider's model (no retries unless ``retry`` is given) and the URL it posts to."""
    settings = {"retry": RetryPolicy(max_retries=0)} | settings
    if provider == "openai":
        env = {"OPENAI_API_KEY": "sk-test-0123456789"}
        url = "https://api.openai.com/v1/chat/completions"
        return OpenAIChatModel("gpt-test", env=env, **settings), url
    env = {"ANTHROPIC_API_KEY": "sk-ant-test-0123456789"}
    url = "https://api.anthropic.com/v1/messages"
    return AnthropicModel("claude-test", env=env, **settings), url


async def run(model: Model, request: ModelRequest = HELLO) -> list[ModelEvent]:
    """Every event ``model`` streams for ``request``."""
    return [event async for event in model.stream(request)]


def completed(events: Sequence[ModelEvent]) -> AssistantMessage:
    """The message of the stream's last event, which must be its ``Completed``."""
    final = events[-1]
    assert isinstance(final, Completed)
    return final.message


async def answer(model: Model, request: ModelRequest = HELLO) -> AssistantMessage:
    """The message ``model`` completes for ``request``."""
    return completed(await run(model, request))


def warning_of(message: AssistantMessage) -> str:
    """What ``stop_warning`` warns of ``message`` (the test fails if it warns of nothing)."""
    warning = stop_warning([message])
    assert warning is not None
    return warning


async def until_failure(
    model: Model, request: ModelRequest = HELLO
) -> tuple[list[ModelEvent], ModelError]:
    """The events ``model`` streams for ``request`` before it fails, and the ``ModelError`` it
    fails with (the test fails if it raises none)."""
    seen: list[ModelEvent] = []
    with pytest.raises(ModelError) as info:
        async for event in model.stream(request):
            seen.append(event)
    return seen, info.value


async def failure(model: Model, request: ModelRequest = HELLO) -> ModelError:
    """The ``ModelError`` ``model`` raises for ``request`` (the test fails if it raises none)."""
    _, error = await until_failure(model, request)
    return error


def sent(route: respx.Route, call: int = -1) -> dict[str, Any]:
    """The JSON body of a request ``route`` received (the last one by default)."""
    body: dict[str, Any] = json.loads(route.calls[call].request.content)
    return body


def sse(*events: Any, event_names: Iterable[str | None] | None = None) -> bytes:
    """An SSE body: each event a JSON value (or a raw ``str`` sent as is) on one ``data:`` line."""
    names = list(event_names) if event_names is not None else [None] * len(events)
    out = []
    for name, event in zip(names, events, strict=True):
        data = event if isinstance(event, str) else json.dumps(event)
        head = f"event: {name}\n" if name else ""
        out.append(f"{head}data: {data}\n\n")
    return "".join(out).encode()


def content_block(
    index: int, start: dict[str, Any], *deltas: dict[str, Any]
) -> list[dict[str, Any]]:
    """An Anthropic content block's stream events: its start (``start`` is the block), one
    ``content_block_delta`` per delta, its stop."""
    return [
        {"type": "content_block_start", "index": index, "content_block": start},
        *({"type": "content_block_delta", "index": index, "delta": d} for d in deltas),
        {"type": "content_block_stop", "index": index},
    ]


def stream_response(body: bytes) -> httpx.Response:
    """A 200 event-stream response with ``body``."""
    return httpx.Response(200, headers=SSE_HEADERS, content=body)


class CutStream(httpx.AsyncByteStream):
    """A response body that sends ``chunks`` and then fails as a reset connection would."""

    def __init__(self, chunks: Iterable[bytes], message: str = "connection reset by peer") -> None:
        self._chunks = list(chunks)
        self._message = message

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self._chunks:
            yield chunk
        raise httpx.ReadError(self._message)


def cut_response(*chunks: bytes, message: str = "connection reset by peer") -> httpx.Response:
    """A 200 event-stream response whose body is cut after ``chunks`` with a ``ReadError``."""
    return httpx.Response(200, headers=SSE_HEADERS, stream=CutStream(chunks, message))


class RecordingSleep:
    """An injectable ``sleep`` that records the delays instead of waiting."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def fast_policy(sleep: RecordingSleep, **overrides: Any) -> RetryPolicy:
    """A retry policy with tiny backoffs, no jitter and the recording ``sleep``."""
    settings: dict[str, Any] = {"backoff_base": 0.001, "jitter": lambda: 1.0, "sleep": sleep}
    return RetryPolicy(**(settings | overrides))


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=4), inner, max_size=2)
    ),
    max_leaves=4,
)
"""Any JSON value, small: what a field of a wire message may hold when a server gets it wrong."""


async def storable_or_model_error(model: Model, url: str, body: bytes) -> None:
    """The property of every provider stream: ``body`` answered at ``url`` gives a message a
    transcript holds (and that goes back to the provider as JSON in the next request), or a
    :class:`ModelError`; nothing else."""
    with respx.mock() as mock:
        route = mock.post(url).mock(return_value=stream_response(body))
        try:
            hello = ModelRequest(messages=[UserMessage.of_text("Hi")])
            final = [event async for event in model.stream(hello)][-1]
        except ModelError:
            return
        assert isinstance(final, Completed)
        [kept] = TranscriptAdapter.validate_json(TranscriptAdapter.dump_json([final.message]))
        assert kept == final.message
        again = [UserMessage.of_text("Hi"), kept, UserMessage.of_text("Go on")]
        [_ async for _ in model.stream(ModelRequest(messages=again))]
        json.loads(route.calls[-1].request.content)
