"""A run's AG-UI events, from what the store keeps: one ``leg_ended`` event per leg, which the
driver of the run's kind turns back into the leg's events (a recipe run's are rebuilt from the
transcript in its checkpoint and the pause records of its interactions). A run cancelled while
no leg of it ran to an end of its own (paused, or its leg stopped by the cancel, which records
nothing) ends with an AG-UI run of its own that finishes ``cancelled``, continuing the last
leg: what a live stream of the stopped leg ended with, and no interrupt left open to a client
replaying the thread."""

from __future__ import annotations

from typing import TYPE_CHECKING

from interactions.store import EventRecord, RunRecord, RunStatus, Store
from recipes.runs._checkpoint import LEG_ENDED, default_agui_run_id
from recipes.runs._drivers import driver_for

if TYPE_CHECKING:
    from ag_ui.core import BaseEvent

__all__ = ["agui_events", "leg_agui_events"]


async def leg_agui_events(store: Store, event: EventRecord) -> list[BaseEvent]:
    """The AG-UI events of the leg a ``leg_ended`` store event closed (``[]`` for any other
    event): what a host following ``store.watch`` shows of a run it did not drive. Raises
    ``UsageError`` when no driver of the run's kind is installed."""
    if event.type != LEG_ENDED:
        return []
    run, interactions = await store.get_run_with_interactions(event.run_id)
    return driver_for(run.kind).leg_events(run, event, {r.id: r for r in interactions})


async def agui_events(store: Store, run_id: str) -> list[BaseEvent]:
    """Every AG-UI event of a run, leg after leg, as its live sinks saw them (text may come as
    one content event per message). Raises ``UnknownRunError``, and ``UsageError`` when no
    driver of the run's kind is installed."""
    run = await store.get_run(run_id)
    legs = [e for e in await store.list_events(run_id) if e.type == LEG_ENDED]
    out: list[BaseEvent] = []
    if legs:
        driver = driver_for(run.kind)
        records = {r.id: r for r in await store.list_interactions(run_id)}
        for leg in legs:
            out += driver.leg_events(run, leg, records)
    if run.status is RunStatus.CANCELLED:
        out += _cancelled(run, out, len(legs))
    return out


def _cancelled(run: RunRecord, events: list[BaseEvent], legs: int) -> list[BaseEvent]:
    """The AG-UI run that ends a run cancelled after its ``legs`` recorded ``events``: it
    continues the last of them (``[]`` when that one ended cancelled already)."""
    from ag_ui.core import EventType, RunFinishedEvent

    from recipes.runs._agui import run_closed, run_started

    last = events[-1] if events else None
    if isinstance(last, RunFinishedEvent) and last.outcome and last.outcome.type == "cancelled":
        return []
    starts = [e for e in events if e.type is EventType.RUN_STARTED]
    parent = getattr(starts[-1], "run_id", None) if starts else None
    agui_id = default_agui_run_id(run.id, legs + 1)
    return [
        run_started(run.thread_id, agui_id, parent),
        run_closed(run.thread_id, agui_id, "cancelled"),
    ]
