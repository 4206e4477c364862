"""The SSE parser (pure) and the streamed POST edge (respx)."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import pytest
import respx
from hypothesis import given
from hypothesis import strategies as st

from interactions.errors import UsageError
from recipes.models import Completed, Model, ModelError, RetryPolicy, Secrets
from recipes.models._assembly import TextJoiner, tool_call
from recipes.models._http import DEFAULT_TIMEOUT, post_sse
from recipes.models._sse import SSEError, SSEEvent, SSEParser
from recipes.models._transport import check_max_stream_seconds
from recipes.models.anthropic import AnthropicModel
from recipes.models.openai import OpenAIChatModel

from ._wire import run


def parse(*chunks: bytes) -> list[SSEEvent]:
    parser = SSEParser()
    return [event for chunk in chunks for event in parser.feed(chunk)]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b"data: hi\n\n", [SSEEvent("message", "hi")]),
        (b"data:hi\n\n", [SSEEvent("message", "hi")]),
        (b"data:  two spaces\n\n", [SSEEvent("message", " two spaces")]),
        (b"data: a\ndata: b\n\n", [SSEEvent("message", "a\nb")]),
        (b"data: a\r\ndata: b\r\n\r\n", [SSEEvent("message", "a\nb")]),
        (b"data: a\rdata: b\r\r", [SSEEvent("message", "a\nb")]),
        (b"event: ping\ndata: {}\n\n", [SSEEvent("ping", "{}")]),
        (b": a comment\ndata: x\n\n", [SSEEvent("message", "x")]),
        (b"event: lonely\n\n", []),  # no data: not dispatched
        (b"data\n\n", [SSEEvent("message", "")]),  # a field without colon, empty value
        (b"data: cut", []),  # not closed by a blank line: dropped at the end
        (
            b"id: 7\ndata: x\n\ndata: y\n\n",
            [SSEEvent("message", "x", "7"), SSEEvent("message", "y", "7")],
        ),
        (b"retry: 150\ndata: x\n\n", [SSEEvent("message", "x", None, 150)]),
        (b"retry: soon\ndata: x\n\n", [SSEEvent("message", "x")]),
        (b"id: a\x00b\ndata: x\n\n", [SSEEvent("message", "x")]),
        (b"\xef\xbb\xbfdata: bom\n\n", [SSEEvent("message", "bom")]),
        (b"data: \xff\xfe\n\n", [SSEEvent("message", "\ufffd\ufffd")]),
        (b"unknown: field\ndata: x\n\n", [SSEEvent("message", "x")]),
    ],
)
def test_parser_table(body: bytes, expected: list[SSEEvent]) -> None:
    assert parse(body) == expected


def test_crlf_split_across_chunks_is_one_line_end() -> None:
    assert parse(b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n") == [SSEEvent("message", "a\nb")]


def test_utf8_split_across_chunks() -> None:
    encoded = "data: é€\n\n".encode()
    assert parse(*(encoded[i : i + 1] for i in range(len(encoded)))) == [SSEEvent("message", "é€")]


@pytest.mark.parametrize("body", [b"data: " + b"x" * 200, b"data: xxxxx\n" * 40])
def test_oversized_line_or_event_is_a_documented_error(body: bytes) -> None:
    with pytest.raises(SSEError):
        SSEParser(max_event_chars=100).feed(body)


@given(st.binary(max_size=400), st.lists(st.integers(min_value=0, max_value=400), max_size=6))
def test_any_bytes_in_any_chunking_give_the_same_events(body: bytes, cuts: list[int]) -> None:
    whole = parse(body)
    points = sorted({min(c, len(body)) for c in cuts})
    pieces = [body[a:b] for a, b in zip([0, *points], [*points, len(body)], strict=True)]
    assert parse(*pieces) == whole
    assert all(isinstance(e, SSEEvent) and e.event and e.data is not None for e in whole)


_field = st.text(st.characters(exclude_characters="\r\n\x00", exclude_categories=["Cs"]))


_halves = st.sampled_from(["\ud83d", "\ude00", "\udbff", "\udc00"])


@given(
    st.lists(st.text(st.characters(codec="utf-16", exclude_categories=[])) | _halves, max_size=8)
)
def test_joined_text_is_storable_and_keeps_what_was_whole(pieces: list[str]) -> None:
    joiner = TextJoiner()
    out = "".join(joiner.feed(p) for p in pieces) + joiner.flush()
    out.encode("utf-8")
    whole = "".join(pieces)
    try:
        whole.encode("utf-8")
    except UnicodeEncodeError:
        return
    assert out == whole


@given(st.lists(st.tuples(_field.filter(lambda s: s != ""), _field), max_size=5))
def test_encoded_events_round_trip(events: list[tuple[str, str]]) -> None:
    body = "".join(f"event: {name}\ndata: {data}\n\n" for name, data in events).encode()
    assert parse(body) == [SSEEvent(name, data) for name, data in events]


@pytest.mark.parametrize(
    ("raw", "arguments", "invalid"),
    [
        ('{"a": 1}', {"a": 1}, None),
        ("", {}, None),
        ("  ", {}, None),
        ("[1, 2]", {}, "[1, 2]"),
        ("42", {}, "42"),
        ('{"a": ', {}, '{"a": '),
        ("null", {}, "null"),
        ('"text"', {}, '"text"'),
    ],
)
def test_tool_call_arguments(raw: str, arguments: dict[str, int], invalid: str | None) -> None:
    call = tool_call("c1", "f", raw)
    assert (call.arguments, call.invalid_arguments) == (arguments, invalid)


URL = "https://sse.test/stream"
SECRET = "s3cr3t-value-42"
SECRETS = Secrets([SECRET])


async def collect(client: httpx.AsyncClient, url: str = URL) -> list[SSEEvent]:
    events = post_sse(
        client, url, headers={}, body={}, timeout=DEFAULT_TIMEOUT, provider="p", secrets=SECRETS
    )
    return [event async for event in events]


@pytest.mark.anyio
async def test_post_sse_yields_events() -> None:
    with respx.mock:
        respx.post(URL).respond(
            200, headers={"content-type": "text/event-stream"}, content=b"data: 1\n\n"
        )
        async with httpx.AsyncClient() as client:
            assert await collect(client) == [SSEEvent("message", "1")]


@pytest.mark.anyio
async def test_post_sse_yields_scrubbed_events() -> None:
    body = f'event: e-{SECRET}\nid: i-{SECRET}\ndata: {{"text": "{SECRET}"}}\n\n'.encode()
    with respx.mock:
        respx.post(URL).respond(200, headers={"content-type": "text/event-stream"}, content=body)
        async with httpx.AsyncClient() as client:
            events = await collect(client)
    assert events == [SSEEvent("e-***", '{"text": "***"}', "i-***")]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("response", "error_class", "fragment"),
    [
        (httpx.Response(200, json={"choices": []}), "unclassified", "event stream was expected"),
        (
            httpx.Response(200, json={"error": {"type": "overloaded_error", "message": "busy"}}),
            "unavailable",
            "busy",
        ),
        (
            httpx.Response(200, headers={"content-type": "application/json"}, content=b"{nope"),
            "unclassified",
            "not valid JSON",
        ),
        (httpx.Response(500, text="<html>oops</html>"), "unavailable", "oops"),
        (httpx.Response(302, headers={"location": "/x"}), "unclassified", "HTTP 302"),
        (
            httpx.Response(
                200,
                headers={"content-type": "text/event-stream"},
                content=b"data: " + b"x" * (9 * 1024 * 1024),
            ),
            "unclassified",
            "exceeds",
        ),
    ],
)
async def test_post_sse_failures(response: httpx.Response, error_class: str, fragment: str) -> None:
    with respx.mock:
        respx.post(URL).mock(return_value=response)
        async with httpx.AsyncClient() as client:
            with pytest.raises(ModelError) as info:
                await collect(client)
    assert info.value.error_class == error_class
    assert fragment in str(info.value)


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


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("text/html; charset=utf-8", b"<html><body>Sign in to the proxy</body></html>"),
        ("text/plain", b"Sign in to the proxy"),
        ("application/x-ndjson", b'{"message": "Sign in to the proxy"}\n'),
    ],
)
async def test_a_page_where_a_stream_was_expected_says_so(
    provider: str, content_type: str, body: bytes
) -> None:
    """A 200 that is not an event stream (a login page, a wrong base URL) is reported as such,
    quoting it, not retried as if the connection had dropped."""
    model, url = provider_model(provider, retry=RetryPolicy(max_retries=2, sleep=_no_sleep))
    with respx.mock:
        route = respx.post(url).respond(200, headers={"content-type": content_type}, content=body)
        with pytest.raises(ModelError) as info:
            await run(model)
    assert info.value.error_class == "unclassified"
    assert content_type.split(";")[0] in str(info.value)
    assert "Sign in to the proxy" in str(info.value)
    assert "base URL" in str(info.value)
    assert route.call_count == 1


async def _no_sleep(seconds: float) -> None:
    pass


class EndlessStream(httpx.AsyncByteStream):
    """A response body that never ends: ``chunk`` again and again, as a stuck server would."""

    def __init__(self, chunk: bytes) -> None:
        self._chunk = chunk

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while True:
            yield self._chunk
            await anyio.sleep(0.01)


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize(
    "chunk",
    [
        pytest.param(b": keep-alive\n\n", id="comments"),
        pytest.param(b'event: ping\ndata: {"type": "ping"}\n\n', id="pings"),
        pytest.param(b"d", id="one byte at a time"),
    ],
)
async def test_a_stream_that_never_ends_is_bounded(provider: str, chunk: bytes) -> None:
    """Each read is bounded by the read timeout; the whole stream by ``max_stream_seconds``."""
    model, url = provider_model(provider, max_stream_seconds=0.2)
    response = httpx.Response(
        200, headers={"content-type": "text/event-stream"}, stream=EndlessStream(chunk)
    )
    with respx.mock:
        respx.post(url).mock(return_value=response)
        with anyio.fail_after(10), pytest.raises(ModelError) as info:
            await run(model)
    assert info.value.error_class == "unavailable"
    assert "max_stream_seconds" in str(info.value)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize(
    "value",
    [0, -1, math.nan, math.inf, -math.inf, True, "30", None],
    ids=["zero", "negative", "nan", "inf", "-inf", "bool", "str", "None"],
)
def test_a_bad_max_stream_seconds_is_refused_at_once(provider: str, value: object) -> None:
    """Every response is bounded: a bound that bounds nothing (NaN, infinity) or that no response
    can meet (0, negative), or that is no number, is a UsageError naming it, when the model is
    built, not a stream that never ends or a failure at each call."""
    with pytest.raises(UsageError) as info:
        provider_model(provider, max_stream_seconds=value)
    assert "max_stream_seconds" in str(info.value) and repr(value) in str(info.value)


@pytest.mark.parametrize("value", [0.5, 1, 1800.0])
def test_check_max_stream_seconds_takes_positive_seconds(value: float) -> None:
    assert check_max_stream_seconds(value) == value


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize(
    "value", [0, 3, False, {"max_retries": 0}], ids=["0", "3", "False", "dict"]
)
def test_a_retry_that_is_no_policy_is_refused_at_once(provider: str, value: object) -> None:
    """``retry=0`` read as "no retries" gave the default policy (2 retries) in silence; other
    values failed at the first call with an AttributeError."""
    with pytest.raises(UsageError) as info:
        provider_model(provider, retry=value)
    assert "retry" in str(info.value) and repr(value) in str(info.value)
    assert "RetryPolicy(max_retries=0)" in str(info.value)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize(
    "base_url",
    [
        pytest.param("api.example.com/v1", id="no scheme"),
        pytest.param("ftp://example.com/v1", id="not http"),
        pytest.param("https:///v1", id="no host"),
        pytest.param("https://example.com:abc/v1", id="bad port"),
        pytest.param("https://exa mple.com/v1", id="a space"),
        pytest.param("https://example.com\n/v1", id="a line break"),
    ],
)
@pytest.mark.parametrize("source", ["base_url", "env"])
def test_a_malformed_base_url_is_refused_at_construction(
    provider: str, base_url: str, source: str
) -> None:
    """A base URL without ``https://`` (or with a bad port) was taken, and every call then failed
    at request time: a bare ``httpx.InvalidURL`` crash for a bad port, an ``unclassified`` model
    error for a missing scheme. Now the model is not built, and the error names the setting."""
    family = OpenAIChatModel if provider == "openai" else AnthropicModel
    variable = f"{provider.upper()}_BASE_URL"
    env = {f"{provider.upper()}_API_KEY": "k"}
    with pytest.raises(UsageError) as info:
        if source == "env":
            family("m", env={**env, variable: base_url})
        else:
            family("m", env=env, base_url=base_url)
    assert (variable if source == "env" else "base_url") in str(info.value)


def test_a_well_formed_base_url_is_kept() -> None:
    model, _ = provider_model("openai", base_url="HTTP://LocalHost:8080/v1/")
    assert "localhost:8080/v1" in repr(model).lower()


@pytest.mark.anyio
async def test_an_invalid_url_at_request_time_is_a_model_error() -> None:
    async with httpx.AsyncClient() as client:
        with pytest.raises(ModelError) as info:
            await collect(client, "https://example.com:abc/x")
    assert info.value.error_class == "unclassified"
    assert "URL" in str(info.value)


class HeldOpenStream(httpx.AsyncByteStream):
    """A response body that sends ``body`` and then keeps the connection open, as a proxy that
    does not pass the server's close on may."""

    def __init__(self, body: bytes) -> None:
        self._body = body
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self._body
        await anyio.sleep_forever()

    async def aclose(self) -> None:
        self.closed = True


WHOLE_ANSWERS = {
    "openai": (
        b'data: {"choices": [{"delta": {"content": "ok"}, "finish_reason": null}]}\n\n'
        b'data: {"choices": [{"delta": {}, "finish_reason": "stop"}]}\n\ndata: [DONE]\n\n'
    ),
    "anthropic": (
        b'data: {"type": "content_block_start", "index": 0, "content_block": {"type": "text"}}\n\n'
        b'data: {"type": "content_block_delta", "index": 0, '
        b'"delta": {"type": "text_delta", "text": "ok"}}\n\n'
        b'data: {"type": "message_delta", "delta": {"stop_reason": "end_turn"}}\n\n'
        b'data: {"type": "message_stop"}\n\n'
    ),
}


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_a_stream_ends_at_its_end_marker(provider: str) -> None:
    """After ``[DONE]`` / ``message_stop`` the provider kept reading until the server closed the
    connection: behind a proxy that keeps it open, a whole answer waited for the read timeout
    or ``max_stream_seconds`` and then failed the run as ``unavailable``."""
    model, url = provider_model(provider)
    body = HeldOpenStream(WHOLE_ANSWERS[provider])
    response = httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=body)
    with respx.mock:
        respx.post(url).mock(return_value=response)
        with anyio.fail_after(5):
            events = await run(model)
    final = events[-1]
    assert isinstance(final, Completed)
    assert (final.message.text, final.message.stop_reason) == ("ok", "end_turn")
    assert body.closed, "the connection is released"


@pytest.mark.anyio
async def test_a_long_error_body_is_quoted_from_its_start() -> None:
    """Only the start of an error body is read (64 KiB); leaving the rest unread is clean on
    every loop (no unclosed-generator warning, which this module does not ignore)."""
    body = b"<html>quota page</html>" + b" " * (256 * 1024)
    with respx.mock:
        respx.post(URL).respond(500, content=body)
        async with httpx.AsyncClient() as client:
            with pytest.raises(ModelError) as info:
                await collect(client)
    assert info.value.error_class == "unavailable"
    assert "quota page" in str(info.value)


def test_a_malformed_base_url_is_not_quoted() -> None:
    """A key pasted where the port goes is not repeated in the error (it is printed and logged)."""
    with pytest.raises(UsageError) as info:
        OpenAIChatModel("m", env={}, base_url="https://api.example.com:sk-live-SECRET123/v1")
    assert "SECRET123" not in str(info.value)
    assert "port" in str(info.value)
