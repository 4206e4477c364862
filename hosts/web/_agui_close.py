"""How an AG-UI stream ends when its leg sent no closing event.

- The leg failed: ``RUN_ERROR`` with the error's code, and its message when it is one of ours
  (any other's text may hold a secret; the server's log has it).
- The run was cancelled while its leg streamed (``POST /api/runs/{id}/cancel``,
  ``pi-recipes runs cancel``, another process or server): the leg lost its last write to the
  cancel, and the stream ends with ``RUN_FINISHED`` outcome ``cancelled``, the outcome AG-UI has
  for it and what a replay of the same call says afterwards. A cancel is not a failure. So for
  any other writer that moved the run out of ``running`` (``runs recover`` marking it
  ``failed_resumable``): the stream ends as a replay would, where the run stands.
- An identical resume replayed (no new leg): the frame of the leg it replays, ``RUN_STARTED``
  naming the same ``parentRunId`` as that leg's (the leg that paused on the interrupts it
  answers), closed where the run stands, once the leg it replays has ended (waiting at most
  :data:`REPLAY_WAIT` seconds).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

import anyio
from ag_ui.core import (
    BaseEvent,
    ResumeEntry,
    RunAgentInput,
    RunErrorEvent,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
)

from hosts.web._host import WebHost
from hosts.web._legs import WatchedLeg
from interactions import ConflictError, PiRecipesError
from interactions.errors import error_code
from interactions.store import RunStatus
from recipes.runs import RunResult
from recipes.runs.agui import Outcome, agui_events, run_closed, run_started

__all__ = ["REPLAY_WAIT", "as_it_stands", "failed", "unclosed"]

REPLAY_WAIT = 600.0
"""Seconds a replayed resume waits for the leg it replays, still running, to end; past that it
ends with a ``RUN_ERROR`` (code ``still_running``) saying to replay it again later."""

_OUTCOMES: dict[RunStatus, Outcome] = {
    RunStatus.PAUSED_WAITING_HUMAN: "interrupt",
    RunStatus.FINISHED: "success",
    RunStatus.CANCELLED: "cancelled",
}


async def unclosed(
    host: WebHost, leg: WatchedLeg, run_input: RunAgentInput
) -> AsyncIterator[BaseEvent]:
    """The events that end the stream of ``leg`` (ended, and sent no closing event), as the
    module docstring says. Raises what reading the store raises."""
    agui_run = run_input.run_id
    if leg.error is not None:
        moved = await _moved(host, leg.run_id) if isinstance(leg.error, ConflictError) else None
        yield failed(leg.error) if moved is None else as_it_stands(moved, run_input)
    elif leg.result is not None and leg.seen == 0:  # an identical resume replayed: no new leg
        parent = await _paused_leg(host, leg.result.run_id, run_input.resume or [])
        yield run_started(leg.result.thread_id, agui_run, parent)
        result = await _settled(host, leg.result)
        yield as_it_stands(result, run_input)


def failed(exc: BaseException) -> RunErrorEvent:
    """The ``RUN_ERROR`` of a failure found once the stream started: its code, and its message
    when it is one of ours (any other's text may hold a secret: the server's log has it)."""
    message = str(exc) if isinstance(exc, PiRecipesError) else "internal error"
    return RunErrorEvent(message=message, code=error_code(exc).label)


async def _moved(host: WebHost, run_id: str) -> RunResult | None:
    """The run a leg lost its last write on (a ``ConflictError``) as another writer left it:
    cancelled, marked ``failed_resumable`` (``runs recover``)... (``None`` while it runs: another
    process took it over, which is the leg's conflict)."""
    result = await host.runner.status(run_id)
    return None if result.status is RunStatus.RUNNING else result


async def _paused_leg(host: WebHost, run_id: str, entries: Sequence[ResumeEntry]) -> str | None:
    """The AG-UI run id of the leg that paused on the interrupts ``entries`` answer: the
    ``parentRunId`` the resume's own leg named (``None`` when no leg of the run lists them)."""
    answered = {entry.interrupt_id for entry in entries}
    legs = [e for e in await agui_events(host.store, run_id) if isinstance(e, RunFinishedEvent)]
    for leg in reversed(legs):
        paused = leg.outcome if isinstance(leg.outcome, RunFinishedInterruptOutcome) else None
        if paused is not None and answered & {interrupt.id for interrupt in paused.interrupts}:
            return leg.run_id
    return None


async def _settled(host: WebHost, result: RunResult) -> RunResult:
    """``result`` once its run is no longer running: a replay that met the leg it replays
    still going waits for that leg's end (at most :data:`REPLAY_WAIT` seconds)."""
    with anyio.move_on_after(REPLAY_WAIT):
        while result.status is RunStatus.RUNNING:
            with host.feed.listening(result.run_id) as rung:  # before the read: nothing slips
                result = await host.runner.status(result.run_id)
                if result.status is RunStatus.RUNNING:
                    await rung.wait()
    return result


def as_it_stands(result: RunResult, run_input: RunAgentInput) -> BaseEvent:
    """The closing event of a leg-shaped answer for a run that did not move: where it
    stands now."""
    if result.status is RunStatus.RUNNING:
        message = (
            f"run {result.run_id} still runs the leg this resume replays after "
            f"{REPLAY_WAIT:g} s; replay the resume again later to see where it ends"
        )
        return RunErrorEvent(message=message, code="still_running")
    outcome: Outcome = _OUTCOMES.get(result.status, "error")
    error = result.error or f"the run is {result.status.value}"
    retry = f"pi-recipes runs retry {result.run_id}"
    if result.status is RunStatus.FAILED_RESUMABLE and retry not in error:
        error = f"{error}; retry it with: {retry}"
    return run_closed(
        result.thread_id, run_input.run_id, outcome, interrupts=result.interrupts,
        result=result.text or None, error=error,
    )  # fmt: skip
