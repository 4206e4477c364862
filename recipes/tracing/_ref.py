"""What a checkpoint keeps of a run's trace."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict

__all__ = ["TraceRef"]


class TraceRef(BaseModel):
    """Where a run's trace stands, kept in its checkpoint when a leg ends: the W3C
    ``traceparent`` (and ``tracestate``) of that leg's span, and when it ended (the waits the
    next leg shows are the questions answered after it)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    traceparent: str
    tracestate: str | None = None
    at: datetime
