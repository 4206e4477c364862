"""The WebSocket frames of ``/ws``: one JSON object per text message, typed by ``type``.

Client to server: ``subscribe`` (one run, or ``run_id: null`` for every run), ``answer`` and
``decline`` (each acknowledged by an ``ack`` or refused by an ``error`` echoing its ``id``),
``ping`` (answered by ``pong``).

Server to client: ``hello`` on connect; ``subscribed``; ``run.created``; ``run.status``;
``interrupt.opened`` (the full descriptor, with the approvals so far of an approval several
people must give); ``interrupt.voted`` (someone voted on such an approval: who approved so
far, of how many); ``interrupt.resolved`` (who answered, through which
host); ``run.event`` (an AG-UI event of a run: streamed text and tool calls, ``live`` while the
leg runs in this server, else as stored); ``ack``; ``error``; ``pong``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from hosts.web._errors import Complaint, ErrorBody, Kept, Refusal, validation_refusal
from hosts.web._views import InteractionView, RunView
from interactions.store import RunStatus

__all__ = [
    "CLOSE_TOO_SLOW",
    "PROTOCOL",
    "AckFrame",
    "AnswerFrame",
    "ClientFrame",
    "DeclineFrame",
    "ErrorFrame",
    "HelloFrame",
    "InterruptOpenedFrame",
    "InterruptRemindedFrame",
    "InterruptResolvedFrame",
    "InterruptVotedFrame",
    "PingFrame",
    "PongFrame",
    "RunCreatedFrame",
    "RunEventFrame",
    "RunStatusFrame",
    "ServerFrame",
    "SubscribeFrame",
    "SubscribedFrame",
    "parse_client_frame",
]

PROTOCOL = "pi-recipes.v1"
"""The WebSocket subprotocol the server accepts (a browser sends the token beside it, as
``bearer.<token>``)."""

CLOSE_TOO_SLOW = 4008
"""The close code of a client that did not read its frames: its buffer filled, or one frame
waited too long to leave."""

_Id = Annotated[str, Field(min_length=1, max_length=200)]
_Who = Annotated[Kept, Field(min_length=1, max_length=200)]


class _Client(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SubscribeFrame(_Client):
    """Receive the frames of one run (``run_id``), or of every run (``null``). An unknown
    run is refused (``error``, ``unknown run``) and the subscription stays as it was."""

    type: Literal["subscribe"]
    run_id: _Id | None = None
    id: _Id | None = None


class AnswerFrame(_Client):
    """Answer one interaction: ``payload`` is ``{answer}``, ``{answers}`` or ``{approved,
    feedback?}``, as its ``response_schema`` says. ``answered_by`` is ignored: the server
    records who signed in at the handshake."""

    type: Literal["answer"]
    id: _Id
    run_id: _Id
    interaction_id: _Id
    payload: dict[str, Any]
    answered_by: _Who | None = None


class DeclineFrame(_Client):
    """Decline one interaction (the model reads a decline). ``answered_by`` is ignored: the
    server records who signed in at the handshake."""

    type: Literal["decline"]
    id: _Id
    run_id: _Id
    interaction_id: _Id
    answered_by: _Who | None = None


class PingFrame(_Client):
    """An application-level heartbeat (browsers cannot send WebSocket pings)."""

    type: Literal["ping"]
    id: _Id | None = None


ClientFrame = Annotated[
    SubscribeFrame | AnswerFrame | DeclineFrame | PingFrame, Field(discriminator="type")
]
_CLIENT = TypeAdapter(ClientFrame)


def parse_client_frame(
    text: str | bytes,
) -> SubscribeFrame | AnswerFrame | DeclineFrame | PingFrame:
    """The frame ``text`` holds; raises :class:`Refusal` (422, with complaints) otherwise."""
    try:
        return _CLIENT.validate_json(text)
    except ValidationError as exc:
        raise validation_refusal(exc, "not a frame") from None


class _Server(BaseModel):
    model_config = ConfigDict(frozen=True)


class HelloFrame(_Server):
    type: Literal["hello"] = "hello"
    protocol: str = PROTOCOL
    host: str = "web"


class SubscribedFrame(_Server):
    type: Literal["subscribed"] = "subscribed"
    run_id: str | None
    id: str | None = None


class RunCreatedFrame(_Server):
    type: Literal["run.created"] = "run.created"
    run: RunView


class RunStatusFrame(_Server):
    type: Literal["run.status"] = "run.status"
    run_id: str
    kind: str
    from_: RunStatus | None = Field(default=None, alias="from")
    to: RunStatus
    error: str | None = None
    warning: str | None = None
    """For a finished run: why its answer may not be whole (``RunResult.warning``)."""

    model_config = ConfigDict(frozen=True, populate_by_name=True, serialize_by_alias=True)


class InterruptOpenedFrame(_Server):
    type: Literal["interrupt.opened"] = "interrupt.opened"
    run_id: str
    interaction: InteractionView


class InterruptVotedFrame(_Server):
    """Someone (``voter``) voted on an approval several people must give: ``approvals`` (who
    approved so far, in vote order) of the ``required_approvals`` that settle it. A vote that
    settles it is followed by ``interrupt.resolved``."""

    type: Literal["interrupt.voted"] = "interrupt.voted"
    run_id: str
    interaction_id: str
    voter: str
    approved: bool
    approvals: list[str]
    required_approvals: int


class InterruptRemindedFrame(_Server):
    """A question still open was reminded of (``escalated`` false: reminder number ``count``)
    or escalated (``added``: whom it added as approvers); ``approvers`` may answer it now
    (empty: anyone who may reach it)."""

    type: Literal["interrupt.reminded"] = "interrupt.reminded"
    run_id: str
    interaction_id: str
    escalated: bool
    count: int
    added: list[str]
    approvers: list[str]


class InterruptResolvedFrame(_Server):
    type: Literal["interrupt.resolved"] = "interrupt.resolved"
    run_id: str
    interaction_id: str
    status: Literal["resolved", "cancelled", "expired"]
    payload: Any = None
    answered_by: str | None = None
    via: str | None = None
    answered_at: datetime | None = None


class RunEventFrame(_Server):
    type: Literal["run.event"] = "run.event"
    run_id: str
    event: dict[str, Any] = Field(description="the AG-UI event (wire JSON)")
    live: bool = Field(description="true while streamed by this server; false as stored")


class AckFrame(_Server):
    type: Literal["ack"] = "ack"
    id: str
    run_id: str
    interaction_id: str
    created: bool
    queued: bool
    resumed: bool
    settled: bool = True
    """False while an approval that needs several approvals waits for more (a vote)."""
    approvals: list[str] = []
    required_approvals: int = 1


class ErrorFrame(_Server):
    type: Literal["error"] = "error"
    id: str | None = None
    error: str
    message: str
    reason: str | None = None
    run_id: str | None = None
    interaction_id: str | None = None
    complaints: list[Complaint] = []

    @classmethod
    def of(cls, refused: Refusal, frame_id: str | None = None) -> ErrorFrame:
        """The frame reporting ``refused`` (to the frame ``frame_id``)."""
        body: ErrorBody = refused.body
        return cls(id=frame_id, **body.model_dump())


class PongFrame(_Server):
    type: Literal["pong"] = "pong"
    id: str | None = None


ServerFrame = (
    HelloFrame
    | SubscribedFrame
    | RunCreatedFrame
    | RunStatusFrame
    | InterruptOpenedFrame
    | InterruptVotedFrame
    | InterruptRemindedFrame
    | InterruptResolvedFrame
    | RunEventFrame
    | AckFrame
    | ErrorFrame
    | PongFrame
)
