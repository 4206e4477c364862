"""Running one batch of tool calls: validation, sequential/parallel execution, error results.

A batch in which any named tool is ``sequential`` runs one call at a time in source order, and
stops starting calls once one asks to pause; otherwise every call starts at once in a task group.
Tool failures become error results the model reads: an unknown tool, invalid arguments, a
raising tool, a call past ``timeout``. Two things are not the model's to read:
``InteractionAborted`` from a tool aborts the whole run (``abort_run``), and a
:class:`~interactions.ContractError` (a tool that would skip a human) fails it — raised out of
:meth:`Batch.run` once the batch has stopped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import anyio
import anyio.lowlevel
from pydantic import ValidationError

from interactions import AskUserInterrupt, ContractError, InteractionAborted
from recipes._context import ToolContext
from recipes._events import AgentEvent, ToolExecutionEnd, ToolExecutionStart, ToolExecutionUpdate
from recipes._tools import Tool, ToolResult, to_tool_result
from recipes.messages import TextPart, ToolCall, ToolResultMessage

__all__ = ["Batch", "CallOutcome", "error_result"]


@dataclass(frozen=True)
class CallOutcome:
    """What one call produced, with the loop's flags."""

    message: ToolResultMessage
    terminate: bool = False
    pause: bool = False
    interrupt: AskUserInterrupt | None = None


def _raise_breach(context: ToolContext) -> None:
    if context.asks is not None and context.asks.broken is not None:
        raise context.asks.broken


def exited(name: str, exc: SystemExit | KeyboardInterrupt) -> str:
    """What a call that raised ``SystemExit`` (``sys.exit()`` in a tool: argparse, click...)
    or ``KeyboardInterrupt`` tells the model: it failed; the session, and its host, go on."""
    raised = (
        f"called sys.exit({exc.code!r})"
        if isinstance(exc, SystemExit)
        else "raised KeyboardInterrupt"
    )
    return f"Tool {name!r} {raised} instead of returning a result; the call failed."


def error_result(call: ToolCall, text: str, kind: str) -> ToolResultMessage:
    """An error result for ``call``; ``details["error"]`` is ``kind`` (``unknown_tool``, ...)."""
    return ToolResultMessage(
        tool_call_id=call.id,
        tool_name=call.name,
        content=[TextPart(text=text)],
        details={"error": kind},
        is_error=True,
    )


@dataclass
class Batch:
    """One batch's execution state; the session reads ``started`` and ``done`` afterwards,
    including after a cancellation, to write the transcript."""

    tools: Mapping[str, Tool]
    make_context: Callable[[ToolCall], ToolContext]
    emit: Callable[[AgentEvent], None]
    abort_run: Callable[[str], None]
    timeout: float | None = None
    """Seconds one tool call may take; past it the call ends with a ``timeout`` error result."""
    scrub: Callable[[str], str] = str
    """What a failed call's text goes through before the model (and the transcript) gets it:
    the session's credentials scrubbed out (a tool's exception may quote one)."""
    started: set[str] = field(default_factory=set)
    done: dict[str, CallOutcome] = field(default_factory=dict)
    broken: ContractError | None = None
    """The first contract breach of a call; :meth:`run` raises it once the batch stopped."""

    def is_sequential(self, calls: Sequence[ToolCall]) -> bool:
        """Whether any call names a sequential tool."""
        return any(
            (tool := self.tools.get(c.name)) is not None and tool.execution_mode == "sequential"
            for c in calls
        )

    async def run(self, calls: Sequence[ToolCall], *, sequential: bool | None = None) -> None:
        """Run ``calls``; ``sequential=None`` decides from the tools (see the module docstring)."""
        if sequential is None:
            sequential = self.is_sequential(calls)
        if sequential:
            for call in calls:
                await self._run_call(call)
                if self.broken is not None or self.done[call.id].pause:
                    break
        else:
            async with anyio.create_task_group() as tg:
                for call in calls:
                    tg.start_soon(self._run_call, call, tg.cancel_scope)
        if self.broken is not None:
            raise self.broken

    async def _run_call(self, call: ToolCall, group: anyio.CancelScope | None = None) -> None:
        await anyio.lowlevel.checkpoint()  # an aborted run starts no further call
        self.started.add(call.id)
        self.emit(
            ToolExecutionStart(tool_call_id=call.id, tool_name=call.name, arguments=call.arguments)
        )
        try:
            outcome = await self._execute(call)
        except ContractError as exc:
            self.broken = self.broken or exc
            if group is not None:
                group.cancel()  # stop the siblings: the run fails
            outcome = CallOutcome(error_result(call, f"Not run: {exc}", "contract"))
        self.done[call.id] = outcome
        self.emit(
            ToolExecutionEnd(
                tool_call_id=call.id,
                tool_name=call.name,
                result=outcome.message,
                paused=outcome.pause,
            )
        )

    async def _execute(self, call: ToolCall) -> CallOutcome:
        if call.invalid_arguments is not None:
            return CallOutcome(
                error_result(
                    call,
                    f"Tool {call.name!r} was called with arguments that are not a JSON object: "
                    f"{call.invalid_arguments!r}. Call it again with a JSON object.",
                    "invalid_arguments",
                )
            )
        tool = self.tools.get(call.name)
        if tool is None:
            available = ", ".join(self.tools) or "(none)"
            return CallOutcome(
                error_result(
                    call,
                    f"Tool {call.name!r} not found. Available tools: {available}.",
                    "unknown_tool",
                )
            )
        try:
            params = tool.parse_arguments(call.arguments)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or '(arguments)'}: {err['msg']}"
                for err in exc.errors(include_url=False)
            )
            return CallOutcome(
                error_result(
                    call,
                    f"Invalid arguments for tool {call.name!r}: {problems}",
                    "invalid_arguments",
                )
            )

        def on_update(partial: ToolResult | str) -> None:
            self.emit(
                ToolExecutionUpdate(
                    tool_call_id=call.id, tool_name=call.name, partial=to_tool_result(partial)
                )
            )

        context = self.make_context(call)
        try:
            with anyio.move_on_after(self.timeout) as deadline:
                returned = await tool.execute(call.id, params, context, on_update)
            result = None if deadline.cancelled_caught else to_tool_result(returned)
        except ContractError:
            raise
        except InteractionAborted as exc:
            _raise_breach(context)
            self.abort_run(f"tool {call.name!r} aborted: {exc}")
            return CallOutcome(error_result(call, self.scrub(f"Aborted: {exc}"), "aborted"))
        except Exception as exc:
            _raise_breach(context)  # a breach the tool caught and hid still fails the run
            text = self.scrub(str(exc)) or type(exc).__name__
            return CallOutcome(error_result(call, text, "tool_failed"))
        except (SystemExit, KeyboardInterrupt) as exc:  # the tool's, not the host's to end on
            _raise_breach(context)
            text = self.scrub(exited(call.name, exc))  # sys.exit("...") may quote a credential
            return CallOutcome(error_result(call, text, "tool_failed"))
        if context.asks is not None:
            pause = result is not None and result.pause
            context.asks.check_return(result.interrupt if result else None, pause)
        if result is None:
            return CallOutcome(
                error_result(
                    call, f"Tool {call.name!r} timed out after {self.timeout:g} s.", "timeout"
                )
            )
        message = ToolResultMessage(
            tool_call_id=call.id,
            tool_name=call.name,
            content=result.content,
            details=result.details or None,
        )
        return CallOutcome(
            message, terminate=result.terminate, pause=result.pause, interrupt=result.interrupt
        )
