"""What an agent session tells its listeners, and the data a pause leaves behind.

Every event is a pydantic model with a literal ``type``; :data:`AgentEventAdapter` reads and
writes them as JSON, so a JSON-lines RPC host writes ``event.model_dump_json()`` per line and an
SSE host sends the same text as ``data:``. One run of the loop emits::

    agent_start
      (message_start, message_end)            for each user message delivered
      turn_start
        message_start, message_update*, message_end             the assistant message
        (tool_execution_start, tool_execution_update*, tool_execution_end)*   per tool call
        (message_start, message_end)*         per tool result appended, in source order
      turn_end
      ...
    agent_end                                 status: idle | paused | aborted | failed
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from interactions import AskUserInterrupt
from recipes._tools import ToolResult
from recipes.messages import AssistantMessage, Message, ToolCall, ToolResultMessage
from recipes.models._base import TextDelta, ToolCallDelta

SessionStatus = Literal["idle", "running", "paused", "aborted", "failed"]


class AwaitingCall(BaseModel):
    """A tool call waiting for a human: the call, and the interrupt it paused on."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tool_call_id: str
    tool_name: str
    interrupt: AskUserInterrupt


class PausedBatch(BaseModel):
    """A tool batch stopped because calls are waiting for a human. Plain data: keep it with the
    transcript and give both to ``create_agent_session(messages=..., paused=...)``.

    The transcript already holds the results of the calls that finished.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    awaiting: list[AwaitingCall] = Field(min_length=1)
    """The calls waiting for a human, each with the interrupt it paused on (not in the
    transcript: their results come with the answers)."""
    pending: list[ToolCall] = Field(default_factory=list)
    """Calls of the batch that had not started; they run, one at a time, after the resume."""

    @property
    def awaiting_call_ids(self) -> list[str]:
        """The ids of the calls waiting for a human."""
        return [a.tool_call_id for a in self.awaiting]

    @property
    def interrupts(self) -> list[AskUserInterrupt]:
        """The interrupts a resume must answer, one per awaiting call."""
        return [a.interrupt for a in self.awaiting]


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True)


class AgentStart(_Event):
    """A run of the loop started (``prompt()`` or ``resume()``)."""

    type: Literal["agent_start"] = "agent_start"
    session_id: str
    agent: str


class AgentEnd(_Event):
    """The run ended. ``error`` says why it failed; ``paused`` is set when it paused."""

    type: Literal["agent_end"] = "agent_end"
    status: SessionStatus
    error: str | None = None
    paused: PausedBatch | None = None


class TurnStart(_Event):
    """A turn (one model call and its tool batch) started; turns count from 1 per session."""

    type: Literal["turn_start"] = "turn_start"
    turn: int


class TurnEnd(_Event):
    """A turn ended: its assistant message and the results appended for it."""

    type: Literal["turn_end"] = "turn_end"
    turn: int
    message: AssistantMessage
    tool_results: list[ToolResultMessage]


class MessageStart(_Event):
    """A message starts (for the assistant: an empty message, filled by updates)."""

    type: Literal["message_start"] = "message_start"
    message: Message


class MessageUpdate(_Event):
    """A piece of the assistant message streamed; ``text`` is the text so far."""

    type: Literal["message_update"] = "message_update"
    delta: Annotated[TextDelta | ToolCallDelta, Field(discriminator="type")]
    text: str


class MessageEnd(_Event):
    """A message is complete and appended to the transcript."""

    type: Literal["message_end"] = "message_end"
    message: Message


class ToolExecutionStart(_Event):
    """A tool call starts (before its arguments are validated)."""

    type: Literal["tool_execution_start"] = "tool_execution_start"
    tool_call_id: str
    tool_name: str
    arguments: dict[str, Any]


class ToolExecutionUpdate(_Event):
    """What a running tool passed to ``on_update``."""

    type: Literal["tool_execution_update"] = "tool_execution_update"
    tool_call_id: str
    tool_name: str
    partial: ToolResult


class ToolExecutionEnd(_Event):
    """A tool call ended; ``paused`` when its result is a placeholder awaiting a human."""

    type: Literal["tool_execution_end"] = "tool_execution_end"
    tool_call_id: str
    tool_name: str
    result: ToolResultMessage
    paused: bool = False


AgentEvent = Annotated[
    AgentStart
    | AgentEnd
    | TurnStart
    | TurnEnd
    | MessageStart
    | MessageUpdate
    | MessageEnd
    | ToolExecutionStart
    | ToolExecutionUpdate
    | ToolExecutionEnd,
    Field(discriminator="type"),
]

AgentEventAdapter: TypeAdapter[AgentEvent] = TypeAdapter(AgentEvent)
