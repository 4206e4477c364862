"""What a host may ask of any engine's runs: one protocol, implemented by every engine.

The :class:`~recipes.runs.Runner` implements it over a store (SQLite, PostgreSQL), the Temporal
engine's runner over its workflows; neither inherits from the other, and a host that holds a
:class:`Runs` never learns which it has (:func:`~recipes.runs.runner_for` gives the one a
store's runs need). A host turns a person's action into one call and hands what comes back to a
worker: whether the run continues, and who continues it, is decided inside the call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from interactions.people import Identity
from interactions.store import InteractionRecord, RunRecord, Store
from recipes.models._base import Model
from recipes.runs._checkpoint import ExpiryPolicy
from recipes.runs._drivers import RunView
from recipes.runs._results import AnswerResult, Claim, RunResult, Surface

if TYPE_CHECKING:
    from ag_ui.core import ResumeEntry

__all__ = ["Runs"]


@runtime_checkable
class Runs(Protocol):
    """The runs of one store or engine, as a host drives them.

    Every method raises the project's typed errors (``RunError`` subclasses for refusals,
    ``UsageError`` when a run cannot be started or continued here); a refused call changes
    nothing. See :class:`~recipes.runs.Runner` for each method's whole contract.
    """

    store: Store
    """Where the runs are read (a host lists and shows runs from it)."""
    host: str
    """This process's name in the audit trail (``web``, ``slack``, ``cli``...)."""
    strandable: bool
    """Whether a process that dies mid-leg can leave a run ``running`` (:meth:`recover`)."""

    async def start(
        self,
        recipe_ref: str,
        input: str,
        *,
        agent: str | None = None,
        model: Model | str | None = None,
        thread_id: str | None = None,
        run_id: str | None = None,
        expiry_policy: ExpiryPolicy = "decline",
        surface: Surface = ...,
    ) -> RunResult:
        """Start a run and drive its first leg until it finishes or pauses."""
        ...

    async def answer(
        self,
        run_id: str,
        interaction_id: str,
        payload: Any = None,
        *,
        status: str = "resolved",
        answered_by: str | Identity | None = None,
        resume: bool = False,
        claim: bool = False,
        before_claim: Callable[[], object] | None = None,
        surface: Surface = ...,
    ) -> AnswerResult:
        """Answer one interaction; the last answer of a paused run claims it (``claim``,
        returned for the caller's worker) or continues it (``resume``)."""
        ...

    async def resume(
        self,
        run_id: str,
        entries: Sequence[ResumeEntry],
        *,
        answered_by: str | Identity | None = None,
        surface: Surface = ...,
    ) -> RunResult:
        """Answer every open interrupt of a paused run and continue it."""
        ...

    async def resume_answered(self, run_id: str, *, surface: Surface = ...) -> RunResult:
        """Continue a paused run whose interactions were all answered one by one."""
        ...

    async def claim_answered(
        self, run_id: str, *, before: Callable[[], object] | None = None
    ) -> Claim | None:
        """Claim a paused, fully answered run for the caller to continue (``None``: not
        ready, or another process claimed it)."""
        ...

    async def claim_retry(self, run_id: str) -> Claim:
        """Claim a ``failed_resumable`` run for the caller to retry."""
        ...

    async def proceed(self, claim: Claim, *, surface: Surface = ...) -> RunResult:
        """Continue a claimed run until it finishes, pauses or fails."""
        ...

    async def release(self, claim: Claim) -> None:
        """Give back a claim that will not be continued (its host stops before the leg
        begins): the run is left as a leg cut short leaves it, never ``running`` with no one
        on it."""
        ...

    async def retry(self, run_id: str, *, surface: Surface = ...) -> RunResult:
        """Continue a ``failed_resumable`` run from its last checkpoint."""
        ...

    async def cancel(self, run_id: str, *, reason: str = "cancelled") -> RunResult:
        """Cancel a run that has not ended."""
        ...

    async def expire_due(
        self, *, now: datetime | None = None, resume: bool = True
    ) -> list[RunResult]:
        """Settle what expired; continue (or leave for the caller) runs left with nothing
        open."""
        ...

    async def due_retries(self, *, now: datetime | None = None) -> list[RunRecord]:
        """The ``failed_resumable`` runs whose automatic retry is due."""
        ...

    async def recover(self, *, older_than: float, now: datetime | None = None) -> list[RunResult]:
        """Mark runs stranded in ``running`` as ``failed_resumable``."""
        ...

    async def status(self, run_id: str) -> RunResult:
        """The run as stored: status, open interrupts, last text, error."""
        ...

    async def interaction(self, run_id: str, interaction_id: str) -> InteractionRecord:
        """One interaction of a run."""
        ...

    def view(self, run: RunRecord) -> RunView:
        """What to show of a run: its text, last AG-UI run id, the lines under it."""
        ...
