"""Answers and resumes, for host authors: checked against the interrupt they answer, without I/O.

:func:`resolve_answer` is the one place a payload becomes an outcome (an option's label or value
both record the value); :func:`plan_answer` decides one answer, and :func:`plan_resume` a whole
resume, against the run and its stored interactions: every engine and host calls them, so an
answer is refused for the same reasons, with the same typed errors, wherever it arrives.
Nothing is written when they raise.
"""

from interactions._answer import RUN_ENDED, AnswerPlan, plan_answer
from interactions._format import format_interaction_resume
from interactions._payloads import (
    MAX_PAYLOAD_BYTES,
    ResumeStatus,
    check_payload_against_schema,
    check_text,
    normalize_answer,
    outcome_from_resume,
    parse_json,
    resolve_answer,
    response_schema_for,
)
from interactions._resume import (
    ResumePlan,
    answer_outcome,
    new_answer,
    parse_resume_entries,
    plan_resume,
    same_as_stored,
    validate_answer,
)
from interactions._schemas import AnswerPayload, AnswersPayload, ApprovalPayload

__all__ = [
    "MAX_PAYLOAD_BYTES",
    "RUN_ENDED",
    "AnswerPayload",
    "AnswerPlan",
    "AnswersPayload",
    "ApprovalPayload",
    "ResumePlan",
    "ResumeStatus",
    "answer_outcome",
    "check_payload_against_schema",
    "check_text",
    "format_interaction_resume",
    "new_answer",
    "normalize_answer",
    "outcome_from_resume",
    "parse_json",
    "parse_resume_entries",
    "plan_answer",
    "plan_resume",
    "resolve_answer",
    "response_schema_for",
    "same_as_stored",
    "validate_answer",
]
