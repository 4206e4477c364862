"""A run's AG-UI events, rebuilt from what the store keeps: the transcript in the checkpoint,
one ``leg_ended`` record per leg, and the pause records of its interactions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from interactions.store import Store
from recipes.runs._checkpoint import LEG_ENDED, Checkpoint, LegRecord

if TYPE_CHECKING:
    from ag_ui.core import BaseEvent

__all__ = ["agui_events"]


async def agui_events(store: Store, run_id: str) -> list[BaseEvent]:
    """Every AG-UI event of a recipe run, leg after leg, as its live sinks saw them (text as one
    content event per message). Raises ``UnknownRunError``."""
    from recipes.runs._agui import leg_events

    run = await store.get_run(run_id)
    checkpoint = Checkpoint.model_validate(run.checkpoint)
    records = {r.id: r for r in await store.list_interactions(run_id)}
    out: list[BaseEvent] = []
    for event in await store.list_events(run_id):
        if event.type != LEG_ENDED:
            continue
        leg = LegRecord.model_validate(event.data)
        paused_on = [records[i].interrupt for i in leg.interrupts if i in records]
        out += leg_events(run.thread_id, leg, checkpoint.messages, paused_on)
    return out
