"""The checkpoint envelope: what every run kind keeps about the run itself, whatever drives it.

Every driver's checkpoint is a :class:`RunEnvelope` (it subclasses it and adds its own state:
a transcript, a workflow's cursors), so the kernel reads and closes every kind's the same way:
the expiry policy the sweep applies, the automatic retries the retry sweep runs, the leg count
and the AG-UI run id of the last leg (the next leg names it as its parent), the retries in a
row that failed again, and where the run's trace stands (the next leg's span continues it).
Its fields sit at the checkpoint's top level, where every earlier version wrote them.

Pure: :meth:`RunEnvelope.next_leg` and :meth:`RunEnvelope.closing` decide, the driver writes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from interactions.store import EventInput, RunStatus
from recipes.policy import Policy, kept_policy, policy_of
from recipes.runs._auto_retry import RETRY_SCHEDULED, RETRY_SKIPPED, RetrySchedule, plan_retry
from recipes.tracing import TraceRef

__all__ = [
    "ExpiryPolicy",
    "KeptPolicy",
    "LegIds",
    "RunEnvelope",
    "continuing_policy",
    "default_agui_run_id",
]

ExpiryPolicy = Literal["decline", "fail"]
"""What happens when an interrupt expires: ``decline`` answers it as a decline and the run
goes on; ``fail`` fails the run."""

_FAILED = (RunStatus.FAILED, RunStatus.FAILED_RESUMABLE)


def default_agui_run_id(run_id: str, leg: int) -> str:
    """The default AG-UI run id of a run's ``leg`` (from 1): the run's id, then ``<id>.<n>``."""
    return run_id if leg <= 1 else f"{run_id}.{leg}"


@dataclass(frozen=True)
class LegIds:
    """One leg's place in its run: its number (from 1), its AG-UI run id, and the AG-UI run id
    of the leg it continues (``None`` for a run's first)."""

    number: int
    run: str
    parent: str | None


class KeptPolicy(BaseModel):
    """The approval policy a run started under: its file's path and text (a run continues
    under it where the process continuing it names no policy of its own)."""

    path: str
    text: str

    def policy(self) -> Policy:
        """The policy itself (parsed once per process)."""
        return kept_policy(self.path, self.text)

    @classmethod
    def of(cls, env: Mapping[str, str], cwd: Path) -> KeptPolicy | None:
        """What a run starting in ``env`` keeps: the policy it names, else ``None``."""
        policy = policy_of(env, cwd)
        return cls(path=str(policy.path), text=policy.text) if policy is not None else None


def continuing_policy(kept: KeptPolicy | None, env: Mapping[str, str], cwd: Path) -> Policy | None:
    """The policy a leg passes its session: the run's kept one, unless the continuing process
    names its own (then the gate reads that one from the environment, so ``None`` here)."""
    if kept is None or policy_of(env, cwd) is not None:
        return None
    return kept.policy()


class RunEnvelope(BaseModel):
    """The fields every run kind's checkpoint shares (see the module docstring).

    ``expiry_policy``: what an expired question does to the run. ``auto_resume``: the
    automatic retries the run opted into (``None``: none). ``leg``: the legs so far (a start,
    then each resume or retry). ``agui_run_id``: the last leg's AG-UI run id. ``retries``: the
    retries in a row that ended failing again (a leg that does not fail resets it).
    ``policy``: the approval policy the run started under (:class:`KeptPolicy`). ``trace``:
    the trace context of the last leg's span (:class:`~recipes.tracing.TraceRef`; ``None``
    until a leg ran with tracing on), the parent of the next leg's span, in any process.
    """

    expiry_policy: ExpiryPolicy = "decline"
    auto_resume: RetrySchedule | None = None
    leg: int = Field(default=0, ge=0)
    agui_run_id: str | None = None
    retries: int = Field(default=0, ge=0)
    policy: KeptPolicy | None = None
    trace: TraceRef | None = None

    def next_leg(self, run_id: str, chosen: str | None = None) -> LegIds:
        """The ids of the leg that starts now: its number, its AG-UI run id (``chosen`` by the
        host's client, else :func:`default_agui_run_id`), and its parent (the last leg's)."""
        number = self.leg + 1
        return LegIds(number, chosen or default_agui_run_id(run_id, number), self.agui_run_id)

    def closing(
        self,
        leg: LegIds,
        status: RunStatus,
        *,
        code: str | None = None,
        retry_after: float | None = None,
        trace: TraceRef | None = None,
        now: datetime,
    ) -> tuple[dict[str, Any], list[EventInput]]:
        """What the envelope becomes when ``leg`` ends in ``status``, as field updates, and the
        events that say so: the leg is counted; a leg that does not fail resets the retries in
        a row; a resumable failure of a run that opted into automatic retries plans the next
        one (``run_retry_scheduled``, due after the provider's ``retry_after`` or the backoff)
        or says none is left (``run_retry_skipped``). ``code`` is the failure's code; ``trace``, the
        leg span's context to keep (``None``: the envelope keeps the one it has)."""
        updates: dict[str, Any] = {
            "leg": leg.number,
            "agui_run_id": leg.run,
            "retries": self.retries if status in _FAILED else 0,
        }
        if trace is not None:
            updates["trace"] = trace
        events: list[EventInput] = []
        schedule = self.auto_resume
        if status is RunStatus.FAILED_RESUMABLE and schedule is not None:
            planned = plan_retry(schedule, retry_after=retry_after, now=now)
            if planned is None:
                updates["auto_resume"] = schedule.model_copy(update={"due_at": None})
                events.append((RETRY_SKIPPED, {"reason": "budget_spent", "code": code,
                                               "attempts": schedule.attempts,
                                               "max": schedule.max}))  # fmt: skip
            else:
                updates["auto_resume"], data = planned
                events.append((RETRY_SCHEDULED, {**data, "reason": code}))
        return updates, events
