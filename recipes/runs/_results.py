"""What the runner returns, what a host brings to one leg of a run, and a claimed run."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from interactions import AskUserInterrupt
from interactions.channels import Channel
from interactions.dialogs import DialogUI
from interactions.store import InteractionRecord, RunRecord, RunStatus

__all__ = ["AnswerResult", "Claim", "EventSink", "RunResult", "Surface"]

EventSink = Callable[[Any], object]
"""Called with each AG-UI event of a leg (an ``ag_ui.core`` event model) as it happens; it must
not block (hand the event to a bounded stream with ``send_nowait``). An exception it raises is
logged, never fatal."""


@dataclass(frozen=True)
class Surface:
    """What a host brings to one leg of a run (a start, a resume, a retry).

    ``ui``: a person's dialog surface, so asks are answered inline while someone watches (the
    run pauses only where no dialog answers). ``channels``: the host's own channel chain.
    ``on_event``: a live sink for the leg's AG-UI events, besides the store's log.
    ``agui_run_id``: the AG-UI run id the host's client chose for this leg (default: the run's
    id for its first leg, ``<run id>.<n>`` for the n-th). ``mode``: the host's word for how the
    agent runs (default: the runner's).
    """

    ui: DialogUI | None = None
    channels: Sequence[Channel] | None = None
    on_event: EventSink | None = None
    agui_run_id: str | None = None
    mode: str | None = None


NO_SURFACE = Surface()


@dataclass(frozen=True)
class Claim:
    """A run this process moved to ``running`` in order to continue it: hand it to ``proceed``
    (a host hands it to one of its workers). Only the runner's claims make one; of several
    processes claiming a run, exactly one gets it.

    ``retry``: the claim continues a ``failed_resumable`` run (a retry), not a paused one.
    ``interactions``: the run's interactions as the claim left them, answers included (``None``
    when the claimer did not read them: the leg reads them). ``prepared``: what the run's
    driver checked before the claim (its recipe and model, a compiled workflow), so the leg
    does not build it again.
    """

    run: RunRecord
    retry: bool = False
    interactions: tuple[InteractionRecord, ...] | None = None
    prepared: object = None

    @property
    def run_id(self) -> str:
        """The claimed run."""
        return self.run.id


class RunResult(BaseModel):
    """Where a run stands after a start or a resume.

    ``interrupts`` are the open interrupts of a paused run (answer them, then resume);
    ``text`` is the last assistant text; ``error`` says why a run failed; ``warning`` says why
    a finished run's ``text`` may not be the whole answer (the model stopped at its output
    limit, a content filter stopped it, or it refused).
    """

    model_config = ConfigDict(frozen=True)

    run_id: str
    thread_id: str
    status: RunStatus
    kind: str = "recipe"
    interrupts: list[AskUserInterrupt] = []
    text: str = ""
    error: str | None = None
    warning: str | None = None
    agui_run_id: str | None = None
    """The AG-UI run id of the run's latest leg."""


class AnswerResult(BaseModel):
    """The stored answer of one interaction; ``created`` is false for an identical replay."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    interaction: InteractionRecord
    created: bool
    run_status: RunStatus | None = None
    """The run's status when the answer was stored (before any continuation)."""
    claim: Claim | None = Field(default=None, exclude=True)
    """The run, claimed by this answer for the caller to continue (``answer(..., claim=True)``
    on the last question a paused run waited for): pass it to ``proceed``."""
    run: RunResult | None = None
    """The run after it was resumed (``answer(..., resume=True)`` on its last open question)."""
    still_open: list[str] = []
    """The run's other open interactions, which still wait for an answer."""
    queued: bool = False
    """An async question's answer was queued for its agent (delivered at its next turn
    boundary while the run goes on)."""
    resumed: bool = False
    """This call continued the paused run (its last awaited answer was this one)."""
    settled: bool = True
    """The interaction is answered. ``False`` while an approval that needs several approvals
    waits for more votes (this answer was one vote: ``created`` says it was counted)."""
    approvals: list[str] = []
    """Who approved so far, in the order they approved (an approval that needs several;
    ``[]`` otherwise): what a host shows as "1 of 2 approvals: ada"."""
    required_approvals: int = 1
    """The distinct approvals the interaction needs (``required_approvals`` of its ask)."""

    @property
    def run_id(self) -> str:
        """The run of the interaction."""
        return self.interaction.run_id

    @property
    def interaction_id(self) -> str:
        """The interaction answered."""
        return self.interaction.id
