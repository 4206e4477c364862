"""A run's AG-UI events, from what the store keeps: one ``leg_ended`` event per leg, which the
driver of the run's kind turns back into the leg's events (a recipe run's are rebuilt from the
transcript in its checkpoint and the pause records of its interactions)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from interactions.store import EventRecord, Store
from recipes.runs._checkpoint import LEG_ENDED
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
    run = await store.get_run(event.run_id)
    records = {r.id: r for r in await store.list_interactions(event.run_id)}
    return driver_for(run.kind).leg_events(run, event, records)


async def agui_events(store: Store, run_id: str) -> list[BaseEvent]:
    """Every AG-UI event of a run, leg after leg, as its live sinks saw them (text may come as
    one content event per message). Raises ``UnknownRunError``, and ``UsageError`` when no
    driver of the run's kind is installed."""
    run = await store.get_run(run_id)
    legs = [e for e in await store.list_events(run_id) if e.type == LEG_ENDED]
    if not legs:
        return []
    driver = driver_for(run.kind)
    records = {r.id: r for r in await store.list_interactions(run_id)}
    out: list[BaseEvent] = []
    for leg in legs:
        out += driver.leg_events(run, leg, records)
    return out
