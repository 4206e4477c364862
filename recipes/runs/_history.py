"""A run's AG-UI events, rebuilt from what the store keeps: the transcript in the checkpoint,
one ``leg_ended`` record per leg, and the pause records of its interactions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from interactions.store import EventRecord, InteractionRecord, RunRecord, Store
from recipes.runs._checkpoint import LEG_ENDED, Checkpoint, LegRecord

if TYPE_CHECKING:
    from ag_ui.core import BaseEvent

__all__ = ["agui_events", "leg_agui_events"]


def _rebuild(
    run: RunRecord, leg: LegRecord, records: dict[str, InteractionRecord]
) -> list[BaseEvent]:
    from recipes.runs._agui import leg_events  # ag-ui's models load only when asked for

    messages = Checkpoint.model_validate(run.checkpoint).messages  # append-only: spans hold
    paused_on = [records[i].interrupt for i in leg.interrupts if i in records]
    return leg_events(run.thread_id, leg, messages, paused_on)


async def leg_agui_events(store: Store, event: EventRecord) -> list[BaseEvent]:
    """The AG-UI events of the leg a ``leg_ended`` store event closed (``[]`` for any other
    event): what a host following ``store.watch`` shows of a run it did not drive."""
    if event.type != LEG_ENDED:
        return []
    run = await store.get_run(event.run_id)
    records = {r.id: r for r in await store.list_interactions(event.run_id)}
    return _rebuild(run, LegRecord.model_validate(event.data), records)


async def agui_events(store: Store, run_id: str) -> list[BaseEvent]:
    """Every AG-UI event of a recipe run, leg after leg, as its live sinks saw them (text as one
    content event per message). Raises ``UnknownRunError``."""
    run = await store.get_run(run_id)
    records = {r.id: r for r in await store.list_interactions(run_id)}
    out: list[BaseEvent] = []
    for event in await store.list_events(run_id):
        if event.type == LEG_ENDED:
            out += _rebuild(run, LegRecord.model_validate(event.data), records)
    return out
