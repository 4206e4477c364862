"""Running one batch of tool calls: validation, sequential/parallel execution, error results.

A batch in which any named tool is ``sequential`` runs one call at a time in source order, and
stops starting calls once one asks to pause; otherwise every call starts at once in a task group.
Tool failures become error results the model reads: an unknown tool, invalid arguments, a
raising tool, a call past ``timeout``. Three things are not the model's to read:
``InteractionAborted`` from a tool aborts the whole run (``abort_run``); a
:class:`~interactions.ContractError` (a tool that would skip a human) fails it, and so does a
tool's return value that is no result at all (a tool that forgot its ``return``: the
developer's ``UsageError``, which the model could only answer by calling the tool again), and
so does a ``MemoryError`` (the process is out of memory: nothing more should run in it) —
raised out of :meth:`Batch.run` once the batch has stopped. Either exception counts wherever
the tool raised it, inside an exception group (a tool's own task group) included.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio
import anyio.lowlevel
from pydantic import ValidationError

from interactions import AskUserInterrupt, ContractError, InteractionAborted, UsageError
from recipes import tracing
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


E = TypeVar("E", bound=BaseException)


def _first(exc: BaseException, kind: type[E]) -> E | None:
    """``exc`` if it is a ``kind``, else the first ``kind`` inside it (an exception group, as a
    tool's own task group raises, nested or not), else ``None``."""
    if isinstance(exc, kind):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            if (found := _first(inner, kind)) is not None:
                return found
    return None


def _failure_text(exc: Exception) -> str:
    """What a raising tool tells the model: the exception's text, and for an exception group
    (a tool's task group) the text of each exception in it, not just their count."""
    if not isinstance(exc, BaseExceptionGroup):
        return str(exc) or type(exc).__name__
    leaves = "; ".join(_failure_text(inner) for inner in exc.exceptions)  # type: ignore[arg-type]
    return f"{exc.message}: {leaves}"


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
    scrub_known: Callable[[str], str] | None = None
    """What a result's text and details go through before the model, the transcript and the
    host's live events get them: the session's credentials (as is or escaped) replaced, and
    nothing else (a tool that prints its environment quotes them). ``None``: the session holds
    none."""
    started: set[str] = field(default_factory=set)
    done: dict[str, CallOutcome] = field(default_factory=dict)
    broken: UsageError | MemoryError | None = None
    """The first contract breach of a call (a ``ContractError``, or a return value that is no
    result); :meth:`run` raises it once the batch stopped."""

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
            with tracing.tool_call(call) as traced:
                outcome = await self._execute(call)
                traced.set("pi_recipes.tool.paused", outcome.pause)
                if outcome.message.is_error:
                    traced.set("error.type", (outcome.message.details or {}).get("error", "tool"))
        except (UsageError, MemoryError) as exc:  # a ContractError, a return that is no result
            self.broken = self.broken or exc
            if group is not None:
                group.cancel()  # stop the siblings: the run fails
            if isinstance(exc, MemoryError):
                kind, said = "out_of_memory", "the process ran out of memory"
            else:
                kind, said = ("contract" if isinstance(exc, ContractError) else "usage"), str(exc)
            outcome = CallOutcome(error_result(call, f"The run failed on this call: {said}", kind))
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
            shown = _without(to_tool_result(partial), self.scrub_known)
            self.emit(ToolExecutionUpdate(tool_call_id=call.id, tool_name=call.name, partial=shown))

        context = self.make_context(call)
        try:
            with anyio.move_on_after(self.timeout) as deadline:
                returned = await tool.execute(call.id, params, context, on_update)
        except (ContractError, MemoryError):
            raise
        except Exception as exc:
            _raise_breach(context)  # a breach the tool caught and hid still fails the run
            if (breach := _first(exc, ContractError)) is not None:
                raise breach from exc
            if (aborted := _first(exc, InteractionAborted)) is not None:
                self.abort_run(f"tool {call.name!r} aborted: {aborted}")
                return CallOutcome(error_result(call, self.scrub(f"Aborted: {aborted}"), "aborted"))
            text = self.scrub(_failure_text(exc))
            return CallOutcome(error_result(call, text, "tool_failed"))
        except (SystemExit, KeyboardInterrupt) as exc:  # the tool's, not the host's to end on
            _raise_breach(context)
            text = self.scrub(exited(call.name, exc))  # sys.exit("...") may quote a credential
            return CallOutcome(error_result(call, text, "tool_failed"))
        result = None if deadline.cancelled_caught else _result_of(call, returned)
        result = None if result is None else _without(result, self.scrub_known)
        if context.asks is not None:
            tracing.tool_asks(context.asks.asked)
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


def _without(result: ToolResult, scrub: Callable[[str], str] | None) -> ToolResult:
    """``result`` with ``scrub`` applied to the text of its content and every text in its
    details (the same result when nothing changes, or with no ``scrub``; its interrupt is the
    ask's own)."""
    if scrub is None:
        return result
    content = _scrubbed(result.content, scrub)
    details = _scrubbed(result.details, scrub)
    if content is result.content and details is result.details:
        return result
    return result.model_copy(update={"content": content, "details": details})


def _scrubbed(value: Any, scrub: Callable[[str], str]) -> Any:
    """``value`` with ``scrub`` applied to its texts: ``value`` itself when none changes."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, TextPart):
        text = scrub(value.text)
        return value if text == value.text else TextPart(text=text)
    if isinstance(value, dict | list):
        items = value.items() if isinstance(value, dict) else enumerate(value)
        changed = {key: new for key, item in items if (new := _scrubbed(item, scrub)) is not item}
        if not changed:
            return value
        if isinstance(value, dict):
            return value | changed
        return [changed.get(index, item) for index, item in enumerate(value)]
    return value


def _result_of(call: ToolCall, returned: object) -> ToolResult:
    """What the tool of ``call`` returned, read as a result; a ``UsageError`` naming the tool
    when it is none (``None``: a tool that forgot its ``return``)."""
    try:
        return to_tool_result(returned)
    except UsageError as exc:
        if returned is None:
            message = (
                f"tool {call.name!r} returned None (did it forget its `return`?): a tool "
                "returns its result, a str, a ToolResult or what ask_user_* returned"
            )
        else:
            message = f"tool {call.name!r}: {exc}"
        raise UsageError(f"{message}. The call ran; the run stops here") from None
