"""What both providers share through their Transport: settings refused when the model is made,
the key checked before anything is sent, a stream read up to its end marker and no further."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator

import anyio
import httpx
import pytest
import respx

from interactions.errors import UsageError
from recipes.models._transport import check_max_stream_seconds
from recipes.models.anthropic import AnthropicModel
from recipes.models.openai import OpenAIChatModel

from ._wire import completed, failure, provider_model, run


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


def test_a_malformed_base_url_is_not_quoted() -> None:
    """A key pasted where the port goes is not repeated in the error (it is printed and logged)."""
    with pytest.raises(UsageError) as info:
        OpenAIChatModel("m", env={}, base_url="https://api.example.com:sk-live-SECRET123/v1")
    assert "SECRET123" not in str(info.value)
    assert "port" in str(info.value)


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize(
    ("stray", "problem"),
    [
        ("\n", "a line break"),
        (" ", "a space"),
        ("\x7f", "a control character"),
        ("é", "a non-ASCII character"),
    ],
    ids=["line break", "space", "control", "non-ASCII"],
)
async def test_a_key_a_header_cannot_carry_is_an_auth_error_that_does_not_quote_it(
    provider: str, stray: str, problem: str
) -> None:
    """A key pasted with a stray character fails when the model is called, as ``auth``, saying
    where the character is and which setting to check, never what the key is; nothing is sent."""
    key = "sk-test-" + stray + "STRAY0123456789"
    model, url = provider_model(provider, api_key=key)
    with respx.mock(assert_all_called=False) as mock:
        route = mock.post(url)
        error = await failure(model)
    assert error.error_class == "auth"
    assert f"{problem} at position 9" in str(error)
    assert f"{provider.upper()}_API_KEY (or api_key=)" in str(error)
    assert "STRAY0123456789" not in str(error) + repr(error)
    assert route.call_count == 0


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
    message = completed(events)
    assert (message.text, message.stop_reason) == ("ok", "end_turn")
    assert body.closed, "the connection is released"
