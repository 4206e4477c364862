"""One MCP tool call: the recipe tool's ``execute`` called directly, with a context built here.

There is no agent loop behind an MCP tool call (the client's model is the agent), so no
``AgentSession``: the call validates the arguments with the tool's parameters model, builds a
:class:`~recipes.ToolContext` (the server's environment, no UI, ``can_pause`` false, the chain
with the elicitation channel before the interrupt, an :class:`~interactions.asks.AskLedger` of
its own) and awaits ``execute``. What the tool returns is read by
:func:`~recipes.to_tool_result`; its text parts become the MCP result's text, its image parts
images, and its interrupt (when it asked) the result's ``_meta["pi-recipes/interrupt"]``.

- A tool that raises, arguments that do not validate, and a breach of the ask contract end as a
  tool error (``isError``) carrying the message.
- ``on_update`` reports progress: each update is one ``notifications/progress`` (its count as
  ``progress``, its text as ``message``), sent in order before the result; when the client
  reads slower than the tool reports, updates past :data:`PROGRESS_BUFFER` are dropped.
- A cancellation of the request (the client's ``notifications/cancelled``, or the connection
  closing) aborts the call: the tool's ``ctx.abort`` fires first, then the tool is cancelled,
  so an ask waiting on the client raises :class:`~interactions.InteractionAborted`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from uuid import uuid4

import anyio
import mcp.types as types
from pydantic import ValidationError

from hosts.mcp._channel import ElicitationChannel, mcp_channels
from hosts.mcp._session import Progress
from hosts.mcp._wire import sendable
from interactions import InteractionAborted
from interactions.asks import ROOT_SCOPE, AskLedger
from recipes import AbortSignal, OnUpdate, Tool, ToolContext, ToolResult, to_tool_result
from recipes.messages import ImagePart, TextPart
from recipes.models import Secrets

__all__ = [
    "INTERRUPT_META",
    "MODE",
    "PROGRESS_BUFFER",
    "CallHost",
    "run_tool_call",
    "tool_error",
]

MODE = "mcp"
"""The tool context's ``mode`` while an MCP client calls the tool."""
INTERRUPT_META = "pi-recipes/interrupt"
"""The ``_meta`` key of a result that asked a human: the interrupt, in its AG-UI wire form."""
PROGRESS_BUFFER = 64
"""Progress updates waiting to be sent, at most; more are dropped until the client reads."""
PROGRESS_DRAIN = 5.0
"""Seconds the updates still queued when the tool returns may take to be sent."""


@dataclass(frozen=True)
class CallHost:
    """What every tool call of a server shares: the session's environment (read once when
    the server started), the working directory, the server's session id and the agent name
    its tools were chosen for."""

    env: Mapping[str, str]
    cwd: Path
    session_id: str
    agent: str


def tool_error(text: str) -> types.CallToolResult:
    """An MCP tool error (``isError``) whose one text part is ``text``."""
    return types.CallToolResult(content=[types.TextContent(text=sendable(text))], is_error=True)


def _success(result: ToolResult) -> types.CallToolResult:
    content: list[types.ContentBlock] = []
    for part in result.content:
        if isinstance(part, TextPart):
            content.append(types.TextContent(text=sendable(part.text)))
        elif isinstance(part, ImagePart):
            content.append(types.ImageContent(data=part.data, mime_type=part.mime_type))
    meta = None
    if result.interrupt is not None:
        meta = sendable(
            {INTERRUPT_META: result.interrupt.model_dump(mode="json", exclude_none=True)}
        )
    return types.CallToolResult(content=content, is_error=False, _meta=meta)


def _invalid(tool: Tool, exc: ValidationError) -> types.CallToolResult:
    problems = "; ".join(
        f"{'.'.join(str(p) for p in err['loc']) or '(arguments)'}: {err['msg']}"
        for err in exc.errors(include_url=False)
    )
    return tool_error(f"Invalid arguments for tool {tool.name!r}: {problems}")


async def _execute(
    tool: Tool, params: Any, ctx: ToolContext, on_update: OnUpdate
) -> types.CallToolResult:
    ledger = ctx.asks
    assert ledger is not None
    try:
        returned = await tool.execute(ctx.tool_call_id, params, ctx, on_update)
        result = to_tool_result(returned)
        ledger.check_return(result.interrupt, result.pause)
    except InteractionAborted as exc:
        return tool_error(_scrubbed(f"Aborted: {exc}", ctx))
    except Exception as exc:
        failure = ledger.broken or exc  # a breach the tool caught and hid still fails the call
        return tool_error(_scrubbed(str(failure), ctx) or type(failure).__name__)
    except (SystemExit, KeyboardInterrupt) as exc:  # the tool's: the server serves on
        if ledger.broken is not None:
            return tool_error(_scrubbed(str(ledger.broken), ctx))
        raised = (
            f"called sys.exit({exc.code!r})"
            if isinstance(exc, SystemExit)
            else "raised KeyboardInterrupt"
        )
        text = f"Tool {tool.name!r} {raised} instead of returning a result; the call failed."
        return tool_error(_scrubbed(text, ctx))
    return _success(result)


def _scrubbed(text: str, ctx: ToolContext) -> str:
    """A failure's text as the client (and its model) gets it: the credentials of the session's
    environment scrubbed out (a tool's exception may quote one)."""
    return Secrets.from_env(ctx.env).scrub(text)


async def run_tool_call(
    tool: Tool,
    arguments: Mapping[str, Any],
    host: CallHost,
    *,
    elicitation: ElicitationChannel,
    progress: Progress,
    abort: AbortSignal | None = None,
) -> types.CallToolResult:
    """Run ``tool`` on ``arguments`` for one MCP request (see the module docstring) and return
    the MCP result. ``abort`` is the call's abort signal (the tool's ``ctx.abort``; the request
    fires it when it is cancelled). Never raises for what the tool does; a cancellation of the
    caller propagates once the tool has stopped."""
    try:
        params = tool.parse_arguments(dict(arguments))
    except ValidationError as exc:
        return _invalid(tool, exc)
    call_id = f"mcp-{uuid4().hex[:12]}"
    signal = abort or AbortSignal()
    ctx = ToolContext(
        mode=MODE,
        ui=None,
        env=host.env,
        cwd=host.cwd,
        run_id=call_id,
        session_id=host.session_id,
        agent=host.agent,
        tool_call_id=call_id,
        abort=signal,
        can_pause=False,
        interaction_channels=mcp_channels(elicitation),
        asks=AskLedger(ROOT_SCOPE.call(call_id)),
    )
    send, receive = anyio.create_memory_object_stream[str | None](PROGRESS_BUFFER)

    def on_update(partial: ToolResult | str) -> None:
        text = sendable(to_tool_result(partial).text) or None
        with contextlib.suppress(anyio.WouldBlock, anyio.ClosedResourceError):
            send.send_nowait(text)

    drained = anyio.Event()

    async def pump() -> None:
        count = 0
        async with receive:
            async for text in receive:
                count += 1
                await progress(count, text)
        drained.set()

    # The body is shielded so that a cancellation of the request reaches the watcher first:
    # it fires the abort signal, then cancels the body, whose asks then see an abort.
    body = anyio.CancelScope(shield=True)
    finished = False

    async def watch() -> None:
        try:
            await anyio.sleep_forever()
        finally:
            if not finished:
                signal.fire("the MCP client cancelled the tool call")
                body.cancel()

    result = tool_error("Aborted: the MCP client cancelled the tool call")
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(watch)
        tasks.start_soon(pump)
        with body:
            result = await _execute(tool, params, ctx, on_update)
        finished = True
        send.close()
        with anyio.move_on_after(PROGRESS_DRAIN):
            await drained.wait()
        tasks.cancel_scope.cancel()
    return result
