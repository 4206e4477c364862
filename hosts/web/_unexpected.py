"""Failures no route planned for, answered like every other error.

A route reports the errors it knows (:class:`~hosts.web._errors.Refusal`, the framework's
refusals) itself. Anything else that escapes a route before its response started (a bug, or a
recipe's model or tool raising a plain exception while a run starts or continues) is answered
here with the same typed body: HTTP 500, ``error: "error"``, the generic message ``internal
error`` (the exception's text may hold a secret, so it never leaves the server), and logged
with its traceback; a store that cannot serve (a damaged file, a lost server) is a 503 and one
line in the log. The connection stays open for the client's next request.

A response already under way (an event stream) cannot change its status: that failure is left
to the server, which logs it and ends the connection (the AG-UI stream ends its own failures
with a ``RUN_ERROR`` first). Exceptions raised by the server's ``receive`` (a body over the
limit, which :class:`~hosts.web._limits.BodyLimit` answers) pass through untouched.
"""

from __future__ import annotations

import logging

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hosts.web._errors import refusal
from interactions.errors import StoreUnavailableError

__all__ = ["Unexpected"]

logger = logging.getLogger("hosts.web")


class Unexpected:
    """ASGI middleware: an exception no route handled becomes the typed 500 (logged here)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False
        from_receive: list[BaseException] = []

        async def receiving() -> Message:
            try:
                return await receive()
            except BaseException as exc:
                from_receive.append(exc)
                raise

        async def sending(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receiving, sending)
        except Exception as exc:
            if started or any(exc is raised for raised in from_receive):
                raise
            refused = refusal(exc)
            if isinstance(exc, StoreUnavailableError):  # said in full: no traceback to add
                logger.error("%s %s: %s; answered %d", scope["method"], scope["path"], exc,
                             refused.status)  # fmt: skip
            else:
                logger.exception("%s %s failed; answered 500", scope["method"], scope["path"])
            body = refused.body.model_dump(mode="json")
            await JSONResponse(body, refused.status)(scope, receive, send)
