"""The three error families of pi-recipes.

- Signals raised on purpose and turned into data at one boundary: :class:`InteractionAborted`
  (the turn was aborted while a human was being asked).
- Misuse by the developer: :class:`UsageError` (a wrong registration, a bad recipe, a call that
  can never work). Fix the code; retrying will not help.
- Run-time failures: :class:`RunError` and its subclasses. They carry fields, not only a message,
  so hosts can map them (a conflict is an HTTP 409, an unknown id a 404, ...).
"""

from __future__ import annotations

__all__ = [
    "ConflictError",
    "ExpiredError",
    "IllegalTransitionError",
    "InteractionAborted",
    "InvalidPayloadError",
    "PiRecipesError",
    "RunError",
    "UnknownInteractionError",
    "UnknownRunError",
    "UsageError",
]


class PiRecipesError(Exception):
    """Base class of every error pi-recipes raises on purpose."""


class UsageError(PiRecipesError, ValueError):
    """The developer used the SDK in a way that can never work (bad arguments, bad recipe)."""


class InteractionAborted(PiRecipesError):
    """The turn was aborted (cancelled, or the UI reported an abort) while a human was asked.

    This is never a decline: the tool call fails with this error and the agent loop records the
    abort. It subclasses ``Exception``, so a tool's broad ``except Exception`` can catch it; a
    tool that does so must re-raise it.
    """

    def __init__(self, message: str = "the turn was aborted", *, tool_call_id: str | None = None):
        super().__init__(message)
        self.tool_call_id = tool_call_id


class RunError(PiRecipesError):
    """A run-time failure of a run or an interaction. ``run_id`` / ``interaction_id`` say where."""

    def __init__(
        self,
        message: str,
        *,
        run_id: str | None = None,
        interaction_id: str | None = None,
        reason: str | None = None,
    ) -> None:
        super().__init__(message)
        self.run_id = run_id
        self.interaction_id = interaction_id
        self.reason = reason


class ConflictError(RunError):
    """A second, different write lost a race or contradicts what is stored (HTTP 409)."""


class ExpiredError(RunError):
    """The interaction passed its ``expires_at``; its answer can no longer be given."""


class UnknownRunError(RunError):
    """No run with that id exists in the store."""


class UnknownInteractionError(RunError):
    """No interaction with that id is open (or known) for that run."""


class InvalidPayloadError(RunError):
    """A resume or answer payload does not match the interrupt's ``response_schema``."""


class IllegalTransitionError(RunError):
    """A run was asked to move between two statuses the state table does not connect."""
