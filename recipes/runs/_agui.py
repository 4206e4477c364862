"""AG-UI events of a run, built from the ``ag-ui-protocol`` models.

:class:`AguiTranslator` turns the agent session's events into AG-UI events: text messages
(start on the first text, content per delta, end), tool calls (start, args, end when the
assistant message is complete; a result when its result is appended) and the run's frame
(``RUN_STARTED``, ``RUN_FINISHED`` with outcome ``success``/``interrupt``/``cancelled``,
``RUN_ERROR``). A paused call gets no result until the resume appends it, under its original
tool call id, without a second start. Each leg of a run (a start, then each resume) is its own
AG-UI run; a resume names the paused leg as its ``parentRunId``. A ``RUN_FINISHED`` interrupt
outcome carries the whole pause records (options, selection, display, expiry).

:func:`coalesce` joins a leg's streamed text into one content event per message (in bounded
chunks) for the store; live listeners get every delta as it comes.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from ag_ui.core import (
    BaseEvent,
    Interrupt,
    RunErrorEvent,
    RunFinishedCancelledOutcome,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedSuccessOutcome,
    RunStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)

from recipes._events import AgentEvent, MessageEnd, MessageStart, MessageUpdate
from recipes.messages import AssistantMessage, ToolResultMessage, text_of
from recipes.models._base import TextDelta

__all__ = ["CHUNK_CHARS", "AguiTranslator", "coalesce", "event_json", "event_record"]

CHUNK_CHARS = 64 * 1024
"""The most characters one stored content event holds; longer text is split across several."""


def event_json(event: BaseEvent) -> dict[str, Any]:
    """An AG-UI event as its wire JSON (camelCase; a subclass's own fields kept)."""
    return event.model_dump(mode="json", by_alias=True, exclude_none=True, serialize_as_any=True)


def event_record(event: BaseEvent) -> tuple[str, dict[str, Any]]:
    """An AG-UI event as a store event: its ``type`` and its wire JSON."""
    data = event_json(event)
    return str(data["type"]), data


def coalesce(events: Iterable[BaseEvent]) -> list[BaseEvent]:
    """``events`` with each run of content deltas of one message (or of one tool call's
    arguments) joined, at most :data:`CHUNK_CHARS` per event."""
    out: list[BaseEvent] = []
    for event in events:
        last = out[-1] if out else None
        if (
            isinstance(event, TextMessageContentEvent)
            and isinstance(last, TextMessageContentEvent)
            and last.message_id == event.message_id
            and len(last.delta) + len(event.delta) <= CHUNK_CHARS
        ):
            out[-1] = last.model_copy(update={"delta": last.delta + event.delta})
        else:
            out.append(event)
    return out


class AguiTranslator:
    """Translates one leg of a run (a start or a resume) into AG-UI events.

    ``run_id`` is the leg's AG-UI run id; ``parent_run_id`` the leg it continues, if any.
    """

    def __init__(self, *, thread_id: str, run_id: str, parent_run_id: str | None = None) -> None:
        self.thread_id = thread_id
        self.run_id = run_id
        self.parent_run_id = parent_run_id
        self._message_id: str | None = None
        self._text_open = False

    def run_started(self) -> RunStartedEvent:
        return RunStartedEvent(
            thread_id=self.thread_id, run_id=self.run_id, parent_run_id=self.parent_run_id
        )

    def translate(self, event: AgentEvent) -> list[BaseEvent]:
        """The AG-UI events that one agent event stands for (often none)."""
        if isinstance(event, MessageStart) and isinstance(event.message, AssistantMessage):
            self._message_id = f"msg-{uuid.uuid4().hex}"
            self._text_open = False
            return []
        if isinstance(event, MessageUpdate) and isinstance(event.delta, TextDelta):
            return self._text(event.delta.delta)
        if isinstance(event, MessageEnd):
            if isinstance(event.message, AssistantMessage):
                return self._assistant_end(event.message)
            if isinstance(event.message, ToolResultMessage):
                return [self.tool_result(event.message)]
        return []

    def _text(self, delta: str) -> list[BaseEvent]:
        if not delta or self._message_id is None:
            return []
        out: list[BaseEvent] = []
        if not self._text_open:
            self._text_open = True
            out.append(TextMessageStartEvent(message_id=self._message_id, role="assistant"))
        out.append(TextMessageContentEvent(message_id=self._message_id, delta=delta))
        return out

    def _assistant_end(self, message: AssistantMessage) -> list[BaseEvent]:
        message_id = self._message_id or f"msg-{uuid.uuid4().hex}"
        out: list[BaseEvent] = []
        if not self._text_open and message.text:
            self._message_id = message_id
            out += self._text(message.text)
        if self._text_open:
            out.append(TextMessageEndEvent(message_id=message_id))
        for call in message.tool_calls:
            out.append(
                ToolCallStartEvent(
                    tool_call_id=call.id, tool_call_name=call.name, parent_message_id=message_id
                )
            )
            args = call.invalid_arguments or json.dumps(call.arguments, ensure_ascii=False)
            out.append(ToolCallArgsEvent(tool_call_id=call.id, delta=args))
            out.append(ToolCallEndEvent(tool_call_id=call.id))
        self._message_id, self._text_open = None, False
        return out

    def tool_result(self, message: ToolResultMessage) -> ToolCallResultEvent:
        """The result of one tool call, under its original id."""
        return ToolCallResultEvent(
            message_id=f"msg-{uuid.uuid4().hex}",
            tool_call_id=message.tool_call_id,
            content=text_of(message.content),
            role="tool",
        )

    def finished(self, *, result: Any = None) -> RunFinishedEvent:
        return RunFinishedEvent(
            thread_id=self.thread_id,
            run_id=self.run_id,
            result=result,
            outcome=RunFinishedSuccessOutcome(),
        )

    def interrupted(self, interrupts: Sequence[Interrupt]) -> RunFinishedEvent:
        return RunFinishedEvent(
            thread_id=self.thread_id,
            run_id=self.run_id,
            outcome=RunFinishedInterruptOutcome(interrupts=list(interrupts)),
        )

    def cancelled(self) -> RunFinishedEvent:
        return RunFinishedEvent(
            thread_id=self.thread_id, run_id=self.run_id, outcome=RunFinishedCancelledOutcome()
        )

    def error(self, message: str, code: str | None = None) -> RunErrorEvent:
        return RunErrorEvent(message=message, code=code)
