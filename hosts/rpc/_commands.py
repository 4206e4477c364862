"""The commands a client sends in RPC mode, and the responses it gets back. Pure: no I/O.

Every command is a JSON object with a ``type`` and an optional ``id``; the id (any JSON value)
is echoed verbatim in the response::

    {"type": "response", "command": <type>, "success": true, "id": <id>, "data": <data>}
    {"type": "response", "command": <type>, "success": false, "id": <id>, "error": "<why>"}

``id`` is left out when the command had none; ``data`` when there is nothing to return.
A line that is not a command at all answers with ``"command": "parse"``. Unknown fields are
ignored, so a pi client's extra fields (``thinkingLevel``, ...) do no harm.

``extension_ui_response`` is not a command: it answers a dialog and gets no response (see
:mod:`hosts.rpc._ui`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, StrictStr, TypeAdapter, ValidationError

from recipes.messages import ImagePart, TextPart, UserMessage

__all__ = [
    "COMMAND_TYPES",
    "Abort",
    "Command",
    "CommandError",
    "FollowUp",
    "GetMessages",
    "GetState",
    "Prompt",
    "Steer",
    "failure",
    "parse_command",
    "success",
]


class CommandError(ValueError):
    """A command that cannot be carried out; ``message`` becomes the response's ``error``."""


class _Command(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


class Image(_Command):
    """An image attached to a message, in pi's shape (base64 ``data``)."""

    type: Literal["image"] = "image"
    data: StrictStr
    mimeType: StrictStr  # the wire's spelling


class _Message(_Command):
    message: StrictStr
    """The text of the user message."""
    images: list[Image] = Field(default_factory=list)
    """Images sent with the text (optional)."""

    def user_message(self) -> UserMessage:
        """The message as a transcript user message: the text, then the images."""
        images = [ImagePart(data=i.data, mime_type=i.mimeType) for i in self.images]
        return UserMessage(content=[TextPart(text=self.message), *images])


class Prompt(_Message):
    """Start a run. While one runs, ``streamingBehavior`` says what to do with the message:
    ``steer`` (deliver it after the current tool batch) or ``followUp`` (when the agent would
    stop); without it a prompt sent while busy is refused."""

    type: Literal["prompt"]
    streamingBehavior: Literal["steer", "followUp"] | None = None


class Steer(_Message):
    """Queue a message delivered after the current tool batch (or at the next run's start)."""

    type: Literal["steer"]


class FollowUp(_Message):
    """Queue a message delivered when the agent would otherwise stop."""

    type: Literal["follow_up"]


class Abort(_Command):
    """Abort the running run (or a paused one); answered once it has ended."""

    type: Literal["abort"]


class GetState(_Command):
    """Ask for the session's state (status, agent, model, counts, open dialogs)."""

    type: Literal["get_state"]


class GetMessages(_Command):
    """Ask for the transcript as JSON."""

    type: Literal["get_messages"]


Command = Annotated[
    Prompt | Steer | FollowUp | Abort | GetState | GetMessages, Field(discriminator="type")
]

_ADAPTER: TypeAdapter[Command] = TypeAdapter(Command)

COMMAND_TYPES: tuple[str, ...] = tuple(
    get_args(model.model_fields["type"].annotation)[0]
    for model in (Prompt, Steer, FollowUp, Abort, GetState, GetMessages)
)
"""The command types, as spelled on the wire."""


def parse_command(frame: dict[str, Any]) -> Command:
    """The command ``frame`` carries (a decoded record with a string ``type``).

    Raises :class:`CommandError` for an unknown type or fields of the wrong shape, saying what
    was expected.
    """
    kind = frame["type"]
    if kind not in COMMAND_TYPES:
        raise CommandError(
            f"unknown command type {shown_type(kind)!r}; expected one of: "
            f"{', '.join(COMMAND_TYPES)}"
        )
    try:
        return _ADAPTER.validate_python(frame)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'][1:]) or '(command)'}: {err['msg']}"
            for err in exc.errors(include_url=False)
        )
        raise CommandError(f"invalid {kind!r} command: {problems}") from None


def success(frame: dict[str, Any], command: str, data: Any = None) -> dict[str, Any]:
    """The success response to ``frame`` (``data`` left out when ``None``)."""
    record: dict[str, Any] = {"type": "response", "command": command, "success": True}
    if "id" in frame:
        record["id"] = frame["id"]
    if data is not None:
        record["data"] = data
    return record


SHOWN_TYPE = 100
"""The most characters of an unknown command type a response echoes (a line may hold 16 MiB)."""


def shown_type(kind: str) -> str:
    """A command type as a response echoes it: an unknown one longer than :data:`SHOWN_TYPE`
    characters is cut there, with ``…``."""
    return kind if len(kind) <= SHOWN_TYPE else kind[:SHOWN_TYPE] + "…"


def failure(frame: dict[str, Any] | None, command: str, error: str) -> dict[str, Any]:
    """The error response to ``frame`` (``None``: a line that could not be read), for a
    ``command`` type (cut as :func:`shown_type` does)."""
    record: dict[str, Any] = {"type": "response", "command": shown_type(command), "success": False}
    if frame is not None and "id" in frame:
        record["id"] = frame["id"]
    record["error"] = error
    return record
