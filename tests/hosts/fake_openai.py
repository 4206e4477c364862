"""A local fake of the OpenAI chat-completions API: real HTTP on 127.0.0.1, scripted replies.

Each POST to ``/v1/chat/completions`` takes the next reply from ``replies``: an HTTP status
with a JSON error, a streamed assistant text, or a :class:`RawReply` sent as is. Requests are
recorded (headers and body).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class RawReply:
    """A reply sent exactly as given: any status, content type and body."""

    status: int
    body: bytes
    content_type: str = "application/json"


@dataclass
class FakeOpenAI:
    replies: list[int | str | RawReply]
    """Per request: an int is an error status, a str the assistant's streamed text, a
    :class:`RawReply` itself."""
    requests: list[dict[str, Any]] = field(default_factory=list)
    base_url: str = ""


def _handler(fake: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            fake.requests.append({"headers": dict(self.headers), "body": body})
            reply = fake.replies.pop(0) if fake.replies else 500
            if isinstance(reply, RawReply):
                self.send_response(reply.status)
                self.send_header("content-type", reply.content_type)
                self.send_header("content-length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)
                return
            if isinstance(reply, int):
                data = json.dumps({"error": {"message": f"status {reply}", "code": None}})
                self.send_response(reply)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data.encode())
                return
            chunks = [
                {"choices": [{"index": 0, "delta": {"role": "assistant", "content": reply}}]},
                {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
            ]
            stream = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(stream.encode())))
            self.end_headers()
            self.wfile.write(stream.encode())

    return Handler


@contextmanager
def fake_openai(replies: list[int | str | RawReply]) -> Iterator[FakeOpenAI]:
    """Serve a :class:`FakeOpenAI` on a free local port while the block lasts."""
    fake = FakeOpenAI(replies)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    fake.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
