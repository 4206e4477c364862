"""The activities a worker runs: the model calls and the tool bodies of its recipe's runs.

Their results are in the workflow's history, so a run that is resumed, replayed or moved to
another worker never calls a model or a tool body again for work it already did. Refusals and
failures leave as ``ApplicationError`` carrying our typed error (:mod:`._errors`); a model
failure carries its retry decision (:mod:`._failures`); what a tool raises is a result the
model reads, never retried.

Both heartbeat every :data:`CANCEL_NOTICE` seconds while they run, so a cancel (the run was
cancelled, a tool's timeout ran out) reaches them that soon: a tool's ``ctx.abort`` fires, then
its body is cancelled (:func:`_until_cancelled`); a model call is cancelled.
"""

from __future__ import annotations

import asyncio
import logging
import traceback
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from temporalio import activity
from temporalio.exceptions import ApplicationError, ApplicationErrorCategory

from interactions import AskUserInterrupt, ContractError, InteractionAborted, UsageError
from interactions.asks import AskLedger, AskScope
from recipes import AbortSignal, ToolContext, ToolResult, resolve_model, to_tool_result, tracing
from recipes.messages import ToolCall
from recipes.models import Completed, Model, ModelError, ModelRequest, Secrets
from recipes.temporal._errors import to_failure
from recipes.temporal._failures import model_failure
from recipes.temporal._served import Served, check_same_recipe
from recipes.temporal._wire import ModelCall, Prepared, StartRequest, ToolCallRequest, oversized

__all__ = [
    "CANCEL_NOTICE",
    "MODEL_ACTIVITY",
    "PREPARE_ACTIVITY",
    "TOOL_ACTIVITY",
    "RecipeActivities",
]

logger = logging.getLogger("recipes.temporal")

PREPARE_ACTIVITY = "pi-recipes.prepare"
MODEL_ACTIVITY = "pi-recipes.model"
TOOL_ACTIVITY = "pi-recipes.tool"

T = TypeVar("T")

CANCEL_NOTICE = 1.0
"""Seconds between the heartbeats of a running model call or tool body: a cancel reaches it
only in the answer to a heartbeat (the worker sends at most one a second for each activity)."""

STOP_BOUND = 5.0
"""Seconds a cancelled tool body is given to stop (its ``finally`` blocks, its clean-up) before
its activity reports the cancel all the same."""


class ToolFailed(Exception):
    """What a tool raised, as the text its error result shows."""


class RecipeActivities:
    """The activities of one worker, over what it serves."""

    def __init__(self, served: Served, task_queue: str) -> None:
        self.served = served
        self.task_queue = task_queue
        self._models: dict[tuple[str, str], Model] = {}

    def all(self) -> list[Callable[..., Any]]:
        """The activity functions to register on the worker."""
        return [self.prepare, self.call_model, self.call_tool]

    @activity.defn(name=PREPARE_ACTIVITY)
    async def prepare(self, data: dict[str, Any]) -> dict[str, Any]:
        """Check a new run against this worker: its recipe, agent and model (with its
        credentials here). Refusals are ``UsageError``, before the run is written."""
        start = StartRequest.model_validate(data)
        try:
            check_same_recipe(start.ref, self.served.ref, self.task_queue)
            agent = self.served.recipe.agent(start.agent)
            model = self._model(agent.name, start.model)
            problem = getattr(model, "credentials_problem", None)
            found = problem() if callable(problem) else None
            if found:
                raise UsageError(
                    f"cannot start the run on this worker: {found}; set it in the worker's "
                    "environment and start the worker again"
                )
        except UsageError as exc:
            raise to_failure(exc) from None
        return Prepared(
            ref=self.served.ref,
            agent=agent.name,
            model_name=model.name,
            history_limit=self.served.history_limit,
        ).model_dump()

    @activity.defn(name=MODEL_ACTIVITY)
    async def call_model(self, data: dict[str, Any]) -> dict[str, Any]:
        """One model call, streamed to its end; the assistant message as JSON."""
        call = ModelCall.model_validate(data)
        try:
            model = self._model(call.agent, call.model_name)
        except UsageError as exc:
            raise to_failure(exc) from None
        request = ModelRequest.model_validate(call.request)
        beats = asyncio.create_task(_heartbeats(self._beat()))
        try:
            with tracing.carrying(call.trace), tracing.model_call(model.name, request) as traced:
                async for event in model.stream(request):
                    if isinstance(event, Completed):
                        tracing.model_done(traced, event.message, model.name)
                        return event.message.model_dump(mode="json")
        except ModelError as exc:
            raise model_failure(exc) from None
        except Exception as exc:  # no provider's failure: a bug, a scripted model out of turns
            scrub = Secrets.from_env(self.served.env).scrub  # its text may quote a credential
            trace = scrub("".join(traceback.format_exception(exc)))
            logger.error("a model call failed on an error none of ours:\n%s", trace)
            raise model_failure(exc, scrub=scrub) from None  # no raw cause into the history
        except asyncio.CancelledError:
            _quiet_when_gone(activity.cancellation_details())
            raise
        finally:
            beats.cancel()
        raise ApplicationError("the model's stream ended without its message", type="RunError")

    @activity.defn(name=TOOL_ACTIVITY)
    async def call_tool(self, data: dict[str, Any]) -> dict[str, Any]:
        """One tool body, run as the agent loop runs it; its result as JSON. What the tool
        raises is a ``ToolFailed`` (its error result's text); a broken ask contract a
        ``ContractError``; an abort ``InteractionAborted``; none is retried."""
        call = ToolCallRequest.model_validate(data)
        tool = self.served.recipe.tools.get(call.tool_name)
        if tool is None:
            raise to_failure(UsageError(f"this worker's recipe has no tool {call.tool_name!r}"))
        answers = {
            interrupt.id: interrupt
            for interrupt in (AskUserInterrupt.model_validate(a) for a in call.answers)
        }
        scope = AskScope((*call.scope, call.key))
        ledger = AskLedger(scope=scope, replay=call.replay, answers=answers)
        abort = AbortSignal()
        context = ToolContext(
            mode=call.mode,
            ui=None,
            env=dict(self.served.env) | call.flags,
            cwd=self.served.cwd,
            run_id=call.run_id,
            session_id=call.run_id,
            agent=call.agent,
            tool_call_id=call.tool_call_id,
            abort=abort,
            can_pause=True,
            asks=ledger,
        )
        try:
            params = tool.parse_arguments(call.arguments)
            beats = asyncio.create_task(_heartbeats(self._beat()))
            try:
                with tracing.carrying(call.trace), tracing.tool_call(_called(call)):
                    body = tool.execute(call.tool_call_id, params, context, _progress)
                    returned = await _until_cancelled(body, abort)
                    tracing.tool_asks(ledger.asked)
            finally:
                beats.cancel()
            result = to_tool_result(returned)
        except ContractError as exc:
            raise to_failure(exc) from None
        except InteractionAborted as exc:
            raise to_failure(ledger.broken or exc) from None
        except Exception as exc:
            if ledger.broken is not None:  # a breach the tool caught still fails the run
                raise to_failure(ledger.broken) from None
            message = Secrets.from_env(context.env).scrub(str(exc)) or type(exc).__name__
            raise ApplicationError(
                message,
                type="ToolFailed",
                non_retryable=True,
                category=ApplicationErrorCategory.BENIGN,  # a result the model reads
            ) from None
        try:
            ledger.check_return(result.interrupt, result.pause)
        except ContractError as exc:
            raise to_failure(exc) from None
        dumped = _dump(result)
        too_big = oversized(activity.payload_converter(), dumped, f"{call.tool_name}'s result")
        if too_big:  # Temporal would refuse it, and retrying would run the body again
            raise ApplicationError(
                f"{too_big}; return less (a summary, a file path)",
                type="ToolFailed",
                non_retryable=True,
                category=ApplicationErrorCategory.BENIGN,  # a result the model reads
            )
        return dumped

    def _beat(self) -> float:
        """Seconds between a running activity's heartbeats: often enough for a lost worker
        to be noticed within ``--heartbeat``, and a cancel within :data:`CANCEL_NOTICE`."""
        return min(self.served.heartbeat.total_seconds() / 3, CANCEL_NOTICE)

    def _model(self, agent: str, name: str | None) -> Model:
        key = (agent, name or "")
        if key not in self._models:
            self._models[key] = resolve_model(
                self.served.recipe, agent, name, env=dict(self.served.env)
            )
        return self._models[key]


def _called(call: ToolCallRequest) -> ToolCall:
    """The call as the agent loop names it (for its span)."""
    return ToolCall(id=call.tool_call_id, name=call.tool_name)


def _dump(result: ToolResult) -> dict[str, Any]:
    data = result.model_dump(mode="json", exclude={"interrupt"})
    if result.interrupt is not None:
        data["interrupt"] = result.interrupt.model_dump(
            mode="json", by_alias=True, exclude_none=True
        )
    return data


def _progress(partial: object) -> None:
    activity.heartbeat()


async def _heartbeats(every: float) -> None:
    """Heartbeat while a model call or a tool body runs, so a lost worker is noticed within the
    timeout and a cancel reaches the activity (in the answer to a heartbeat)."""
    while True:
        activity.heartbeat()
        await asyncio.sleep(every)


async def _until_cancelled(body: Awaitable[T], abort: AbortSignal) -> T:
    """Run a tool's ``body`` in a task of its own and return what it returns.

    When the activity is cancelled (its run was cancelled, the agent loop's ``tool_timeout``
    ran out, the workflow ended), the body's ``ctx.abort`` fires first, saying why, and then
    the body's task is cancelled, as the agent loop stops a tool on the other engines: a
    cooperative tool that watches ``ctx.abort`` stops, and the cancellation reaches whatever
    the body awaits. The body gets :data:`STOP_BOUND` seconds to end; the cancel is raised
    whatever it returns.
    """
    task = asyncio.ensure_future(body)
    try:
        await asyncio.wait([task])
    except asyncio.CancelledError:
        details = activity.cancellation_details()
        abort.fire(_why(details))
        task.cancel()
        await asyncio.wait([task], timeout=STOP_BOUND)
        if task.done() and not task.cancelled():
            task.exception()  # what a stopped body raised is nobody's result now
        _quiet_when_gone(details)
        raise
    return task.result()


def _quiet_when_gone(details: activity.ActivityCancellationDetails | None) -> None:
    """For an activity cancelled because its run's workflow has ended (the usual end of a
    cancelled run: the workflow does not wait for the activity), raise a benign failure: no
    one waits for it, and the worker logs it at debug level, not as a failed activity."""
    if details is not None and details.not_found:
        raise ApplicationError(
            "stopped: the run's workflow has ended",
            type="Stopped",
            non_retryable=True,
            category=ApplicationErrorCategory.BENIGN,
        ) from None


def _why(details: activity.ActivityCancellationDetails | None) -> str:
    """Why a tool call is stopped, as its ``ctx.abort.reason`` says it."""
    if details is not None and details.worker_shutdown:
        return "the worker is shutting down"
    if details is not None and details.timed_out:
        return "the tool call timed out"
    return "the run no longer waits for this tool call: it was cancelled, or the call timed out"
