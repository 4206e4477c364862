"""Durable runs, for hosts: start, answer, resume and continue runs on any store or engine.

A host holds :class:`Runs` — the :class:`Runner` over a store (SQLite, PostgreSQL), or an
engine's own (Temporal's): :func:`runner_for` gives the one a store's runs need, and the host
never learns which. It turns a person's action into one call and hands what comes back to a
worker: :meth:`Runs.answer` with ``claim=True`` stores an answer and, when it was the last a
paused run waited for, claims the run in the same write (a :class:`Claim`, continued with
:meth:`Runs.proceed`); of several processes, exactly one claims a run. A host brings a
:class:`Surface` to each leg (a person's UI, its channels, a live AG-UI sink); results are
:class:`RunResult` and :class:`AnswerResult`. The one-call helpers below open the embedded
SQLite store (``.pi-recipes/state.db`` unless ``store=`` is given).

Beside this tier: :mod:`recipes.runs.agui` (a run's AG-UI events, live and rebuilt),
:mod:`recipes.runs.drivers` (what a run driver or an engine is built from: the driver
registry, the checkpoint envelope, the one leg closer) and :mod:`recipes.runs.planning` (the
runner's decisions as pure functions).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from interactions.store import DEFAULT_STORE_PATH, Store, open_sqlite_store
from recipes.models._base import Model
from recipes.runs._checkpoint import new_run_id
from recipes.runs._drivers import RunView
from recipes.runs._engines import ENGINE_ENV, runner_for
from recipes.runs._envelope import ExpiryPolicy
from recipes.runs._protocol import Runs
from recipes.runs._results import AnswerResult, Claim, EventSink, RunResult, Surface
from recipes.runs._runner import Runner

if TYPE_CHECKING:
    from ag_ui.core import ResumeEntry

T = TypeVar("T")

__all__ = [
    "ENGINE_ENV",
    "AnswerResult",
    "Claim",
    "EventSink",
    "ExpiryPolicy",
    "RunResult",
    "RunView",
    "Runner",
    "Runs",
    "Surface",
    "answer",
    "new_run_id",
    "resume",
    "runner_for",
    "start_run",
]


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
