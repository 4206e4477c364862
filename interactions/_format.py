"""The exact texts a tool result carries for each outcome (the design's table, byte for byte)."""

from __future__ import annotations

import json
from typing import Any

from interactions._models import (
    Answered,
    AnsweredMultiple,
    Approved,
    AskUserOutcome,
    AwaitingUser,
    Declined,
    RevisionRequested,
    Unavailable,
)
from interactions._payloads import outcome_from_resume

__all__ = [
    "AWAITING_TEXT",
    "DECLINED_TEXT",
    "UNAVAILABLE_TEXT",
    "format_interaction_outcome",
    "format_interaction_resume",
]

DECLINED_TEXT = "User declined to answer. Proceed with your best judgment."
AWAITING_TEXT = "Awaiting user response."
UNAVAILABLE_TEXT = (
    "User interaction is unavailable in this session; nothing was shown to the user. "
    "Ask the user in your normal assistant reply instead, and continue after they respond."
)


def _with_feedback(head: str, feedback: str | None) -> str:
    return f"{head} Feedback: {feedback}" if feedback else head


def format_interaction_outcome(outcome: AskUserOutcome) -> str:
    """The tool-result text the model reads for ``outcome``."""
    match outcome:
        case Answered(answer=answer):
            return f"Answer: {answer}"
        case AnsweredMultiple(answers=answers):
            return "Answers: " + json.dumps(
                list(answers), separators=(",", ":"), ensure_ascii=False
            )
        case Approved(feedback=feedback, args=None, approved_by=names) if names:
            return _with_feedback(f"Approved by {', '.join(names)}.", feedback)
        case Approved(feedback=feedback, args=None):
            return _with_feedback("Approved.", feedback)
        case Approved(feedback=feedback, args=args):
            edited = json.dumps(args, separators=(",", ":"), ensure_ascii=False)
            return _with_feedback(f"Approved with edited arguments: {edited}.", feedback)
        case RevisionRequested(feedback=feedback):
            return _with_feedback("Revision requested.", feedback)
        case Declined():
            return DECLINED_TEXT
        case AwaitingUser():
            return AWAITING_TEXT
        case Unavailable():
            return UNAVAILABLE_TEXT
    raise TypeError(f"not an AskUserOutcome: {type(outcome).__name__}")


def format_interaction_resume(*, status: str, payload: Any = None) -> str:
    """The tool-result text for a resume entry (``status`` plus ``payload``).

    Raises :class:`~interactions.InvalidPayloadError` when the payload has none of the shapes.
    """
    return format_interaction_outcome(outcome_from_resume(status, payload))
