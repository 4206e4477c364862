"""A local fake of the OpenAI and Anthropic model APIs: real HTTP on 127.0.0.1, scripted replies.

One server answers ``POST /v1/chat/completions`` (OpenAI: point ``OPENAI_BASE_URL`` at
:attr:`FakeProviders.openai_url`) and ``POST /v1/messages`` (Anthropic: ``ANTHROPIC_BASE_URL``
at :attr:`FakeProviders.anthropic_url`). Each request takes the next :class:`Reply` queued for
its provider: a streamed text, a streamed tool call, an error with its status, body and headers
(a 429 with a reset header, a 401, a 503), or any bytes as they are (a malformed body). With
nothing queued it answers 500, loudly. Requests are recorded. Tests queue replies while the
server runs (the provider "recovers"), from any thread.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

OPENAI_KEY = "sk-fake-openai-key-0001"
ANTHROPIC_KEY = "sk-ant-fake-anthropic-key-0002"


@dataclass(frozen=True)
class Reply:
    """One answer: ``text`` (streamed), a ``tool`` call (name, arguments), or ``status`` with
    ``body`` bytes as given; ``headers`` are sent with it. ``hold``: sent once it is set (at
    most 30 s on), for a model call that takes as long as a test wants."""

    status: int = 200
    text: str | None = None
    tool: tuple[str, dict[str, Any]] | None = None
    body: bytes = b""
    content_type: str = "application/json"
    headers: tuple[tuple[str, str], ...] = ()
    hold: threading.Event | None = None


def says(text: str) -> Reply:
    """A streamed assistant text."""
    return Reply(text=text)


def calls(name: str, **arguments: Any) -> Reply:
    """A streamed tool call."""
    return Reply(tool=(name, arguments))


def error(status: int, kind: str | None = None, message: str = "", **headers: str) -> Reply:
    """An error response in the providers' shape (``kind`` is the error's type/code)."""
    data = {"type": "error", "error": {"message": message or f"fake {status}", "type": kind,
                                       "code": kind}}  # fmt: skip
    sent = tuple((k.replace("_", "-"), v) for k, v in headers.items())
    return Reply(status=status, body=json.dumps(data).encode(), headers=sent)


def usage_window(reset: str = "1s") -> Reply:
    """OpenAI's quota refusal: a 429 ``insufficient_quota`` with its reset header."""
    return error(429, "insufficient_quota", "You exceeded your current quota.",
                 x_ratelimit_reset_requests=reset)  # fmt: skip


def outage() -> Reply:
    """A 503 asking for no wait: the client retries at once, then gives up."""
    return error(503, "server_error", "The server is overloaded.", retry_after="0")


def malformed() -> Reply:
    """A 200 event stream whose data is not JSON: an unclassified failure."""
    return Reply(body=b"data: {not json\n\n", content_type="text/event-stream")


def _openai_stream(reply: Reply) -> bytes:
    if reply.tool is not None:
        name, arguments = reply.tool
        delta: dict[str, Any] = {"tool_calls": [{"index": 0, "id": "call_fake", "type": "function",
                                 "function": {"name": name, "arguments": json.dumps(arguments)}}]}
        finish = "tool_calls"
    else:
        delta, finish = {"role": "assistant", "content": reply.text}, "stop"
    chunks = [{"choices": [{"index": 0, "delta": delta}]},
              {"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}]  # fmt: skip
    return ("".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n").encode()


def _anthropic_stream(reply: Reply) -> bytes:
    if reply.tool is not None:
        name, arguments = reply.tool
        block = {"type": "tool_use", "id": "toolu_fake", "name": name, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(arguments)}
        stop = "tool_use"
    else:
        block = {"type": "text", "text": ""}
        delta, stop = {"type": "text_delta", "text": reply.text or ""}, "end_turn"
    events = [
        {"type": "message_start", "message": {"model": "fake", "usage": {"input_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": block},
        {"type": "content_block_delta", "index": 0, "delta": delta},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 1}},
        {"type": "message_stop"},
    ]
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


@dataclass
class FakeProviders:
    """The queues and the record of one fake server."""

    queues: dict[str, list[Reply]] = field(default_factory=lambda: {"openai": [], "anthropic": []})
    requests: dict[str, list[dict[str, Any]]] = field(
        default_factory=lambda: {"openai": [], "anthropic": []}
    )
    origin: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def openai_url(self) -> str:
        return f"{self.origin}/v1"

    @property
    def anthropic_url(self) -> str:
        return self.origin

    def queue(self, provider: str, *replies: Reply) -> None:
        """Add replies for ``provider`` (``openai`` or ``anthropic``)."""
        with self.lock:
            self.queues[provider].extend(replies)

    def env(self, *, openai: bool = True, anthropic: bool = True) -> dict[str, str]:
        """The environment pointing the providers here, with fake keys."""
        out: dict[str, str] = {}
        if openai:
            out |= {"OPENAI_BASE_URL": self.openai_url, "OPENAI_API_KEY": OPENAI_KEY}
        if anthropic:
            out |= {"ANTHROPIC_BASE_URL": self.anthropic_url, "ANTHROPIC_API_KEY": ANTHROPIC_KEY}
        return out

    def _next(self, provider: str, request: dict[str, Any]) -> Reply | None:
        with self.lock:
            self.requests[provider].append(request)
            queue = self.queues[provider]
            return queue.pop(0) if queue else None


def _handler(fake: FakeProviders) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
            pass

        def do_POST(self) -> None:
            provider = {"/v1/chat/completions": "openai", "/v1/messages": "anthropic"}.get(
                self.path
            )
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            if provider is None:
                self._send(Reply(status=404, body=b'{"error": {"message": "no such path"}}'))
                return
            headers = {k.lower(): v for k, v in self.headers.items()}
            reply = fake._next(provider, {"headers": headers, "body": body})
            if reply is None:
                reply = error(500, "server_error", "fake: no reply queued")
            if reply.hold is not None:
                reply.hold.wait(timeout=30)
            if reply.text is not None or reply.tool is not None:
                stream = _openai_stream(reply) if provider == "openai" else _anthropic_stream(reply)
                reply = Reply(body=stream, content_type="text/event-stream")
            self._send(reply)

        def _send(self, reply: Reply) -> None:
            self.send_response(reply.status)
            self.send_header("content-type", reply.content_type)
            self.send_header("content-length", str(len(reply.body)))
            for name, value in reply.headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(reply.body)

    return Handler


@contextmanager
def fake_providers() -> Iterator[FakeProviders]:
    """Serve a :class:`FakeProviders` on a free local port while the block lasts."""
    fake = FakeProviders()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    fake.origin = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
