"""Run statuses and their legal transitions, in one table (the h11 ``_state.py`` shape).

The table is the only place that says which moves are legal; the stores call
:func:`check_transition` and never decide on their own. A status with no way out is terminal.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from types import MappingProxyType

from interactions._errors import IllegalTransitionError

__all__ = ["TERMINAL_STATUSES", "TRANSITIONS", "RunStatus", "check_transition", "is_terminal"]


class RunStatus(StrEnum):
    """Where a run is in its life. Stored as its string value."""

    RUNNING = "running"
    """The agent loop is working (or is allowed to pick the run up and continue)."""
    PAUSED_WAITING_HUMAN = "paused_waiting_human"
    """Stopped on open interrupts; continues when a resume answers every one of them."""
    FINISHED = "finished"
    """Completed normally. Terminal."""
    FAILED = "failed"
    """Failed for good (a bug, a refused resume that can never succeed). Terminal."""
    FAILED_RESUMABLE = "failed_resumable"
    """Failed on something that may pass on a retry (a model outage); may run again."""
    CANCELLED = "cancelled"
    """Stopped by a person or a host. Terminal."""


_S = RunStatus

TRANSITIONS: Mapping[RunStatus, frozenset[RunStatus]] = MappingProxyType(
    {
        _S.RUNNING: frozenset(
            {_S.PAUSED_WAITING_HUMAN, _S.FINISHED, _S.FAILED, _S.FAILED_RESUMABLE, _S.CANCELLED}
        ),
        _S.PAUSED_WAITING_HUMAN: frozenset({_S.RUNNING, _S.CANCELLED, _S.FAILED}),
        _S.FAILED_RESUMABLE: frozenset({_S.RUNNING, _S.CANCELLED}),
        _S.FINISHED: frozenset(),
        _S.FAILED: frozenset(),
        _S.CANCELLED: frozenset(),
    }
)
"""For each status, the statuses a run may move to next. Staying put is not a transition."""

TERMINAL_STATUSES: frozenset[RunStatus] = frozenset(s for s, nxt in TRANSITIONS.items() if not nxt)
"""Statuses with no way out: a run there can no longer be updated (events may still be added)."""


def is_terminal(status: RunStatus) -> bool:
    """Return whether ``status`` has no legal way out."""
    return not TRANSITIONS[status]


def check_transition(old: RunStatus, new: RunStatus, *, run_id: str | None = None) -> None:
    """Return if the table allows ``old -> new``; raise otherwise.

    Raises :class:`~interactions.IllegalTransitionError` (``reason`` ``"old->new"``) for every
    pair the table does not list, including ``old == new``: callers that only want to keep the
    status pass no status at all.
    """
    if new in TRANSITIONS[old]:
        return
    allowed = ", ".join(sorted(TRANSITIONS[old])) or "nothing (terminal status)"
    raise IllegalTransitionError(
        f"run status cannot move from {old.value!r} to {new.value!r}; "
        f"from {old.value!r} it may move to: {allowed}",
        run_id=run_id,
        reason=f"{old.value}->{new.value}",
    )
