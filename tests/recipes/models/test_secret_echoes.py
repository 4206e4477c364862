"""A provider that echoes a credential, wherever it puts it, leaks it nowhere.

Each case is a real response (respx) that echoes a secret in one place a provider can: a field of
the error body at any depth, a body that is not JSON, an SSE ``error`` event, a line that is not
JSON, a transport failure quoting the URL or a header. The secrets are the key the model was built
with and credentials of the environment it was given (``GITHUB_TOKEN``, ``SLACK_BOT_TOKEN``). The
raised error (``str``, ``repr``, ``args``, its whole cause/context chain and the traceback a
logger would print) and every log record must hold no trace of them.
"""

from __future__ import annotations

import base64
import json
import logging
import traceback
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest
import respx

from interactions.errors import UsageError
from recipes.models import Model, ModelError
from recipes.models.anthropic import AnthropicModel
from recipes.models.openai import OpenAIChatModel

from ._wire import RecordingSleep, cut_response, failure, fast_policy, run, sse

pytestmark = pytest.mark.anyio

OPENAI_KEY = "sk-proj-Xk3LEAKOPENAI7f0c9a2b4d6e8Zq9W"
ANTHROPIC_KEY = "sk-ant-api03-LEAKANTHROPIC5e1d7c3b9a1f-Yp4V"
GITHUB_TOKEN = "tok.LEAKENV.0123456789/+=Wx7R"  # no known key shape: only the registry knows it
SLACK_TOKEN = "xoxb-1234-LEAKSLACK-abcdef0123Mn2T"
ENV = {"GITHUB_TOKEN": GITHUB_TOKEN, "SLACK_BOT_TOKEN": SLACK_TOKEN}

Echo = Callable[[str], httpx.Response | Exception]
"""Builds the provider's answer that echoes ``secret``."""


def tells(secret: str) -> list[str]:
    """What must not appear: the secret in any spelling, its distinctive middle, its last 4."""
    marker = next(part for part in secret.replace("-", ".").split(".") if "LEAK" in part)
    return [
        secret,
        json.dumps(secret)[1:-1],
        repr(secret)[1:-1],
        quote(secret, safe=""),
        marker[marker.index("LEAK") :][:10],
        secret[-4:],
    ]


def error_chain(error: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    todo: list[BaseException | None] = [error]
    while todo:
        current = todo.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        todo += [current.__cause__, current.__context__]


def assert_clean(error: ModelError, caplog: pytest.LogCaptureFixture, secret: str) -> None:
    texts = ["".join(traceback.format_exception(error)), caplog.text]
    for exc in error_chain(error):
        texts += [str(exc), repr(exc), repr(exc.args)]
    for record in caplog.records:
        texts += [record.getMessage(), repr(record.args)]
    for text in texts:
        for tell in tells(secret):
            assert tell not in text, f"{tell!r} leaked in {text!r}"


def json_error(status: int, payload: Any) -> httpx.Response:
    return httpx.Response(status, json=payload)


def stream(body: bytes | str) -> httpx.Response:
    content = body.encode() if isinstance(body, str) else body
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=content)


def transport_failure(secret: str) -> Exception:
    url = f"https://proxy.test/v1/chat/completions?api_key={quote(secret, safe='')}"
    return httpx.ConnectError(
        f"cannot connect to {url} (headers: {{'authorization': 'Bearer {secret}'}})"
    )


def header_failure(secret: str) -> Exception:
    # What h11 says through httpx about a header value it refuses.
    return httpx.LocalProtocolError(
        f"Illegal header value {('Bearer ' + secret + chr(10)).encode()!r}"
    )


def escaped(secret: str) -> str:
    """``secret`` with each character as a JSON ``\\uXXXX`` escape: JSON text that decodes to it
    and holds none of its characters."""
    return "".join(f"\\u{ord(char):04x}" for char in secret)


def mixed(secret: str) -> str:
    """``secret`` as a server may mix escapes: its first character percent-encoded and the ``%``
    then JSON-escaped, every other one as a JSON escape, the rest as is."""
    first = f"\\u0025{ord(secret[0]):02X}"
    return first + "".join(f"\\u{ord(c):04X}" if i % 2 else c for i, c in enumerate(secret[1:]))


def entities(secret: str) -> str:
    """``secret`` as an HTML page writes it: every character not a letter as a reference."""
    return "".join(c if c.isalnum() else f"&#x{ord(c):x};" for c in secret)


def raw_json(status: int, text: str) -> httpx.Response:
    return httpx.Response(status, headers={"content-type": "application/json"}, content=text)


def cut_after_output(secret: str) -> httpx.Response:
    first = sse({"choices": [{"index": 0, "delta": {"content": "Hel"}}]})
    return cut_response(first, message=f"peer reset while sending to key {secret}")


OPENAI_ECHOES: dict[str, Echo] = {
    "error.message": lambda s: json_error(
        401, {"error": {"message": f"Incorrect API key provided: {s}.", "code": "invalid_api_key"}}
    ),
    "error.message, JSON-escaped": lambda s: raw_json(
        401, f'{{"error": {{"message": "Incorrect API key provided: {escaped(s)}"}}}}'
    ),
    "error.message, JSON-escaped, retried": lambda s: raw_json(
        503, f'{{"error": {{"message": "upstream rejected {escaped(s)}"}}}}'
    ),
    "error.message, escapes mixed and nested": lambda s: raw_json(
        400, f'{{"error": {{"message": "bad key {mixed(s)}"}}}}'
    ),
    "HTML page, entities": lambda s: httpx.Response(502, text=f"<p>key {entities(s)}</p>"),
    "SSE error event, JSON-escaped": lambda s: stream(
        f'data: {{"error": {{"message": "key {escaped(s)}"}}}}\n\n'
    ),
    "error.type": lambda s: json_error(400, {"error": {"message": "bad request", "type": s}}),
    "error.code": lambda s: json_error(400, {"error": {"message": "bad request", "code": s}}),
    "nested object": lambda s: json_error(
        422,
        {"detail": [{"loc": ["header", "authorization"], "msg": "bad", "input": f"Bearer {s}"}]},
    ),
    "error as a string": lambda s: json_error(500, {"error": f"upstream rejected {s}"}),
    "non-JSON body": lambda s: httpx.Response(502, text=f"<html>upstream said {s}</html>"),
    "JSON body instead of a stream": lambda s: httpx.Response(
        200, json={"error": {"message": "no", "type": s, "param": {"key": s}}}
    ),
    "broken JSON body": lambda s: httpx.Response(
        200, headers={"content-type": "application/json"}, content=f'{{"key": "{s}"'.encode()
    ),
    "SSE error event": lambda s: stream(sse({"error": {"message": f"key {s}", "type": s}})),
    "malformed SSE line": lambda s: stream(f'data: {{"choices": "{s}\n\n'),
    "SSE chunk not an object": lambda s: stream(sse([s])),
    "transport error quoting URL and headers": transport_failure,
    "transport error quoting a header": header_failure,
    "stream cut after output": cut_after_output,
}

ANTHROPIC_ECHOES: dict[str, Echo] = {
    "error.message": lambda s: json_error(
        401, {"type": "error", "error": {"type": "authentication_error", "message": f"bad {s}"}}
    ),
    "error.type": lambda s: json_error(
        400, {"type": "error", "error": {"type": s, "message": "x"}}
    ),
    "nested object": lambda s: json_error(400, {"type": "error", "error": {"details": {"k": [s]}}}),
    "error.message, JSON-escaped, retried": lambda s: raw_json(
        529, f'{{"type": "error", "error": {{"type": "x", "message": "bad {escaped(s)}"}}}}'
    ),
    "unexpected block index, JSON-escaped": lambda s: stream(
        "event: content_block_delta\ndata: "
        f'{{"type": "content_block_delta", "index": "{escaped(s)}", '
        '"delta": {"type": "text_delta", "text": "x"}}\n\n'
    ),
    "non-JSON body": lambda s: httpx.Response(503, text=f"overloaded, key {s}"),
    "SSE error event": lambda s: stream(
        sse({"type": "error", "error": {"type": s, "message": s}}, event_names=["error"])
    ),
    "malformed SSE line": lambda s: stream(f"event: message_start\ndata: {{{s}\n\n"),
    "unexpected block index": lambda s: stream(
        sse(
            {
                "type": "content_block_delta",
                "index": s,
                "delta": {"type": "text_delta", "text": "x"},
            },
            event_names=["content_block_delta"],
        )
    ),
    "transport error quoting URL and headers": transport_failure,
}

SECRETS = {"model's key": "model", "GITHUB_TOKEN": GITHUB_TOKEN, "SLACK_BOT_TOKEN": SLACK_TOKEN}


def build(provider: str, sleep: RecordingSleep) -> tuple[Model, str, str]:
    """The model (its key from the environment it is given), its URL and its key."""
    if provider == "openai":
        env = ENV | {"OPENAI_API_KEY": OPENAI_KEY}
        model: Model = OpenAIChatModel("gpt-test", env=env, retry=fast_policy(sleep))
        return model, "https://api.openai.com/v1/chat/completions", OPENAI_KEY
    env = ENV | {"ANTHROPIC_API_KEY": ANTHROPIC_KEY}
    model = AnthropicModel("claude-test", env=env, retry=fast_policy(sleep))
    return model, "https://api.anthropic.com/v1/messages", ANTHROPIC_KEY


CASES = [
    pytest.param(provider, echo, which, id=f"{provider}-{name}-{which}")
    for provider, table in (("openai", OPENAI_ECHOES), ("anthropic", ANTHROPIC_ECHOES))
    for name, echo in table.items()
    for which in SECRETS
]


@pytest.mark.parametrize(("provider", "echo", "which"), CASES)
async def test_an_echoed_secret_leaks_nowhere(
    provider: str, echo: Echo, which: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    sleep = RecordingSleep()
    model, url, key = build(provider, sleep)
    secret = key if SECRETS[which] == "model" else SECRETS[which]
    with respx.mock:
        route = respx.post(url)

        def respond(request: httpx.Request) -> httpx.Response:  # the same echo on every retry
            answer = echo(secret)
            if isinstance(answer, Exception):
                raise answer
            return answer

        route.side_effect = respond
        error = await failure(model)
    assert route.called
    assert_clean(error, caplog, secret)


@pytest.mark.parametrize(
    ("provider", "which"), [(p, w) for p in ("openai", "anthropic") for w in SECRETS]
)
async def test_a_content_type_echo_leaks_nowhere(
    provider: str, which: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A 200 that is not an event stream is reported with its media type, as the server sent it
    and scrubbed: it was quoted lower-cased, which no scrub recognised."""
    model, url, key = build(provider, RecordingSleep())
    secret = key if SECRETS[which] == "model" else SECRETS[which]
    with respx.mock:
        respx.post(url).respond(200, headers={"content-type": f"x/{secret}; a=1"}, text="hm")
        error = await failure(model)
    assert_clean(error, caplog, secret)
    assert secret.lower() not in str(error).lower()
    assert "the server answered x/*** where an event stream was expected" in str(error)


@pytest.mark.parametrize(
    "partial",
    [
        "sk-proj-****************************Zq9W",
        "sk-...Zq9W",
        "sk-proj-Xk3L…Zq9W",
        "sk-proj-Xk3***Zq9W",
        "...Zq9W",
    ],
)
async def test_a_partial_echo_of_the_key_is_scrubbed(
    partial: str, caplog: pytest.LogCaptureFixture
) -> None:
    sleep = RecordingSleep()
    model, url, _ = build("openai", sleep)
    body = {"error": {"message": f"Incorrect API key provided: {partial}.", "type": partial}}
    with respx.mock:
        respx.post(url).mock(return_value=json_error(401, body))
        error = await failure(model)
    assert_clean(error, caplog, OPENAI_KEY)
    assert "Incorrect API key provided: ***." in str(error)


@pytest.mark.parametrize("spell", [str, escaped], ids=["as is", "JSON-escaped"])
async def test_an_echo_in_streamed_text_is_scrubbed_before_it_is_yielded(
    spell: Callable[[str], str],
) -> None:
    sleep = RecordingSleep()
    model, url, key = build("openai", sleep)
    text = f"Your key is {spell(key)}."
    chunks = [
        '{"choices": [{"index": 0, "delta": {"content": "' + text + '"}}]}',
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]
    with respx.mock:
        respx.post(url).mock(return_value=stream(sse(*chunks, "[DONE]")))
        events = await run(model)
    shown = "".join(e.model_dump_json() for e in events)
    assert "Your key is ***." in shown
    for tell in tells(key):
        assert tell not in shown


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("where", ["argument", "environment"])
async def test_a_password_in_the_base_url_leaks_nowhere(
    provider: str, where: str, caplog: pytest.LogCaptureFixture
) -> None:
    """``https://user:password@host`` reaches the server as Basic auth, as before, and the
    password shows in no ``repr``, error or log record (httpx logs every request's URL)."""
    caplog.set_level(logging.DEBUG)
    password = "pw-LEAKBASEURL-0123456789Qz8K"
    base = f"https://bob:{password}@proxy.test/v1"
    variable = f"{provider.upper()}_BASE_URL"
    env = {f"{provider.upper()}_API_KEY": "sk-some-key-0123456789"}
    env |= {variable: base} if where == "environment" else {}
    settings: dict[str, Any] = {"base_url": base} if where == "argument" else {}
    sleep = RecordingSleep()
    model: Model
    if provider == "openai":
        model = OpenAIChatModel("gpt-test", env=env, retry=fast_policy(sleep), **settings)
        url = "https://proxy.test/v1/chat/completions"
    else:
        model = AnthropicModel("claude-test", env=env, retry=fast_policy(sleep), **settings)
        url = "https://proxy.test/v1/v1/messages"
    with respx.mock:
        route = respx.post(url).mock(return_value=httpx.Response(503, text="busy"))
        error = await failure(model)
    request = route.calls[-1].request
    assert (request.url.userinfo, request.url.host) == (b"", "proxy.test")
    basic = base64.b64encode(f"bob:{password}".encode()).decode()
    assert request.headers["authorization"] == f"Basic {basic}"
    assert "proxy.test" in repr(model)
    assert caplog.records, "the retries should have been logged"
    for text in (repr(model), caplog.text, str(error)):
        for tell in tells(password):
            assert tell not in text, f"{tell!r} leaked in {text!r}"


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("where", ["argument", "environment"])
def test_a_base_url_with_a_query_is_refused_without_quoting_it(provider: str, where: str) -> None:
    """A query (``?key=...``) would be logged by httpx with every request, and the request path
    would land inside it: the model is refused at once, naming where the URL came from."""
    base = "https://gateway.test/v1?api-key=LEAKQUERY0123456789Qy7Z"
    variable = f"{provider.upper()}_BASE_URL"
    env = {variable: base} if where == "environment" else {}
    settings: dict[str, Any] = {"base_url": base} if where == "argument" else {}
    with pytest.raises(UsageError) as info:
        if provider == "openai":
            OpenAIChatModel("gpt-test", env=env, **settings)
        else:
            AnthropicModel("claude-test", env=env, **settings)
    source = variable if where == "environment" else "base_url"
    assert source in str(info.value)
    assert "query" in str(info.value)
    assert "LEAKQUERY" not in str(info.value)
