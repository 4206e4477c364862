"""The three error families of pi-recipes.

- Signals raised on purpose and turned into data at one boundary: :class:`InteractionAborted`
  (the turn was aborted while a human was being asked).
- Misuse by the developer: :class:`UsageError` (a wrong registration, a bad recipe, a call that
  can never work). Fix the code; retrying will not help. :class:`ContractError` is the misuse
  that would skip a human silently (a second ask after a pause, a pause the tool did not
  return, a configuration the run cannot keep): it fails the run, it never becomes a tool
  result the model reads.
- Run-time failures: :class:`RunError` and its subclasses. They carry fields, not only a message,
  so hosts can map them (a conflict is an HTTP 409, an unknown id a 404, ...).

:data:`ERROR_CODES` is the one table of what each error is called, the exit code the command line
returns for it and the HTTP status a web host answers with; :func:`error_code` reads it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType


class PiRecipesError(Exception):
    """Base class of every error pi-recipes raises on purpose."""


class UsageError(PiRecipesError, ValueError):
    """The developer used the SDK in a way that can never work (bad arguments, bad recipe)."""


class ContractError(UsageError):
    """A tool broke the ask contract in a way that would skip a human silently.

    Raised for a second ask after an ask came back ``awaiting_user`` (the run can only pause
    once per call), for a tool that returned something other than that pause, and for a
    configuration the run cannot keep (a malformed ``PI_INTERRUPT_TTL_SECONDS``). The agent
    loop lets it fail the run instead of turning it into a tool result.
    """


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
    """A run-time failure of a run or an interaction. ``run_id`` / ``interaction_id`` say where;
    ``hint`` (when set) is the one thing to do next (``retry it with: pi-recipes runs retry
    run-1``)."""

    def __init__(
        self,
        message: str,
        *,
        run_id: str | None = None,
        interaction_id: str | None = None,
        reason: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.run_id = run_id
        self.interaction_id = interaction_id
        self.reason = reason
        self.hint = hint


class ConflictError(RunError):
    """A second, different write lost a race or contradicts what is stored (HTTP 409)."""


class ExpiredError(RunError):
    """The interaction passed its ``expires_at``; its answer can no longer be given."""


class UnknownRunError(RunError):
    """No run with that id exists in the store."""


class UnknownInteractionError(RunError):
    """No interaction with that id is open (or known) for that run."""


class UnknownDecisionError(RunError):
    """No remembered approval decision with that id exists in the store (HTTP 404).

    ``decision_id`` names the id looked for (``run_id`` is ``None``: the id names no run).
    """

    def __init__(
        self,
        message: str,
        *,
        decision_id: str | None = None,
        run_id: str | None = None,
        interaction_id: str | None = None,
        reason: str | None = None,
    ) -> None:
        super().__init__(message, run_id=run_id, interaction_id=interaction_id, reason=reason)
        self.decision_id = decision_id


class NotAllowedError(RunError):
    """The one answering is not among the interrupt's approvers (HTTP 403): nothing was stored.

    ``approvers`` names who may answer (names and ``group:NAME`` entries).
    """

    def __init__(
        self,
        message: str,
        *,
        run_id: str | None = None,
        interaction_id: str | None = None,
        reason: str | None = None,
        approvers: tuple[str, ...] = (),
    ) -> None:
        super().__init__(message, run_id=run_id, interaction_id=interaction_id, reason=reason)
        self.approvers = approvers


class InvalidPayloadError(RunError):
    """A resume or answer payload does not match the interrupt's ``response_schema``."""


class UnreadableInteractionError(RunError):
    """A stored interaction this pi-recipes cannot read as a pause record (reason
    ``unreadable``): its descriptor was written by another tool, another version or by hand
    (:attr:`~interactions.store.InteractionRecord.unreadable` says why). It cannot be answered
    here (HTTP 409) and nothing was written; the run's other interactions, and the rest of the
    store, stay usable."""


class IllegalTransitionError(RunError):
    """A run was asked to move between two statuses the state table does not connect."""


class StoreUnavailableError(RunError):
    """The store cannot serve the call now: busy past its lock bound, read-only, unreachable.

    ``reason`` says which (``busy``, ``read_only``, ``unreachable``, ``io``, ``corrupt``: a
    damaged file, which only a backup or a new store cures). Nothing was
    written; the call may succeed later or elsewhere.
    """


@dataclass(frozen=True)
class ErrorCode:
    """How an error is reported: its short ``label``, the command line's ``exit_code`` and the
    ``http_status`` a web host answers with."""

    label: str
    exit_code: int
    http_status: int


ERROR_CODES: Mapping[type[PiRecipesError], ErrorCode] = MappingProxyType(
    {
        ConflictError: ErrorCode("conflict", 3, 409),
        IllegalTransitionError: ErrorCode("conflict", 3, 409),
        UnreadableInteractionError: ErrorCode("unreadable interaction", 3, 409),
        UnknownRunError: ErrorCode("unknown run", 4, 404),
        UnknownInteractionError: ErrorCode("unknown interaction", 4, 404),
        UnknownDecisionError: ErrorCode("unknown decision", 4, 404),
        ExpiredError: ErrorCode("expired", 5, 410),
        InvalidPayloadError: ErrorCode("invalid payload", 6, 422),
        StoreUnavailableError: ErrorCode("store unavailable", 7, 503),
        NotAllowedError: ErrorCode("not allowed", 8, 403),
        UsageError: ErrorCode("usage", 2, 400),
    }
)
"""The one table of error reports: exit 3 / HTTP 409 a conflict (or an answer to an interaction
stored in a form this version cannot read), 4 / 404 an unknown id,
5 / 410 an expired interaction, 6 / 422 a payload off the schema, 7 / 503 a store that cannot
serve now (busy, read-only, unreachable), 8 / 403 an answer by someone not among the
approvers, 2 / 400 a usage error. An
error found in no row (by its class or a base class) is 1 / 500."""

_OTHER = ErrorCode("error", 1, 500)


def error_code(error: BaseException) -> ErrorCode:
    """The :class:`ErrorCode` of ``error``: its class's row, else its nearest base class's."""
    for cls in type(error).__mro__:
        code = ERROR_CODES.get(cls)
        if code is not None:
            return code
    return _OTHER
