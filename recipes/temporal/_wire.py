"""What crosses between the client, the workflow and the activities: one model per shape.

Every payload travels as its JSON (``model_dump(mode="json")``) and is read back with
``model_validate``, so Temporal's default converter carries it and a bad one is refused by
the same model that describes it. Nothing here holds a secret: a run's environment reaches the
workflow only as its ask flags (:data:`RUN_FLAGS`); keys stay in the workers' environment.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict
from temporalio.converter import PayloadConverter

from interactions import AUTO_APPROVE_ENV, INTERRUPT_RESUME_ENV, INTERRUPT_TTL_ENV
from interactions.store import EventRecord, InteractionRecord, RunRecord
from recipes.runs import RunResult
from recipes.temporal._errors import ErrorData

__all__ = [
    "HISTORY_LIMIT",
    "PAYLOAD_LIMIT",
    "RUN_FLAGS",
    "AnswerRequest",
    "CancelRequest",
    "EventsRequest",
    "LegRequest",
    "ModelCall",
    "Prepared",
    "ResumeRequest",
    "SettleRequest",
    "Settled",
    "Snapshot",
    "StartRequest",
    "ToolCallRequest",
    "oversized",
]

RUN_FLAGS = (AUTO_APPROVE_ENV, INTERRUPT_RESUME_ENV, INTERRUPT_TTL_ENV)
"""The environment variables a run carries to its workers (the ask flags, never a secret)."""

_WIRE = ConfigDict(frozen=True, extra="forbid")

PAYLOAD_LIMIT = 2 * 1024 * 1024
"""The largest payload Temporal keeps in a workflow's history: the server's default
``limit.blobSize.error``, which its SDK enforces before sending. A model call carries the whole
transcript; a tool's result comes back whole."""


HISTORY_LIMIT = 50 * 1024 * 1024
"""The history size at which Temporal ends a workflow: the server's default
``limit.historySize.error``. Every model call records the whole transcript in it."""


def oversized(converter: PayloadConverter, value: Any, what: str) -> str | None:
    """Why ``value`` cannot travel as one payload (its size against :data:`PAYLOAD_LIMIT`,
    ``what`` naming it), or ``None`` when it can."""
    size = converter.to_payloads([value])[0].ByteSize()
    if size <= PAYLOAD_LIMIT:
        return None
    return f"{what} is {size:,} bytes, over Temporal's payload limit of {PAYLOAD_LIMIT:,} bytes"


class LegRequest(BaseModel):
    """What a host brings to a leg the workflow drives: who it is, the AG-UI run id its client
    chose, its word for how the agent runs."""

    model_config = _WIRE

    via: str = "api"
    agui_run_id: str | None = None
    mode: str | None = None


class StartRequest(LegRequest):
    """A new run: the workflow's input."""

    run_id: str
    thread_id: str
    ref: str
    input: str
    agent: str | None = None
    model: str | None = None
    expiry_policy: Literal["decline", "fail"] = "decline"
    flags: dict[str, str] = {}


class AnswerRequest(LegRequest):
    """One answer (``Runner.answer``)."""

    interaction_id: str
    status: str = "resolved"
    """Any text: what is not a status is refused by the validator, as the runner refuses it
    (``InvalidPayloadError``, reason ``invalid_status``)."""
    payload: Any = None
    answered_by: str | None = None
    groups: list[str] = []
    """The groups the one answering counts in (for an interrupt naming approvers)."""
    resume: bool = False
    claim: bool = False
    """The last answer claims the run; the workflow continues it and the client waits for
    that leg (``settle``)."""


class ResumeRequest(LegRequest):
    """A resume with AG-UI ``ResumeEntry`` JSON (``Runner.resume``)."""

    entries: list[dict[str, Any]]
    answered_by: str | None = None
    groups: list[str] = []


class CancelRequest(BaseModel):
    model_config = _WIRE

    reason: str = "cancelled"
    via: str = "api"


class EventsRequest(BaseModel):
    model_config = _WIRE

    events: list[tuple[str, dict[str, Any]]]


class SettleRequest(BaseModel):
    """Wait until the run has moved past ``after_version`` and is not running."""

    model_config = _WIRE

    after_version: int = 0


class Settled(BaseModel):
    """Where a leg the workflow drove by itself ended, and the error it raised, if any."""

    model_config = ConfigDict(frozen=True)

    result: RunResult | None = None
    error: ErrorData | None = None


class Snapshot(BaseModel):
    """The run as its workflow holds it (the query's answer)."""

    model_config = ConfigDict(frozen=True)

    run: RunRecord | None = None
    interactions: list[InteractionRecord] = []
    events: list[EventRecord] = []
    refused: ErrorData | None = None
    """Why the start was refused (nothing was created), when it was."""
    omitted: str | None = None
    """Why the run's checkpoint comes without its transcript, when it does (the whole would
    exceed :data:`PAYLOAD_LIMIT`)."""


class Prepared(BaseModel):
    """What a worker resolved for a new run: its recipe, agent and model names, and the history
    size the run stops before (kept in the run's history, so a replay decides alike whatever the
    workers are set to later; a run prepared before it was kept has the default)."""

    model_config = _WIRE

    ref: str
    agent: str
    model_name: str
    history_limit: int = HISTORY_LIMIT


class ModelCall(BaseModel):
    """One model call: the request as JSON."""

    model_config = _WIRE

    agent: str
    model_name: str
    request: dict[str, Any]
    trace: str | None = None
    """The ``traceparent`` of the leg that makes the call (:func:`recipes.tracing.carried`)."""


class ToolCallRequest(BaseModel):
    """One tool body to run, with what its context and ask ledger need."""

    model_config = _WIRE

    run_id: str
    agent: str
    tool_name: str
    tool_call_id: str
    arguments: dict[str, Any]
    key: str
    """The call's own scope name (its :func:`~interactions.asks.call_key`)."""
    scope: list[str] = []
    """The scopes enclosing the call (empty in a recipe run)."""
    replay: bool = False
    answers: list[dict[str, Any]] = []
    flags: dict[str, str] = {}
    trace: str | None = None
    """The ``traceparent`` of the leg that makes the call (:func:`recipes.tracing.carried`)."""
    mode: str = "print"
