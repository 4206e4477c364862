"""Nothing the web host sends holds a credential of its environment: every WebSocket frame and
every JSON, event-stream and plain-text response body (REST, AG-UI) passes :class:`Scrubbed`,
the outermost middleware, on its way out. A body of a known length is scrubbed whole (its
``Content-Length`` set to what is sent); a streamed one (an event stream) piece by piece, its
headers sent at once. The page's own files are sent as they are."""

from __future__ import annotations

from collections.abc import Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from interactions.secrets import Secrets

__all__ = ["Scrubbed"]

_TEXT_TYPES = (b"application/json", b"text/event-stream", b"text/plain", b"+json")


class Scrubbed:
    """ASGI middleware: scrub ``secrets`` out of what the application sends (see the module
    docstring). With no secrets it passes everything through untouched."""

    def __init__(self, app: ASGIApp, *, secrets: Secrets) -> None:
        self.app = app
        self.secrets = secrets

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self.secrets or scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        scrub = self.secrets.scrub_known
        held: Message | None = None  # a response start, until its body says what to send
        textual = False

        async def scrubbed_send(message: Message) -> None:
            nonlocal held, textual
            kind = message["type"]
            if kind == "websocket.send":
                if message.get("text") is not None:
                    message = {**message, "text": scrub(message["text"])}
                elif message.get("bytes") is not None:
                    message = {**message, "bytes": _scrub_bytes(message["bytes"], scrub)}
            elif kind == "http.response.start":
                said = dict(message.get("headers", []))
                textual = any(t in said.get(b"content-type", b"") for t in _TEXT_TYPES)
                if textual and b"content-length" in said:  # its length may change
                    held = message
                    return
            elif kind == "http.response.body" and textual:
                body = _scrub_bytes(message.get("body", b""), scrub)
                message = {**message, "body": body}
                if held is not None:
                    start, held = held, None
                    headers = [(k, v) for k, v in start.get("headers", [])
                               if k != b"content-length"]  # fmt: skip
                    if not message.get("more_body", False):
                        headers.append((b"content-length", str(len(body)).encode()))
                    await send({**start, "headers": headers})
            await send(message)

        await self.app(scope, receive, scrubbed_send)


def _scrub_bytes(data: bytes, scrub: Callable[[str], str]) -> bytes:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data
    scrubbed = scrub(text)
    return data if scrubbed == text else scrubbed.encode("utf-8")
