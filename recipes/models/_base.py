"""The model protocol the agent loop speaks, and the events a model streams."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Annotated, Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from recipes.messages import AssistantMessage, Message

__all__ = [
    "Completed",
    "Model",
    "ModelEvent",
    "ModelRequest",
    "TextDelta",
    "ToolCallDelta",
    "ToolSpec",
]


class ToolSpec(BaseModel):
    """What the model sees of a tool: its name, description and JSON Schema of parameters."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str
    parameters: dict[str, Any]


class ModelRequest(BaseModel):
    """One call to a model: the agent's instructions, the transcript so far and the tools."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    instructions: str = ""
    messages: Sequence[Message] = ()
    tools: Sequence[ToolSpec] = ()


class TextDelta(BaseModel):
    """A piece of assistant text, as it streams."""

    type: Literal["text_delta"] = "text_delta"
    delta: str


class ToolCallDelta(BaseModel):
    """A piece of a tool call's JSON arguments, as it streams (``name`` on the first piece)."""

    type: Literal["tool_call_delta"] = "tool_call_delta"
    id: str
    name: str | None = None
    arguments_delta: str = ""


class Completed(BaseModel):
    """The last event of every stream: the whole assistant message."""

    type: Literal["completed"] = "completed"
    message: AssistantMessage


ModelEvent = Annotated[TextDelta | ToolCallDelta | Completed, Field(discriminator="type")]


@runtime_checkable
class Model(Protocol):
    """A language model the agent loop can call.

    ``stream`` yields :class:`TextDelta` / :class:`ToolCallDelta` events as they arrive and ends
    with exactly one :class:`Completed`. Failures raise ``recipes.models.ModelError`` with its
    class (``usage_window``, ``auth``, ``unavailable``, ``transient_exhausted``,
    ``unclassified``).
    """

    @property
    def name(self) -> str:
        """The model's ``provider:model`` name, as stored with a run."""
        ...

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]: ...
