"""What one MCP request lends a tool call: whether its client can elicit, the elicitation
itself, and progress notifications. The only module that speaks to the MCP session."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import Any

import mcp.types as types
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from pydantic import ValidationError

from hosts.mcp._channel import Elicit, ElicitationReply, ElicitationTimeout
from interactions import InteractionAborted, InvalidPayloadError, RunError
from recipes import AbortSignal

__all__ = ["Progress", "can_elicit", "session_elicit", "session_progress"]

Progress = Callable[[float, str | None], Awaitable[None]]
"""``await progress(count, message)``: one ``notifications/progress`` for the tool call."""


def can_elicit(ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether the client of this request declared form elicitation (``elicitation: {}`` or
    ``{form: {}}``) and the request can carry a server-to-client request now."""
    declared = ctx.session.client_capabilities
    elicitation = declared.elicitation if declared is not None else None
    if elicitation is None:
        return False
    form = elicitation.form is not None or elicitation.url is None
    return form and ctx.session.can_send_request


def session_elicit(ctx: ServerRequestContext[Any, Any], abort: AbortSignal) -> Elicit:
    """An :data:`~hosts.mcp._channel.Elicit` sending ``elicitation/create`` on this request's
    own stream (its ``related_request_id``), with the timeout as the request's own.

    The SDK cancels the elicitation at the client when the timeout passes or the tool call is
    cancelled. The connection closing is the call's abort: ``abort`` (the call's signal) fires
    and :class:`~interactions.InteractionAborted` is raised; an error reply is a
    :class:`~interactions.RunError` (``reason`` ``elicitation_failed``); a reply that is not an
    elicitation result is an :class:`~interactions.InvalidPayloadError`.
    """

    async def elicit(message: str, schema: dict[str, Any], timeout: float) -> ElicitationReply:
        request = types.ElicitRequest(
            params=types.ElicitRequestFormParams(message=message, requested_schema=schema)
        )
        try:
            result = await ctx.session.send_request(
                request,
                types.ElicitResult,
                request_read_timeout_seconds=None if math.isinf(timeout) else timeout,
                metadata=ServerMessageMetadata(related_request_id=ctx.request_id),
            )
        except MCPError as exc:
            if exc.error.code == types.REQUEST_TIMEOUT:
                raise ElicitationTimeout(exc.error.message) from None
            if exc.error.code == types.CONNECTION_CLOSED:
                abort.fire("the MCP client disconnected")
                raise InteractionAborted(
                    "the MCP client disconnected while its question was shown"
                ) from None
            raise RunError(
                f"the MCP client failed the elicitation: {exc.error.message}",
                reason="elicitation_failed",
            ) from None
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            where = ".".join(str(p) for p in first["loc"]) or "result"
            raise InvalidPayloadError(
                f"the MCP client's elicitation reply is not an elicitation result "
                f"({where}: {first['msg']})",
                reason="invalid_elicitation",
            ) from None
        return ElicitationReply(result.action, result.content)

    return elicit


def session_progress(ctx: ServerRequestContext[Any, Any]) -> Progress:
    """A :data:`Progress` reporting on this request (nothing is sent when the client asked
    for no progress: its request carried no progress token)."""

    async def progress(count: float, message: str | None) -> None:
        await ctx.session.report_progress(count, None, message)

    return progress
