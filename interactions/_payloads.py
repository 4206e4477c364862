"""Resume payloads: their models, their JSON Schemas, and turning one into an outcome.

A resume answers one interrupt with a status (``resolved`` / ``cancelled``) and a payload of one
of three shapes. Each shape is one strict pydantic model: an approval is a strict bool, extra
keys are refused, nothing ambiguous is guessed.
"""

from __future__ import annotations

from typing import Any, Literal

import jsonschema
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from interactions._errors import InvalidPayloadError
from interactions._models import (
    Answered,
    AnsweredMultiple,
    ApprovalRequest,
    Approved,
    AskUserOutcome,
    AskUserRequest,
    Declined,
    RevisionRequested,
)

__all__ = [
    "AnswerPayload",
    "AnswersPayload",
    "ApprovalPayload",
    "ResumeStatus",
    "check_payload_against_schema",
    "outcome_from_resume",
    "response_schema_for",
]

ResumeStatus = Literal["resolved", "cancelled"]


class _Payload(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


def _non_blank(text: str) -> str:
    if not text.strip():
        raise ValueError("must not be empty")
    return text.strip()


class AnswerPayload(_Payload):
    """``{"answer": "..."}``: the answer to a single-choice or free-text question."""

    answer: str = Field(min_length=1)

    _check = field_validator("answer")(_non_blank)


class AnswersPayload(_Payload):
    """``{"answers": ["...", ...]}``: the answers to a multiple-selection question."""

    answers: list[str] = Field(min_length=1)

    @field_validator("answers")
    @classmethod
    def _answers(cls, answers: list[str]) -> list[str]:
        cleaned = [_non_blank(a) for a in answers]
        if len(set(cleaned)) != len(cleaned):
            raise ValueError("answers must not repeat")
        return cleaned


class ApprovalPayload(_Payload):
    """``{"approved": true|false, "feedback": "..."}``: ``false`` requests a revision."""

    approved: bool
    feedback: str | None = None


_SHAPES: dict[str, type[_Payload]] = {
    "answer": AnswerPayload,
    "answers": AnswersPayload,
    "approved": ApprovalPayload,
}


def _schema_of(model: type[_Payload]) -> dict[str, Any]:
    schema = model.model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    return schema


def response_schema_for(request: AskUserRequest) -> dict[str, Any]:
    """The JSON Schema of the payload a resume of ``request`` must send.

    ``{answer}`` for a single question (an ``enum`` of the option answers when the options are
    fixed), ``{answers}`` for multiple selection (``enum`` items likewise), ``{approved,
    feedback}`` for an approval.
    """
    if isinstance(request, ApprovalRequest):
        return _schema_of(ApprovalPayload)
    fixed = [o.answer for o in request.options] if not request.allow_other else None
    if request.selection == "multiple":
        schema = _schema_of(AnswersPayload)
        items = schema["properties"]["answers"]["items"]
        schema["properties"]["answers"]["uniqueItems"] = True
    else:
        schema = _schema_of(AnswerPayload)
        items = schema["properties"]["answer"]
    if fixed:
        items["enum"] = fixed
    elif request.options:
        items["examples"] = [o.answer for o in request.options]
    return schema


def check_payload_against_schema(
    payload: Any, schema: dict[str, Any], *, interaction_id: str | None = None
) -> None:
    """Raise :class:`InvalidPayloadError` unless ``payload`` satisfies ``schema``."""
    try:
        jsonschema.validate(payload, schema)
    except jsonschema.ValidationError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "payload"
        raise InvalidPayloadError(
            f"{where}: {exc.message}; expected a payload matching the interrupt's response_schema",
            interaction_id=interaction_id,
            reason="invalid_payload",
        ) from None
    except jsonschema.SchemaError as exc:
        raise InvalidPayloadError(
            f"the stored response_schema is not valid JSON Schema: {exc.message}",
            interaction_id=interaction_id,
            reason="invalid_schema",
        ) from None


def outcome_from_resume(
    status: str, payload: Any = None, *, interaction_id: str | None = None
) -> AskUserOutcome:
    """Turn one resume entry into the outcome it means.

    ``cancelled`` → declined. ``resolved`` takes exactly one shape: ``{answer}`` → answered,
    ``{answers}`` → answered_multiple, ``{approved: true, feedback?}`` → approved,
    ``{approved: false, feedback?}`` → revision_requested. Anything else raises
    :class:`InvalidPayloadError` saying what was expected.
    """
    if status == "cancelled":
        return Declined(reason="cancelled")
    if status != "resolved":
        raise InvalidPayloadError(
            f"resume status must be 'resolved' or 'cancelled', got {status!r}",
            interaction_id=interaction_id,
            reason="invalid_status",
        )
    keys = [k for k in _SHAPES if isinstance(payload, dict) and k in payload]
    if len(keys) != 1:
        raise InvalidPayloadError(
            "a resolved payload must be an object with exactly one of 'answer', 'answers' or "
            f"'approved' (got {_describe(payload)})",
            interaction_id=interaction_id,
            reason="invalid_payload",
        )
    try:
        parsed = _SHAPES[keys[0]].model_validate(payload)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or keys[0]
        raise InvalidPayloadError(
            f"{where}: {first['msg']}", interaction_id=interaction_id, reason="invalid_payload"
        ) from None
    if isinstance(parsed, AnswerPayload):
        return Answered(answer=parsed.answer)
    if isinstance(parsed, AnswersPayload):
        return AnsweredMultiple(answers=tuple(parsed.answers))
    assert isinstance(parsed, ApprovalPayload)
    feedback = (parsed.feedback or "").strip() or None
    return Approved(feedback=feedback) if parsed.approved else RevisionRequested(feedback=feedback)


def _describe(payload: Any) -> str:
    if isinstance(payload, dict):
        return f"keys {sorted(str(k) for k in payload)}"
    return type(payload).__name__
