"""The typed transcript shared by the agent loop, the model providers and the durable runs.

Every message is a pydantic model discriminated on ``role``; a transcript is a list of
:data:`Message` and round-trips through JSON (``TranscriptAdapter``), which is how a paused run
is checkpointed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

__all__ = [
    "AssistantMessage",
    "ContentPart",
    "ImagePart",
    "Message",
    "TextPart",
    "Thinking",
    "ToolCall",
    "ToolResultMessage",
    "TranscriptAdapter",
    "Usage",
    "UserMessage",
    "stop_warning",
    "text_of",
]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TextPart(_Frozen):
    """A text part of a message or a tool result."""

    type: Literal["text"] = "text"
    text: str


class ImagePart(_Frozen):
    """An image part: base64 ``data`` with its ``mime_type`` (``image/png``, ...)."""

    type: Literal["image"] = "image"
    data: str
    mime_type: str


ContentPart = Annotated[TextPart | ImagePart, Field(discriminator="type")]


class ToolCall(_Frozen):
    """A tool call the model asked for.

    ``arguments`` is the parsed JSON object. When the model sent arguments that are not a JSON
    object, ``arguments`` is empty and ``invalid_arguments`` holds the raw text, so the loop can
    answer with an error result instead of calling the tool.
    """

    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    invalid_arguments: str | None = None


class Thinking(_Frozen):
    """The model's reasoning before its answer, kept to be sent back with its turn.

    Anthropic's extended thinking: ``text`` and the ``signature`` that vouches for it, or a
    redacted block (``redacted``: its encrypted data, no text). The API refuses the next turn of
    a tool call without the thinking of the turn that called it, and a block without its
    signature; so a block comes back as it came, and one with neither signature nor data (a
    stream cut before its signature) is kept here but not sent. Other providers leave it out.
    """

    text: str = ""
    signature: str = ""
    redacted: str = ""


class Usage(_Frozen):
    """Token usage of one assistant message, as the provider reported it."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


class UserMessage(_Frozen):
    """A message from the user (a prompt, a steering or a follow-up message)."""

    role: Literal["user"] = "user"
    content: list[ContentPart]

    @classmethod
    def of_text(cls, text: str) -> UserMessage:
        return cls(content=[TextPart(text=text)])


class AssistantMessage(_Frozen):
    """One assistant turn: its text and the tool calls it asked for, in source order, and the
    reasoning (``thinking``) the model gave before them, where the provider returns it."""

    role: Literal["assistant"] = "assistant"
    text: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    thinking: list[Thinking] = Field(default_factory=list)
    usage: Usage | None = None
    stop_reason: str | None = None
    model: str | None = None


class ToolResultMessage(_Frozen):
    """The result of one tool call; ``is_error`` when the tool failed or could not be called."""

    role: Literal["tool"] = "tool"
    tool_call_id: str
    tool_name: str
    content: list[ContentPart]
    details: dict[str, Any] | None = None
    is_error: bool = False


Message = Annotated[UserMessage | AssistantMessage | ToolResultMessage, Field(discriminator="role")]

TranscriptAdapter: TypeAdapter[list[Message]] = TypeAdapter(list[Message])


_CUT_SHORT: Final = {
    "max_tokens": (
        "stopped at the model's output limit (max_tokens), so it may be cut short; "
        "raise the model's max_tokens or ask for less"
    ),
    "model_context_window_exceeded": (
        "stopped when the model's context window was full, so it may be cut short; "
        "start again with less in the conversation"
    ),
    "content_filter": "was stopped by the provider's content filter, so it may be cut short",
    "refusal": "is a refusal: the model declined to do what was asked",
    "no_stop_reason": (
        "came with no stop reason (its stream ended before the model said why it stopped), so "
        "it may be cut short"
    ),
    "tool_use_without_calls": (
        "stopped to call a tool but held no tool call (the provider may have dropped it), so no "
        "tool ran"
    ),
}
"""Stop reasons after which an answer is not the model's whole answer, and what to say."""

_WHOLE: Final = frozenset({"end_turn", "tool_use", "stop_sequence", "stop", "eos_token"})
"""Stop reasons of a whole answer: the model's own end (``eos_token``: TGI's word), a stop
sequence or tool calls. Any other reason is named in the warning, since it may be a cut."""


def stop_warning(messages: Sequence[Message]) -> str | None:
    """Why the last assistant answer of ``messages`` may not be a whole answer (its model stopped
    at its output limit, a content filter stopped it, it is a refusal, or it stopped for a reason
    not known to be a whole answer's), or ``None``."""
    for message in reversed(messages):
        if isinstance(message, AssistantMessage):
            reason = message.stop_reason
            if reason is None or reason in _WHOLE:
                return None
            why = _CUT_SHORT.get(
                reason,
                f"stopped for a reason this SDK does not know ({reason!r}), so it may be cut short",
            )
            return f"The model's last answer {why}."
    return None


def text_of(parts: list[ContentPart]) -> str:
    """The text parts of a content list joined by newlines (images are left out)."""
    return "\n".join(p.text for p in parts if isinstance(p, TextPart))
