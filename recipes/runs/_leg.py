"""One leg of a recipe run: drive the session until it stops, then write down where it stopped."""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from dataclasses import replace

import anyio
from ag_ui.core import BaseEvent, RunErrorEvent

from interactions import RunError
from interactions.store import RunRecord, RunStatus, Store
from recipes.events import AgentEvent
from recipes.runs._agui import AguiTranslator, coalesce, event_record
from recipes.runs._checkpoint import Checkpoint
from recipes.runs._plan import checkpoint_paused, last_text, leg_end, new_interaction
from recipes.runs._results import RunResult, Surface
from recipes.session import AgentSession

__all__ = ["agui_run_id", "drive_leg"]

logger = logging.getLogger("recipes.runs")


INTERRUPT_WRITE_BOUND = 5.0
"""Seconds an interrupted leg may take to record that it was interrupted."""


async def _interrupted(store: Store, run: RunRecord) -> None:
    """Record that the leg was cut short: ``failed_resumable``, the checkpoint as it was before
    the leg (a retry does the leg again), shielded from the cancellation and bounded."""
    message = (
        "interrupted before the leg finished (Ctrl-C, SIGTERM or a stopped host); "
        f"continue it with: pi-recipes runs retry {run.id}"
    )
    with anyio.CancelScope(shield=True), anyio.move_on_after(INTERRUPT_WRITE_BOUND):
        try:
            await store.update_run(
                run.id,
                expected_version=run.version,
                status=RunStatus.FAILED_RESUMABLE,
                error=message,
                events=[event_record(RunErrorEvent(message=message, code="interrupted"))],
            )
        except Exception:  # the store is gone too: `runs recover` finds the run later
            logger.exception("could not record that run %s was interrupted", run.id)


def agui_run_id(run: RunRecord, leg: int) -> str:
    """The default AG-UI run id of a run's ``leg`` (from 1): the run's id, then ``<id>.<n>``."""
    return run.id if leg <= 1 else f"{run.id}.{leg}"


class _Sink:
    """A leg's AG-UI events: kept for the store, handed live to the host's sink."""

    def __init__(self, surface: Surface) -> None:
        self.kept: list[BaseEvent] = []
        self._live = surface.on_event

    def add(self, *events: BaseEvent) -> None:
        self.kept.extend(events)
        self.tell(*events)

    def tell(self, *events: BaseEvent) -> None:
        if self._live is None:
            return
        for event in events:
            try:
                self._live(event)
            except Exception:
                logger.exception("a live event sink failed on %s", event.type)


async def drive_leg(
    store: Store,
    run: RunRecord,
    session: AgentSession,
    checkpoint: Checkpoint,
    leg: Awaitable[None],
    surface: Surface,
) -> RunResult:
    """Await ``leg`` (a prompt, a resume or a retry of ``session``) and write where it ended.

    One ``update_run`` records the status (finished, paused with its interactions, cancelled,
    failed or failed_resumable), the checkpoint and the leg's AG-UI events (text coalesced).
    The host's live sink gets every event as it happens, the closing one once it is stored.
    A failure is recorded, then re-raised with the run's id set on it.
    """
    number = checkpoint.leg + 1
    agui_id = surface.agui_run_id or agui_run_id(run, number)
    translator = AguiTranslator(
        thread_id=run.thread_id, run_id=agui_id, parent_run_id=checkpoint.agui_run_id
    )
    sink = _Sink(surface)
    sink.add(translator.run_started())

    def on_event(event: AgentEvent) -> None:
        sink.add(*translator.translate(event))

    unsubscribe = session.on_event(on_event)
    error: BaseException | None = None
    try:
        await leg
    except Exception as exc:  # a model failure: recorded on the run, then re-raised
        error = exc
    except BaseException:  # Ctrl-C, SIGTERM, a host stopping: the leg did not finish
        await _interrupted(store, run)
        raise
    finally:
        unsubscribe()
    end = leg_end(session.status, session.paused, error, continuing=checkpoint.leg > 0)
    failed = end.status in (RunStatus.FAILED, RunStatus.FAILED_RESUMABLE)
    if failed and checkpoint.retries > 1 and end.error is not None:
        end = replace(
            end,
            error=f"{end.error} (the same run failed {checkpoint.retries} retries in a row: it "
            "may need a fix, a key or a model, more than another retry)",
        )
    if end.error is not None:
        closing: BaseEvent = translator.error(end.error, code=end.error_code)
    elif end.interrupts:
        closing = translator.interrupted(end.interrupts)
    elif end.status.value == "cancelled":
        closing = translator.cancelled()
    else:
        closing = translator.finished(result=last_text(session.messages) or None)
    checkpoint = checkpoint.model_copy(
        update={
            "messages": session.messages,
            "paused": checkpoint_paused(session.paused),
            "leg": number,
            "agui_run_id": agui_id,
            "retries": checkpoint.retries if failed else 0,
        }
    )
    run = await store.update_run(
        run.id,
        expected_version=run.version,
        status=end.status,
        checkpoint=checkpoint.dump(),
        error=end.error,
        new_interactions=[new_interaction(i) for i in end.interrupts],
        events=[event_record(e) for e in coalesce([*sink.kept, closing])],
    )
    sink.tell(closing)
    if error is not None:
        if isinstance(error, RunError):
            error.run_id = error.run_id or run.id
            if run.status is RunStatus.FAILED_RESUMABLE:
                error.hint = f"retry it with: pi-recipes runs retry {run.id}"
        raise error
    return RunResult(
        run_id=run.id,
        thread_id=run.thread_id,
        kind=run.kind,
        status=run.status,
        interrupts=end.interrupts,
        text=last_text(session.messages),
        error=run.error,
        agui_run_id=agui_id,
    )
