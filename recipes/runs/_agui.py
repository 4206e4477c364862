"""AG-UI events of a run, built from the ``ag-ui-protocol`` models.

A leg of a run (a start, then each resume or retry) is one AG-UI run. Its events are a function
of what the leg added to the transcript and of how it ended, so the store keeps no copy of them:
the checkpoint holds the transcript, and each leg leaves one small ``leg_ended`` record
(:class:`LegRecord`: its AG-UI run id and parent, the span of the transcript it added, how it
ended). :func:`agui_events` rebuilds a run's events from those; :class:`LegTranslator` makes the
same events live, as the session's events come, for a host's sink. Both give the same events
with the same ids (a message's id is ``<agui run id>.m<its index in the transcript>``), but for
text: live, one content event per delta; rebuilt, one per message.

The frame: ``RUN_STARTED`` (a resume names the paused leg as ``parentRunId``), text messages,
tool calls (start, args, end when the assistant message is complete; a result when its result is
appended: a paused call's result comes in a later leg, under its original id), then
``RUN_FINISHED`` (``success`` with the last text, ``interrupt`` with the whole pause records,
``cancelled``) or ``RUN_ERROR``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from ag_ui.core import (
    BaseEvent,
    Event,
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
from pydantic import TypeAdapter

from interactions import AskUserInterrupt
from recipes._events import AgentEvent, MessageEnd, MessageStart, MessageUpdate
from recipes.messages import AssistantMessage, Message, ToolResultMessage, text_of
from recipes.models._base import TextDelta
from recipes.runs._checkpoint import LegRecord, message_id

__all__ = [
    "LegTranslator",
    "Outcome",
    "closing_event",
    "event_from_json",
    "event_json",
    "leg_events",
    "run_closed",
    "run_started",
]

_EVENT: TypeAdapter[Any] = TypeAdapter(Event)


def event_json(event: BaseEvent) -> dict[str, Any]:
    """An AG-UI event as its wire JSON (camelCase; a subclass's own fields kept)."""
    return event.model_dump(mode="json", by_alias=True, exclude_none=True, serialize_as_any=True)


def _text_events(mid: str, text: str) -> list[BaseEvent]:
    return [
        TextMessageStartEvent(message_id=mid, role="assistant"),
        TextMessageContentEvent(message_id=mid, delta=text),
        TextMessageEndEvent(message_id=mid),
    ]


def _tool_call_events(mid: str, message: AssistantMessage) -> list[BaseEvent]:
    out: list[BaseEvent] = []
    for call in message.tool_calls:
        out.append(
            ToolCallStartEvent(
                tool_call_id=call.id, tool_call_name=call.name, parent_message_id=mid
            )
        )
        args = call.invalid_arguments or json.dumps(call.arguments, ensure_ascii=False)
        out.append(ToolCallArgsEvent(tool_call_id=call.id, delta=args))
        out.append(ToolCallEndEvent(tool_call_id=call.id))
    return out


def _tool_result(mid: str, message: ToolResultMessage) -> ToolCallResultEvent:
    return ToolCallResultEvent(
        message_id=mid,
        tool_call_id=message.tool_call_id,
        content=text_of(message.content),
        role="tool",
    )


def _last_text(messages: Sequence[Message]) -> str:
    for message in reversed(messages):
        if isinstance(message, AssistantMessage) and message.text:
            return message.text
    return ""


Outcome = Literal["success", "interrupt", "cancelled", "error"]


def run_started(thread_id: str, run_id: str, parent_run_id: str | None = None) -> BaseEvent:
    """The event that opens a leg (``parent_run_id``: the leg it continues)."""
    return RunStartedEvent(thread_id=thread_id, run_id=run_id, parent_run_id=parent_run_id)


def run_closed(
    thread_id: str,
    run_id: str,
    outcome: Outcome,
    *,
    interrupts: Sequence[AskUserInterrupt] = (),
    result: str | None = None,
    error: str | None = None,
    code: str | None = None,
) -> BaseEvent:
    """The event that ends a leg: ``RUN_FINISHED`` (``success`` with its ``result``,
    ``interrupt`` with the whole pause records, ``cancelled``) or ``RUN_ERROR``."""
    if outcome == "error":
        return RunErrorEvent(message=error or "the run failed", code=code)
    finished: Any
    if outcome == "interrupt":
        finished = RunFinishedInterruptOutcome(interrupts=[i.to_agui() for i in interrupts])
    elif outcome == "cancelled":
        finished = RunFinishedCancelledOutcome()
    else:
        finished = RunFinishedSuccessOutcome()
        return RunFinishedEvent(thread_id=thread_id, run_id=run_id, result=result, outcome=finished)
    return RunFinishedEvent(thread_id=thread_id, run_id=run_id, outcome=finished)


def event_from_json(data: Mapping[str, Any]) -> BaseEvent:
    """An AG-UI event from its wire JSON (what :func:`event_json` wrote). Raises
    ``pydantic.ValidationError`` for anything that is not one."""
    event: BaseEvent = _EVENT.validate_python(data)
    return event


def closing_event(
    thread_id: str,
    leg: LegRecord,
    interrupts: Sequence[AskUserInterrupt],
    messages: Sequence[Message],
) -> BaseEvent:
    """The event that ends a recipe run's leg."""
    result = _last_text(messages[: leg.end]) or None
    return run_closed(
        thread_id, leg.run, leg.outcome,
        interrupts=interrupts, result=result, error=leg.error, code=leg.code,
    )  # fmt: skip


def leg_events(
    thread_id: str,
    leg: LegRecord,
    messages: Sequence[Message],
    interrupts: Sequence[AskUserInterrupt] = (),
) -> list[BaseEvent]:
    """The AG-UI events of one leg, rebuilt from the transcript (``interrupts``: the pause
    records it ended on, in its order)."""
    out: list[BaseEvent] = [run_started(thread_id, leg.run, leg.parent)]
    for index in range(leg.start, min(leg.end, len(messages))):
        message, mid = messages[index], message_id(leg.run, index)
        if isinstance(message, AssistantMessage):
            out += _text_events(mid, message.text) if message.text else []
            out += _tool_call_events(mid, message)
        elif isinstance(message, ToolResultMessage):
            out.append(_tool_result(mid, message))
    out.append(closing_event(thread_id, leg, interrupts, messages))
    return out


class LegTranslator:
    """The AG-UI events of a leg as it happens, from the session's events.

    ``size`` gives the transcript's length now (the session's), which names each message's id.
    """

    def __init__(
        self,
        *,
        thread_id: str,
        run_id: str,
        parent_run_id: str | None,
        size: Callable[[], int],
    ) -> None:
        self.thread_id = thread_id
        self.run_id = run_id
        self.parent_run_id = parent_run_id
        self._size = size
        self._message_id: str | None = None
        self._text_open = False

    def run_started(self) -> RunStartedEvent:
        return RunStartedEvent(
            thread_id=self.thread_id, run_id=self.run_id, parent_run_id=self.parent_run_id
        )

    def translate(self, event: AgentEvent) -> list[BaseEvent]:
        """The AG-UI events that one agent event stands for (often none)."""
        if isinstance(event, MessageStart) and isinstance(event.message, AssistantMessage):
            self._message_id = message_id(self.run_id, self._size())  # appended there next
            self._text_open = False
            return []
        if isinstance(event, MessageUpdate) and isinstance(event.delta, TextDelta):
            return self._text(event.delta.delta)
        if isinstance(event, MessageEnd):
            if isinstance(event.message, AssistantMessage):
                return self._assistant_end(event.message)
            if isinstance(event.message, ToolResultMessage):  # appended just before
                return [_tool_result(message_id(self.run_id, self._size() - 1), event.message)]
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
        mid = self._message_id or message_id(self.run_id, self._size() - 1)
        out: list[BaseEvent] = []
        if not self._text_open and message.text:
            self._message_id = mid
            out += self._text(message.text)
        if self._text_open:
            out.append(TextMessageEndEvent(message_id=mid))
        out += _tool_call_events(mid, message)
        self._message_id, self._text_open = None, False
        return out
