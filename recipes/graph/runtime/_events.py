"""A leg's events: Iterion's vocabulary for the store, AG-UI for the live sink and the leg record.

Graph events (``node_started``, ``node_finished``, ``node_failed``, ``human_input_requested``,
``run_paused``, ``run_resumed``, ``run_finished``, ``run_failed``, ``join_ready``, and those of
fallback routes and retries: ``model_fallback``, ``fallback_when_failed``,
``run_retry_scheduled``, ``run_retry_skipped``, ``vars_injected``) are stored
under their own names, with the next state change (or appended on their own), and reach the
host's live sink as AG-UI ``CUSTOM`` events of that name. Every AG-UI event of the leg (its
frame, the agent nodes' text and tool calls, those ``CUSTOM`` events) is told live as it
happens, and stored once, when the leg ends, in its ``leg_ended`` record (text coalesced):
:meth:`GraphDriver.leg_events` hands them to hosts that did not drive the leg.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from ag_ui.core import BaseEvent, CustomEvent, TextMessageContentEvent, ToolCallArgsEvent

from interactions.store import EventInput
from recipes.runs import EventSink
from recipes.runs.agui import LEG_ENDED, event_from_json, event_json

__all__ = ["GRAPH_EVENTS", "LegEvents", "leg_record_events"]

logger = logging.getLogger("recipes.graph")

GRAPH_EVENTS = (
    "node_started", "node_finished", "node_failed", "human_input_requested", "run_paused",
    "run_resumed", "run_finished", "run_failed", "run_cancelled", "join_ready",
    "model_fallback", "fallback_when_failed", "run_retry_scheduled", "run_retry_skipped",
    "vars_injected",
)  # fmt: skip


def _coalesced(events: Sequence[BaseEvent]) -> list[BaseEvent]:
    """``events`` with each run of text (or tool-argument) deltas of one message (or call)
    joined into one event."""
    out: list[BaseEvent] = []
    for event in events:
        last = out[-1] if out else None
        if (
            isinstance(event, TextMessageContentEvent)
            and isinstance(last, TextMessageContentEvent)
            and last.message_id == event.message_id
        ) or (
            isinstance(event, ToolCallArgsEvent)
            and isinstance(last, ToolCallArgsEvent)
            and last.tool_call_id == event.tool_call_id
        ):
            out[-1] = last.model_copy(update={"delta": last.delta + event.delta})
        else:
            out.append(event)
    return out


def leg_record_events(data: Mapping[str, Any]) -> list[BaseEvent]:
    """The AG-UI events a graph leg's ``leg_ended`` record keeps."""
    return [event_from_json(e) for e in data.get("events", [])]


class LegEvents:
    """The events of one leg: graph events waiting to be written, in order; the leg's AG-UI
    events kept for its record; the live sink told at once."""

    def __init__(self, live: EventSink | None) -> None:
        self._live = live
        self._queue: list[EventInput] = []
        self._leg: list[BaseEvent] = []

    def agui(self, *events: BaseEvent) -> None:
        """AG-UI events: kept for the leg's record, told live."""
        self._leg.extend(events)
        self.tell(*events)

    def graph(self, type_: str, data: dict[str, Any]) -> None:
        """A graph event: written with the next write, told live as a ``CUSTOM`` event."""
        self._queue.append((type_, data))
        self.agui(CustomEvent(name=type_, value=data))

    def end(self, closing: BaseEvent, agui_run_id: str) -> None:
        """Queue the leg's ``leg_ended`` record, ``closing`` last (told live once stored)."""
        events = [event_json(e) for e in _coalesced([*self._leg, closing])]
        self._queue.append((LEG_ENDED, {"run": agui_run_id, "events": events}))
        self._leg = []

    def tell(self, *events: BaseEvent) -> None:
        """Tell the live sink only."""
        if self._live is None:
            return
        for event in events:
            try:
                self._live(event)
            except Exception:
                logger.exception("a live event sink failed on %s", event.type)

    def take(self) -> list[EventInput]:
        """The events to write now, emptying the queue."""
        out, self._queue = self._queue, []
        return out
