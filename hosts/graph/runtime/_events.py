"""A leg's events: Iterion's vocabulary for the store, AG-UI for the live sink.

Graph events (``node_started``, ``node_finished``, ``node_failed``, ``human_input_requested``,
``run_paused``, ``run_resumed``, ``run_finished``, ``run_failed``, ``join_ready``) are stored
under their own names and reach the host's live sink as AG-UI ``CUSTOM`` events of that name.
The agent nodes' AG-UI events (text, tool calls) and the leg's frame (``RUN_STARTED``,
``RUN_FINISHED``/``RUN_ERROR``) are stored too, text coalesced, and streamed live as they happen.
Everything is written in order, with the next state change (or appended on its own).
"""

from __future__ import annotations

import logging
from typing import Any

from ag_ui.core import BaseEvent, CustomEvent

from interactions.store import EventInput
from recipes.runs import EventSink, coalesce, event_record

__all__ = ["GRAPH_EVENTS", "LegEvents"]

logger = logging.getLogger("hosts.graph")

GRAPH_EVENTS = (
    "node_started", "node_finished", "node_failed", "human_input_requested", "run_paused",
    "run_resumed", "run_finished", "run_failed", "run_cancelled", "join_ready",
)  # fmt: skip


class LegEvents:
    """Events of one leg waiting to be written, in order; the live sink told at once."""

    def __init__(self, live: EventSink | None) -> None:
        self._live = live
        self._queue: list[BaseEvent | EventInput] = []

    def agui(self, *events: BaseEvent) -> None:
        """AG-UI events: kept for the store, told live."""
        self._queue.extend(events)
        self.tell(*events)

    def graph(self, type_: str, data: dict[str, Any]) -> None:
        """A graph event: kept for the store, told live as a ``CUSTOM`` event."""
        self._queue.append((type_, data))
        self.tell(CustomEvent(name=type_, value=data))

    def keep(self, event: BaseEvent) -> None:
        """An event for the store only (a closing event: told live once it is stored)."""
        self._queue.append(event)

    def tell(self, *events: BaseEvent) -> None:
        """Tell the live sink only (a closing event, once it is stored)."""
        if self._live is None:
            return
        for event in events:
            try:
                self._live(event)
            except Exception:
                logger.exception("a live event sink failed on %s", event.type)

    def take(self) -> list[EventInput]:
        """The events to write now (AG-UI text coalesced), emptying the queue."""
        out: list[EventInput] = []
        run: list[BaseEvent] = []
        for item in self._queue:
            if isinstance(item, BaseEvent):
                run.append(item)
                continue
            out += [event_record(e) for e in coalesce(run)]
            run = []
            out.append(item)
        out += [event_record(e) for e in coalesce(run)]
        self._queue = []
        return out
