"""The streamed POST edge (post_sse, respx): events scrubbed, failures classified, every
response bounded."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import httpx
import pytest
import respx

from recipes.models import ModelError, RetryPolicy, Secrets
from recipes.models._http import DEFAULT_TIMEOUT, post_sse
from recipes.models._sse import SSEEvent

from ._wire import provider_model, run

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


@pytest.mark.anyio
async def test_an_invalid_url_at_request_time_is_a_model_error() -> None:
    async with httpx.AsyncClient() as client:
        with pytest.raises(ModelError) as info:
            await collect(client, "https://example.com:abc/x")
    assert info.value.error_class == "unclassified"
    assert "URL" in str(info.value)


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
