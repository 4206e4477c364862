"""The workflow's side of the activities: a model and tools that call them.

The workflow runs the agent loop itself (the unchanged runner, session and batch), with a
:class:`ActivityModel` for its model and each of its recipe's tools' bodies replaced by a call
of the tool activity (:func:`proxied_recipe`). Everything else a tool declares (its parameters,
its execution and resume modes) stays, so the loop validates, batches, pauses and replays
exactly as on the other engines.

When the loop stops waiting for a call (its run was cancelled, a tool's ``tool_timeout`` ran
out: the session's cancel scope), the call's activity is cancelled and the loop goes on at once
(:func:`_outcome`); the activity's worker hears of it at its next heartbeat and stops the body.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

from pydantic import BaseModel
from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

from interactions import ContractError, InteractionAborted, RunError
from interactions.asks import call_key
from recipes import OnUpdate, Recipe, Tool, ToolContext, ToolResult, tracing
from recipes.messages import AssistantMessage
from recipes.models import Completed, ModelEvent, ModelRequest
from recipes.temporal._activities import MODEL_ACTIVITY, TOOL_ACTIVITY, ToolFailed
from recipes.temporal._errors import from_failure
from recipes.temporal._failures import TOOL_RETRY
from recipes.temporal._served import Served
from recipes.temporal._wire import PAYLOAD_LIMIT, ModelCall, Prepared, ToolCallRequest, oversized

__all__ = ["ActivityModel", "proxied_recipe"]


class ActivityModel:
    """The model of a run, called through the model activity on whichever worker takes it."""

    def __init__(self, prepared: Prepared, served: Served) -> None:
        self._name = prepared.model_name
        self._agent = prepared.agent
        self._history_limit = prepared.history_limit
        self._served = served

    @property
    def name(self) -> str:
        return self._name

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        call = ModelCall(
            agent=self._agent,
            model_name=self._name,
            request=request.model_dump(mode="json"),
            trace=tracing.carried(),
        ).model_dump(mode="json", exclude_none=True)
        self._check_room(call)
        try:
            data = await _outcome(
                workflow.start_activity(
                    MODEL_ACTIVITY,
                    call,
                    start_to_close_timeout=self._served.model_activity,
                    heartbeat_timeout=self._served.model_activity,
                    retry_policy=self._served.model_retry,
                )
            )
        except ActivityError as exc:
            raise _typed(exc, "the model call") from None
        yield Completed(message=AssistantMessage.model_validate(data))

    def _check_room(self, call: dict[str, Any]) -> None:
        """Fail the run (``RunError``, saying why) rather than send a call Temporal cannot carry:
        Temporal would refuse it without end, or end the workflow."""
        too_big = oversized(workflow.payload_converter(), call, "the model call (the transcript)")
        if too_big:
            raise RunError(
                f"{too_big}, so this run cannot call its model on the Temporal engine; run "
                "agents whose transcripts grow this large on the SQLite or PostgreSQL engine, "
                "or have their tools return less (a summary, a file path)",
                reason="payload_too_large",
            )
        history, limit = workflow.info().get_current_history_size(), self._history_limit
        if history + 2 * PAYLOAD_LIMIT > limit:  # room for this call and its answer, no more
            raise RunError(
                f"this run's Temporal history is {history:,} bytes, near the {limit:,} at which "
                "Temporal ends a workflow (the server's limit.historySize.error; each model call "
                "records the whole transcript), so the run stops here; run agents this long on "
                "the SQLite or PostgreSQL engine",
                reason="history_too_large",
            )


def proxied_recipe(recipe: Recipe, served: Served) -> Recipe:
    """``recipe`` with every tool's body replaced by a call of the tool activity."""
    tools = {
        name: dataclasses.replace(tool, execute=_ToolCall(tool, served))
        for name, tool in recipe.tools.items()
    }
    return dataclasses.replace(recipe, tools=tools)


class _ToolCall:
    """A tool's body as the workflow calls it: the tool activity."""

    def __init__(self, tool: Tool, served: Served) -> None:
        self._name = tool.name
        self._served = served

    async def __call__(
        self, tool_call_id: str, params: Any, ctx: ToolContext, on_update: OnUpdate
    ) -> ToolResult:
        ledger = ctx.asks
        request = ToolCallRequest(
            run_id=ctx.run_id,
            agent=ctx.agent,
            tool_name=self._name,
            tool_call_id=tool_call_id,
            arguments=_arguments(params),
            key=ledger.scope.path[-1] if ledger is not None else call_key(tool_call_id),
            scope=list(ledger.scope.path[:-1]) if ledger is not None else [],
            replay=ledger.replay if ledger is not None else False,
            answers=[
                interrupt.model_dump(mode="json", by_alias=True, exclude_none=True)
                for interrupt in (ledger.answers.values() if ledger is not None else ())
            ],
            flags=dict(ctx.env),
            mode=ctx.mode,
            trace=tracing.carried(),
        )
        served = self._served
        limit = served.tool_activity
        if served.tool_timeout is not None:  # the loop's own bound ends the call first
            limit = min(limit, timedelta(seconds=served.tool_timeout + 5))
        try:
            data = await _outcome(
                workflow.start_activity(
                    TOOL_ACTIVITY,
                    request.model_dump(mode="json", exclude=None if request.trace else {"trace"}),
                    start_to_close_timeout=limit,
                    heartbeat_timeout=served.heartbeat,
                    retry_policy=TOOL_RETRY,
                )
            )
        except ActivityError as exc:
            cause = exc.cause
            if isinstance(cause, ApplicationError) and cause.type == "ToolFailed":
                raise ToolFailed(cause.message) from None
            typed = from_failure(exc)
            if isinstance(typed, ContractError | InteractionAborted):
                raise typed from None
            raise ToolFailed(f"the tool's activity failed: {_message(exc)}") from None
        return ToolResult.model_validate(data)


async def _outcome(handle: workflow.ActivityHandle[Any]) -> Any:
    """The result of the activity ``handle`` (its failure raised as ``ActivityError``).

    A cancellation of the awaiting task (the session's cancel scope: the run was cancelled, a
    tool's timeout ran out) cancels the activity and is raised at once, so the leg ends without
    waiting for the activity; its worker hears of the cancel at the activity's next heartbeat.
    Awaiting ``handle`` itself would not do: Temporal turns each cancellation of it into a
    request and waits on for the activity, and a cancel scope, which delivers its cancellation
    again at every turn of the event loop until the task ends, would keep the workflow from
    ever yielding (Temporal fails such a workflow task as a deadlock).
    """
    try:
        await asyncio.wait([handle])
    except asyncio.CancelledError:
        handle.cancel()  # a request; Temporal settles the handle as cancelled in a later task
        handle.add_done_callback(_settled)
        raise
    return handle.result()


def _settled(handle: asyncio.Task[Any]) -> None:
    """Take the outcome of an activity the leg no longer waits for (no one else reads it)."""
    if not handle.cancelled():
        handle.exception()


def _arguments(params: Any) -> dict[str, Any]:
    if isinstance(params, BaseModel):
        dumped: dict[str, Any] = params.model_dump(mode="json", by_alias=True, exclude_unset=True)
        return dumped
    return dict(params)


def _message(error: BaseException) -> str:
    cause = getattr(error, "cause", None)
    return str(cause or error) or type(error).__name__


def _typed(error: ActivityError, what: str) -> Exception:
    """The typed error an activity's failure carries (one of a class only the workers know by
    its name, as the run records it on the other engines), else a ``RunError`` naming it."""
    typed = from_failure(error, keep_name=True)
    if typed is not None:
        return typed
    return RunError(f"{what} failed on the workers: {_message(error)}", reason="engine")
