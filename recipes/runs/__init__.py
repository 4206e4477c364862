"""Durable runs: pause on an interrupt, store the run, resume it anywhere.

Use a :class:`Runner` over a store (``interactions.store``), or the one-call helpers below,
which open the embedded SQLite store (``.pi-recipes/state.db`` unless ``store=`` is given).
A host brings a :class:`Surface` to a leg (a person's UI, its channels, a live AG-UI event
sink). A store that is an engine (Temporal's) drives its runs itself;
:func:`runner_for` gives the runner of any store's runs. Runs of other kinds (a workflow, say)
are continued by the :class:`RunDriver` registered for their kind; a driver stops a leg whose
run another writer cancels with :func:`watch_run`, as the recipe runner does, and says so with
:func:`moved_error`; a leg cut short by Ctrl-C or SIGTERM is recorded with
:func:`record_interrupted`. The runner's decisions are pure functions in
:mod:`recipes.runs.planning`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from interactions.resume import RUN_ENDED
from interactions.store import DEFAULT_STORE_PATH, Store, open_sqlite_store
from recipes.models._base import Model
from recipes.runs._async import BRANCH_AWAIT_ERROR, LegWrites, RunAsyncQuestions, RunWrites
from recipes.runs._auto_retry import (
    AUTO_RESUME_KEY,
    RETRY_SCHEDULED,
    RETRY_SKIPPED,
    RetrySchedule,
    retry_schedule_of,
)
from recipes.runs._checkpoint import (
    LEG_ENDED,
    AwaitingRef,
    Checkpoint,
    ExpiryPolicy,
    LegRecord,
    PausedCalls,
    message_id,
    new_run_id,
)
from recipes.runs._close import close_leg, moved_error, record_interrupted
from recipes.runs._drivers import (
    DRIVER_ENTRY_POINTS,
    RunDriver,
    RunView,
    driver_for,
    register_driver,
)
from recipes.runs._engines import ENGINE_ENV, RunEngine, runner_for
from recipes.runs._envelope import LegIds, RunEnvelope
from recipes.runs._history import agui_events, leg_agui_events
from recipes.runs._leg import agui_run_id, drive_leg
from recipes.runs._plan import RESUMABLE_ERROR_CLASSES
from recipes.runs._protocol import Runs
from recipes.runs._recipe_driver import RecipeDriver
from recipes.runs._results import AnswerResult, Claim, EventSink, RunResult, Surface
from recipes.runs._runner import Runner
from recipes.runs._watch import watch_run

if TYPE_CHECKING:
    from ag_ui.core import ResumeEntry

T = TypeVar("T")

__all__ = [
    "AUTO_RESUME_KEY",
    "BRANCH_AWAIT_ERROR",
    "DRIVER_ENTRY_POINTS",
    "ENGINE_ENV",
    "LEG_ENDED",
    "RESUMABLE_ERROR_CLASSES",
    "RETRY_SCHEDULED",
    "RETRY_SKIPPED",
    "RUN_ENDED",
    "AnswerResult",
    "AwaitingRef",
    "Checkpoint",
    "Claim",
    "EventSink",
    "ExpiryPolicy",
    "LegIds",
    "LegRecord",
    "LegWrites",
    "PausedCalls",
    "RecipeDriver",
    "RetrySchedule",
    "RunAsyncQuestions",
    "RunDriver",
    "RunEngine",
    "RunEnvelope",
    "RunResult",
    "RunView",
    "RunWrites",
    "Runner",
    "Runs",
    "Surface",
    "agui_events",
    "agui_run_id",
    "answer",
    "close_leg",
    "drive_leg",
    "driver_for",
    "event_json",
    "leg_agui_events",
    "message_id",
    "moved_error",
    "new_run_id",
    "record_interrupted",
    "register_driver",
    "resume",
    "retry_schedule_of",
    "runner_for",
    "start_run",
    "watch_run",
]


def event_json(event: Any) -> dict[str, Any]:
    """An AG-UI event as its wire JSON (camelCase; the pause records' own fields kept)."""
    from recipes.runs._agui import event_json as dump

    return dump(event)


async def _with_store(store: Store | None, work: Callable[[Store], Awaitable[T]]) -> T:
    """Run ``work`` on ``store``, or on the embedded SQLite store opened for the call."""
    if store is not None:
        return await work(store)
    async with await open_sqlite_store(DEFAULT_STORE_PATH) as opened:
        return await work(opened)


async def start_run(
    recipe_ref: str,
    input: str,
    agent: str | None = None,
    model: Model | str | None = None,
    store: Store | None = None,
) -> str:
    """Start a durable run and drive it until it finishes or pauses; return its id."""

    async def work(s: Store) -> str:
        result = await Runner(s).start(recipe_ref, input, agent=agent, model=model)
        return result.run_id

    return await _with_store(store, work)


async def resume(
    run_id: str, entries: Sequence[ResumeEntry], store: Store | None = None
) -> RunResult:
    """Resume a paused run with one entry per open interrupt (see :meth:`Runner.resume`)."""

    async def work(s: Store) -> RunResult:
        return await Runner(s).resume(run_id, entries)

    return await _with_store(store, work)


async def answer(
    run_id: str,
    interaction_id: str,
    payload: Any,
    answered_by: str | None = None,
    *,
    resume: bool = False,
    store: Store | None = None,
) -> AnswerResult:
    """Answer one interaction (see :meth:`Runner.answer`)."""

    async def work(s: Store) -> AnswerResult:
        return await Runner(s).answer(
            run_id, interaction_id, payload, answered_by=answered_by, resume=resume
        )

    return await _with_store(store, work)
