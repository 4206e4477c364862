"""Where every leg of every run kind ends: one write, through :func:`close_leg`.

A driver (the recipe runner's, the graph engine's) works a leg, then hands its end here: the
status, the checkpoint (a :class:`~recipes.runs.drivers.RunEnvelope` closed by
:meth:`~recipes.runs.drivers.RunEnvelope.closing`), the pause's new interactions and the leg's
events go to the store in one ``update_run``; a run that ends closes what is still open with it. The
refusals of that write are decided here once: another writer moved the run first
(:func:`moved_error`), or the store cannot keep a value of the leg (the run is left
``failed_resumable``, to retry once the tool is fixed). A leg cut short, or a continuation
that failed before its leg recorded anything, is recorded by :func:`record_interrupted` and
:func:`record_failed_resumable`: a run is never left ``running`` with no one driving it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import anyio

from interactions import ConflictError, RunError, UsageError
from interactions.resume import RUN_ENDED
from interactions.store import (
    EventInput,
    NewInteraction,
    RunRecord,
    RunStatus,
    Store,
    is_terminal,
)

__all__ = [
    "INTERRUPT_WRITE_BOUND",
    "close_leg",
    "interrupted_message",
    "moved_error",
    "record_failed_resumable",
    "record_interrupted",
]

logger = logging.getLogger("recipes.runs")

INTERRUPT_WRITE_BOUND = 5.0
"""Seconds an interrupted leg may take to record that it was interrupted."""


async def close_leg(
    store: Store,
    run: RunRecord,
    *,
    status: RunStatus,
    checkpoint: Mapping[str, Any],
    error: str | None = None,
    new_interactions: Sequence[NewInteraction] = (),
    events: Sequence[EventInput] = (),
    may_leave_open: bool = False,
    stopped: str = "the agent was stopped and what it did in this leg was not recorded",
) -> RunRecord:
    """End a leg of ``run`` (as the leg last wrote it: its version guards the write) in one
    transaction: ``status``, ``checkpoint``, ``error``, the pause's ``new_interactions`` and
    ``events`` (the leg's, its ``leg_ended`` record last). A run that ends closes its questions
    no one answered (``RUN_ENDED``): those stored now, and with ``may_leave_open`` (a run whose
    agents post async questions, a workflow with parked branches) those stored before.

    Returns the run as written. Raises ``ConflictError`` (:func:`moved_error`, saying what the
    run is now and what was ``stopped``) when another writer moved the run first, and
    ``RunError`` (reason ``unstorable``) when the store cannot keep a value of the leg: the run
    is then left ``failed_resumable`` at the checkpoint before the leg.
    """
    ended = is_terminal(status)
    try:
        return await store.update_run(
            run.id,
            expected_version=run.version,
            status=status,
            checkpoint=checkpoint,
            error=error,
            new_interactions=new_interactions,
            answers={i.id: RUN_ENDED for i in new_interactions} if ended and new_interactions
            else None,
            close_open=RUN_ENDED if ended and may_leave_open else None,
            events=events,
        )  # fmt: skip
    except ConflictError as exc:
        if exc.reason != "version":
            raise
        raise await moved_error(store, run.id, stopped) from None
    except UsageError as exc:  # a value of the leg no store keeps: never leave it `running`
        raise await _unstorable(store, run, exc) from exc


async def record_failed_resumable(
    store: Store, run: RunRecord, message: str, *, events: Sequence[EventInput] = ()
) -> None:
    """Leave ``run`` ``failed_resumable`` with ``message`` at the version it was claimed at,
    shielded from a cancellation and bounded by ``INTERRUPT_WRITE_BOUND``: for a leg cut short
    or a continuation that failed before its leg recorded anything. When another writer moved
    the run first, what it recorded stands; when the store is gone too, ``runs recover`` finds
    the run later."""
    with anyio.CancelScope(shield=True), anyio.move_on_after(INTERRUPT_WRITE_BOUND):
        try:
            await store.update_run(
                run.id,
                expected_version=run.version,
                status=RunStatus.FAILED_RESUMABLE,
                error=message,
                events=events,
            )
        except ConflictError:
            logger.info("run %s moved on before it could be marked failed_resumable", run.id)
        except Exception:
            logger.exception("could not record that run %s stopped: %s", run.id, message)


def interrupted_message(run_id: str) -> str:
    """What a run whose leg was cut short says, and how to continue it."""
    return (
        "interrupted before the leg finished (Ctrl-C, SIGTERM or a stopped host); "
        f"continue it with: pi-recipes runs retry {run_id}"
    )


async def record_interrupted(
    store: Store, run: RunRecord, *, events: Sequence[EventInput] = ()
) -> None:
    """Record that a leg of ``run`` (as last written) was cut short by Ctrl-C, SIGTERM or a
    stopping host: ``failed_resumable``, saying so and how to continue it, with the checkpoint
    as last written (a retry does the rest of the leg again). A driver calls it when its leg
    gets a ``BaseException`` that is not an ``Exception``, then re-raises: a run is never left
    ``running`` with no one driving it. Shielded and bounded as
    :func:`record_failed_resumable` is."""
    await record_failed_resumable(store, run, interrupted_message(run.id), events=events)


async def _unstorable(store: Store, run: RunRecord, refusal: UsageError) -> RunError:
    """Record that the store refused where the leg ended (a tool's result or a model's output
    holds a value no store keeps: text that is not valid Unicode, details that are not JSON):
    ``failed_resumable`` at the checkpoint before the leg, so a retry, once the tool is fixed,
    does the leg again. Return the error to raise."""
    message = (
        f"could not store where the run's leg ended: {refusal} (in a tool's result, an ask "
        "or the model's output); fix the tool, then retry the leg"
    )
    await record_failed_resumable(store, run, message)
    return RunError(
        message,
        run_id=run.id,
        reason="unstorable",
        hint=f"retry it with: pi-recipes runs retry {run.id}",
    )


async def moved_error(
    store: Store,
    run_id: str,
    stopped: str = "the agent was stopped and what it did in this leg was not recorded",
) -> ConflictError:
    """The error for a leg whose run another writer moved meanwhile: what the run is now
    (reason ``run_cancelled`` for a cancelled run, ``version`` otherwise), then ``stopped``
    (what the leg stopped and did not record), and for a ``failed_resumable`` run the command
    that retries it. Raise it: the run stays as the other writer left it."""
    run = await store.get_run(run_id)
    reason = "run_cancelled" if run.status is RunStatus.CANCELLED else "version"
    if run.status is RunStatus.CANCELLED:
        what = "was cancelled"
    elif run.status is RunStatus.RUNNING:
        what = "is being run by another process"
    else:
        what = f"was marked {run.status.value} ({run.error or 'by another writer'})"
    message = f"run {run_id} {what} while this process ran it; {stopped}"
    if run.status is RunStatus.FAILED_RESUMABLE:
        message += f"; retry it with: pi-recipes runs retry {run_id}"
    return ConflictError(message, run_id=run_id, reason=reason)
