"""What one MCP request lends a tool call: whether its client can elicit, the elicitation
itself, and progress notifications. The only module that speaks to the MCP session."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import mcp.types as types
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from pydantic import ValidationError

from hosts.mcp._channel import Elicit, ElicitationReply, ElicitationTimeout
from interactions import InteractionAborted, InvalidPayloadError, RunError
from interactions.secrets import Secrets
from recipes import AbortSignal

__all__ = ["Progress", "can_elicit", "session_elicit", "session_progress"]

_CLOSED = "Connection closed"
"""The message of the SDK's ``CONNECTION_CLOSED`` error when the connection ends."""

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


def session_elicit(
    ctx: ServerRequestContext[Any, Any], abort: AbortSignal, secrets: Secrets
) -> Elicit:
    """An :data:`~hosts.mcp._channel.Elicit` sending ``elicitation/create`` on this request's
    own stream (its ``related_request_id``), with the timeout as the request's own; its
    message and form are scrubbed of ``secrets``.

    The timeout is kept here, not by the SDK: the SDK reports its own timeout and a closed
    connection with the codes a client may send in an error reply (-32001, -32000), and a
    client's failure must not pass for the human's decline. When the timeout passes (or the
    tool call is cancelled) the SDK cancels the elicitation at the client and
    :class:`~hosts.mcp._channel.ElicitationTimeout` is raised. The connection closing is the
    call's abort: ``abort`` (the call's signal) fires and
    :class:`~interactions.InteractionAborted` is raised; any error reply of the client is a
    :class:`~interactions.RunError` (``reason`` ``elicitation_failed``); a reply that is not an
    elicitation result is an :class:`~interactions.InvalidPayloadError`.
    """

    async def elicit(message: str, schema: dict[str, Any], timeout: float) -> ElicitationReply:
        request = types.ElicitRequest(
            params=types.ElicitRequestFormParams(
                message=secrets.scrub_known(message), requested_schema=secrets.scrub_value(schema)
            )
        )
        result: types.ElicitResult | None = None
        try:
            with anyio.move_on_after(timeout):
                result = await ctx.session.send_request(
                    request,
                    types.ElicitResult,
                    metadata=ServerMessageMetadata(related_request_id=ctx.request_id),
                )
        except MCPError as exc:
            if _connection_closed(exc):
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
        if result is None:
            raise ElicitationTimeout(f"the MCP client did not reply within {timeout:g} s")
        return ElicitationReply(result.action, result.content)

    return elicit


def _connection_closed(exc: MCPError) -> bool:
    """Whether ``exc`` is the SDK's own report of the connection ending (its code and message,
    no data), not an error reply of the client that happens to use the same code."""
    error = exc.error
    return error.code == types.CONNECTION_CLOSED and error.message == _CLOSED and error.data is None


def session_progress(ctx: ServerRequestContext[Any, Any], secrets: Secrets) -> Progress:
    """A :data:`Progress` reporting on this request, its message scrubbed of ``secrets``
    (nothing is sent when the client asked for no progress: its request carried no progress
    token)."""

    async def progress(count: float, message: str | None) -> None:
        await ctx.session.report_progress(count, None, secrets.scrub_value(message))

    return progress
