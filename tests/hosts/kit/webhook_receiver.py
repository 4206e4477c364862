"""A real webhook receiver for the tests: an HTTP server on a local port that keeps what is
posted to it, verifies each signature with its own code (the Standard Webhooks scheme, written
here again from the spec, not imported), can answer with an error status, and can go down
(its port then refuses connections) and come back up on the same port."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anyio.to_thread


@dataclass(frozen=True)
class Received:
    """One post: its headers (lower-cased names), its body parsed, whether its signature held."""

    headers: dict[str, str]
    body: dict[str, Any]
    signed: bool


def verify(secret: str, headers: dict[str, str], body: bytes) -> bool:
    """Whether ``headers`` sign ``body`` with ``secret`` (``whsec_...``), per the spec: one of
    the space-separated ``v1,<base64>`` signatures is HMAC-SHA256 of ``id.timestamp.body``."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    given = [
        s.partition(",")[2] for s in headers["webhook-signature"].split() if s.startswith("v1,")
    ]
    return any(hmac.compare_digest(expected, s) for s in given)


class Receiver:
    """The server (see the module docstring); ``status`` is what it answers (default 204)."""

    def __init__(self, secret: str) -> None:
        self.secret = secret
        self.status = 204
        self.received: list[Received] = []
        self.attempts = 0
        self._changed = threading.Condition()
        self._server: ThreadingHTTPServer | None = None
        self.port = 0
        self.up()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks?token=in-the-url"

    def up(self) -> None:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["content-length"]))
                headers = {k.lower(): v for k, v in self.headers.items()}
                with receiver._changed:
                    receiver.attempts += 1
                    status = receiver.status
                    if 200 <= status < 300:
                        got = Received(
                            headers, json.loads(body), verify(receiver.secret, headers, body)
                        )
                        receiver.received.append(got)
                    receiver._changed.notify_all()
                self.send_response(status)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.port = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True).start()

    def down(self) -> None:
        """Stop listening: connections to the port are refused until :meth:`up`."""
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()
        self._server = None

    async def wait(self, *, received: int = 0, attempts: int = 0, within: float = 10.0) -> None:
        """Wait (at most ``within`` seconds) for that many posts taken, or attempts made."""

        def until() -> bool:
            with self._changed:
                return self._changed.wait_for(
                    lambda: len(self.received) >= received and self.attempts >= attempts, within
                )

        assert await anyio.to_thread.run_sync(until), (len(self.received), self.attempts)

    def close(self) -> None:
        if self._server is not None:
            self.down()
