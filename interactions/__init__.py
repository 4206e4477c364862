"""pi-recipes interactions: the contract for tools that need a human.

A tool calls :func:`ask_user_question` or :func:`ask_user_approval`; the channel chain resolves
the ask wherever the agent runs (an auto-resolving scope, the auto-approve flag, a dialog, an
interrupt that pauses the run, or a plain "unavailable") and returns an
:class:`AskUserResult` whose text is the exact outcome text of the design. The tool returns it.

This top level is what a tool author needs. Host authors find the rest in submodules:
:mod:`interactions.channels` (the chain), :mod:`interactions.dialogs` (the dialog walk and the
``DialogUI`` protocol), :mod:`interactions.asks` (requests, contexts, interrupt ids),
:mod:`interactions.resume` (answers checked against interrupts), :mod:`interactions.errors`
(the error table), :mod:`interactions.store` (durable state) and :mod:`interactions.testing`.

Errors come in three families, kept apart:

- signals raised on purpose: :class:`InteractionAborted` — the turn was aborted while a human
  was asked. Never a decline. It is an ``Exception``; a tool that catches it must re-raise it.
  A pause, by contrast, is never an exception: it is data (a result whose outcome is
  ``awaiting_user``), so a tool's broad ``except Exception`` cannot swallow it — and a tool
  that does not return it gets a :class:`ContractError`.
- misuse by the developer: :class:`UsageError` (also a ``ValueError``) — bad arguments that can
  never work (an empty question, ``selection="multiple"`` without options, ...). Its subclass
  :class:`ContractError` is the misuse that would skip a human silently; it fails the run.
- run-time failures: :class:`RunError` and its subclasses (:class:`ConflictError`,
  :class:`ExpiredError`, :class:`UnknownRunError`, :class:`UnknownInteractionError`,
  :class:`UnknownDecisionError`, :class:`InvalidPayloadError`, :class:`NotAllowedError`,
  :class:`IllegalTransitionError`, :class:`UnreadableInteractionError`), carrying
  ``run_id``, ``interaction_id`` and ``reason`` (and ``decision_id`` for an unknown decision,
  ``approvers`` for an answer by someone not among them).
"""

from interactions._ask import (
    DEFAULT_INTERRUPT_TTL,
    INTERRUPT_TTL_ENV,
    ask_user,
    ask_user_approval,
    ask_user_question,
)
from interactions._chain import AUTO_APPROVE_ENV, INTERRUPT_RESUME_ENV, auto_resolve_interactions
from interactions._errors import (
    ConflictError,
    ContractError,
    ExpiredError,
    IllegalTransitionError,
    InteractionAborted,
    InvalidPayloadError,
    NotAllowedError,
    PiRecipesError,
    RunError,
    UnknownDecisionError,
    UnknownInteractionError,
    UnknownRunError,
    UnreadableInteractionError,
    UsageError,
)
from interactions._format import (
    AWAITING_TEXT,
    DECLINED_TEXT,
    UNAVAILABLE_TEXT,
    format_interaction_outcome,
)
from interactions._models import (
    Answered,
    AnsweredMultiple,
    Approved,
    AskUserDisplay,
    AskUserInterrupt,
    AskUserOption,
    AskUserOutcome,
    AskUserResult,
    AskUserSection,
    AwaitingUser,
    Declined,
    Remember,
    RevisionRequested,
    Unavailable,
    is_awaiting,
)

__all__ = [
    "AUTO_APPROVE_ENV",
    "AWAITING_TEXT",
    "DECLINED_TEXT",
    "DEFAULT_INTERRUPT_TTL",
    "INTERRUPT_RESUME_ENV",
    "INTERRUPT_TTL_ENV",
    "UNAVAILABLE_TEXT",
    "Answered",
    "AnsweredMultiple",
    "Approved",
    "AskUserDisplay",
    "AskUserInterrupt",
    "AskUserOption",
    "AskUserOutcome",
    "AskUserResult",
    "AskUserSection",
    "AwaitingUser",
    "ConflictError",
    "ContractError",
    "Declined",
    "ExpiredError",
    "IllegalTransitionError",
    "InteractionAborted",
    "InvalidPayloadError",
    "NotAllowedError",
    "PiRecipesError",
    "Remember",
    "RevisionRequested",
    "RunError",
    "Unavailable",
    "UnknownDecisionError",
    "UnknownInteractionError",
    "UnknownRunError",
    "UnreadableInteractionError",
    "UsageError",
    "ask_user",
    "ask_user_approval",
    "ask_user_question",
    "auto_resolve_interactions",
    "format_interaction_outcome",
    "is_awaiting",
]
