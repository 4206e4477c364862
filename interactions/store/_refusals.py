"""The refusals every store raises alike when what a call names is not there, or was changed
by another writer: built here once, so every backend raises the same error with the same
fields (``run_id``, ``interaction_id``, ``reason``) and the same message.

The refusals that follow from a decision (a stale version, an illegal move, a second answer)
are raised by :mod:`._rules`, which makes it.
"""

from __future__ import annotations

from interactions._errors import ConflictError, UnknownInteractionError, UnknownRunError

__all__ = [
    "answered_meanwhile",
    "decision_id_taken",
    "run_moved",
    "run_taken",
    "unknown_interaction",
    "unknown_run",
]


def unknown_run(run_id: str) -> UnknownRunError:
    """There is no run ``run_id`` in the store."""
    return UnknownRunError(f"no run {run_id!r} in this store", run_id=run_id, reason="unknown_run")


def unknown_interaction(
    run_id: str, interaction_id: str, advice: str = ""
) -> UnknownInteractionError:
    """The run ``run_id`` (or no run) has no interaction ``interaction_id``; ``advice`` ends
    the message with what to do."""
    return UnknownInteractionError(
        f"run {run_id!r} has no interaction {interaction_id!r}{advice}",
        run_id=run_id,
        interaction_id=interaction_id,
        reason="unknown_interaction",
    )


def run_taken(run_id: str) -> ConflictError:
    """A new run's id is taken (reason ``duplicate_run``)."""
    message = f"a run with id {run_id!r} already exists; choose another id"
    return ConflictError(message, run_id=run_id, reason="duplicate_run")


def run_moved(run_id: str) -> ConflictError:
    """A write's guard found the run at another version than the one it decided on (reason
    ``version``): another writer came first."""
    message = f"run {run_id!r} changed concurrently; re-read the run and decide again"
    return ConflictError(message, run_id=run_id, reason="version")


def answered_meanwhile(run_id: str, interaction_id: str) -> ConflictError:
    """A write's guard found the interaction answered already (reason ``already_answered``):
    the first answer stands."""
    message = f"interaction {interaction_id!r} was answered concurrently; the first answer stands"
    return ConflictError(
        message, run_id=run_id, interaction_id=interaction_id, reason="already_answered"
    )


def decision_id_taken(decision_id: str) -> ConflictError:
    """A new decision's id (a hash of its run and interaction ids) is held by the decision of
    another approval: the 48 bits of the id collided (reason ``duplicate_decision``)."""
    message = (
        f"decision id {decision_id!r} is held by another approval's decision; nothing was written"
    )
    return ConflictError(message, reason="duplicate_decision")
