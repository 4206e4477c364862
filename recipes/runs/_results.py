"""What the runner returns: where a run stands, and what an answer did."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from interactions import AskUserInterrupt
from interactions.store import InteractionRecord, RunStatus

__all__ = ["AnswerResult", "RunResult"]


class RunResult(BaseModel):
    """Where a run stands after a start or a resume.

    ``interrupts`` are the open interrupts of a paused run (answer them, then resume);
    ``text`` is the last assistant text; ``error`` says why a run failed.
    """

    model_config = ConfigDict(frozen=True)

    run_id: str
    thread_id: str
    status: RunStatus
    interrupts: list[AskUserInterrupt] = []
    text: str = ""
    error: str | None = None


class AnswerResult(BaseModel):
    """The stored answer of one interaction; ``created`` is false for an identical replay."""

    model_config = ConfigDict(frozen=True)

    interaction: InteractionRecord
    created: bool
    run: RunResult | None = None
    """The run after it was resumed (``answer(..., resume=True)`` on its last open question)."""
