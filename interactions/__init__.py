"""pi-recipes interactions: the contract for tools that need a human.

A tool calls :func:`ask_user_question` or :func:`ask_user_approval`; the channel chain resolves
the ask wherever the agent runs (an auto-resolving scope, the auto-approve flag, a dialog, an
interrupt that pauses the run, or a plain "unavailable") and returns an
:class:`AskUserResult` whose text is the exact outcome text of the design.

Errors come in three families, kept apart:

- signals raised on purpose: :class:`InteractionAborted` — the turn was aborted while a human
  was asked. Never a decline. It is an ``Exception``; a tool that catches it must re-raise it.
  A pause, by contrast, is never an exception: it is data (a result whose outcome is
  ``awaiting_user``), so a tool's broad ``except Exception`` cannot swallow it.
- misuse by the developer: :class:`UsageError` (also a ``ValueError``) — bad arguments that can
  never work (an empty question, ``selection="multiple"`` without options, ...).
- run-time failures: :class:`RunError` and its subclasses (:class:`ConflictError`,
  :class:`ExpiredError`, :class:`UnknownRunError`, :class:`UnknownInteractionError`,
  :class:`InvalidPayloadError`, :class:`IllegalTransitionError`), carrying ``run_id``,
  ``interaction_id`` and ``reason``.

Durable state lives in :mod:`interactions.store` (SQLite, the embedded default, and an
in-memory store); :func:`plan_resume` decides, without I/O, whether a resume is accepted.
"""

from interactions._ask import (
    DEFAULT_INTERRUPT_TTL,
    INTERRUPT_TTL_ENV,
    ask_user,
    ask_user_approval,
    ask_user_question,
    interrupt_id_for,
    normalize_options,
)
from interactions._chain import (
    AUTO_APPROVE_ENV,
    DEFAULT_CHANNELS,
    INTERRUPT_RESUME_ENV,
    RPC_DIALOG_TIMEOUT,
    AskCall,
    Channel,
    ChannelFacts,
    auto_resolve_interactions,
    flag_on,
    gather_facts,
    select_channel,
)
from interactions._context import DialogUI, Mode, MultiSelectUI, ToolContextLike
from interactions._dialog import (
    DialogStep,
    InputStep,
    MultiSelectStep,
    SelectStep,
    dialog_walk,
    run_dialog,
)
from interactions._errors import (
    ConflictError,
    ExpiredError,
    IllegalTransitionError,
    InteractionAborted,
    InvalidPayloadError,
    PiRecipesError,
    RunError,
    UnknownInteractionError,
    UnknownRunError,
    UsageError,
)
from interactions._format import (
    AWAITING_TEXT,
    DECLINED_TEXT,
    UNAVAILABLE_TEXT,
    format_interaction_outcome,
    format_interaction_resume,
)
from interactions._models import (
    Answered,
    AnsweredMultiple,
    ApprovalRequest,
    Approved,
    AskUserDetails,
    AskUserDisplay,
    AskUserInterrupt,
    AskUserOption,
    AskUserOutcome,
    AskUserRequest,
    AskUserResult,
    AskUserSection,
    AwaitingUser,
    Declined,
    QuestionRequest,
    RevisionRequested,
    Selection,
    TextContent,
    Unavailable,
)
from interactions._payloads import (
    AnswerPayload,
    AnswersPayload,
    ApprovalPayload,
    check_payload_against_schema,
    outcome_from_resume,
    response_schema_for,
)
from interactions._resume import ResumePlan, parse_resume_entries, plan_resume

__all__ = [
    "AUTO_APPROVE_ENV",
    "AWAITING_TEXT",
    "DECLINED_TEXT",
    "DEFAULT_CHANNELS",
    "DEFAULT_INTERRUPT_TTL",
    "INTERRUPT_RESUME_ENV",
    "INTERRUPT_TTL_ENV",
    "RPC_DIALOG_TIMEOUT",
    "UNAVAILABLE_TEXT",
    "AnswerPayload",
    "Answered",
    "AnsweredMultiple",
    "AnswersPayload",
    "ApprovalPayload",
    "ApprovalRequest",
    "Approved",
    "AskCall",
    "AskUserDetails",
    "AskUserDisplay",
    "AskUserInterrupt",
    "AskUserOption",
    "AskUserOutcome",
    "AskUserRequest",
    "AskUserResult",
    "AskUserSection",
    "AwaitingUser",
    "Channel",
    "ChannelFacts",
    "ConflictError",
    "Declined",
    "DialogStep",
    "DialogUI",
    "ExpiredError",
    "IllegalTransitionError",
    "InputStep",
    "InteractionAborted",
    "InvalidPayloadError",
    "Mode",
    "MultiSelectStep",
    "MultiSelectUI",
    "PiRecipesError",
    "QuestionRequest",
    "ResumePlan",
    "RevisionRequested",
    "RunError",
    "SelectStep",
    "Selection",
    "TextContent",
    "ToolContextLike",
    "Unavailable",
    "UnknownInteractionError",
    "UnknownRunError",
    "UsageError",
    "ask_user",
    "ask_user_approval",
    "ask_user_question",
    "auto_resolve_interactions",
    "check_payload_against_schema",
    "dialog_walk",
    "flag_on",
    "format_interaction_outcome",
    "format_interaction_resume",
    "gather_facts",
    "interrupt_id_for",
    "normalize_options",
    "outcome_from_resume",
    "parse_resume_entries",
    "plan_resume",
    "response_schema_for",
    "run_dialog",
    "select_channel",
]
