"""The resume payloads' shapes and their JSON Schemas: what an answer to one interrupt holds.

Three shapes, each one strict pydantic model (an approval is a strict bool, extra keys are
refused): ``{answer}``, ``{answers}``, ``{approved, feedback?}``. :func:`schema_of` gives a
shape's schema and :func:`question_schema` a question's (its options as an ``enum`` or as
examples). Nothing here knows the requests or the outcomes: the interrupt models derive their
schema from it, and the payload parser turns a shape into an outcome.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = [
    "ARGS_SCHEMA",
    "OWN_REASONS",
    "SHAPES",
    "AnswerPayload",
    "AnswersPayload",
    "ApprovalPayload",
    "RememberPayload",
    "approval_schema",
    "generated_schema",
    "question_schema",
    "schema_of",
]

OWN_REASONS = frozenset({"input_required", "confirmation"})
"""The reasons of the interrupts the ask helpers make: their response schema is derived (from
the options, the selection and ``allow_other``), never stored."""


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


class RememberPayload(_Payload):
    """``{"scope": "run"|"thread", "args": false}``: a decision on a tool call that holds for
    its later calls in the run, or in the run's thread (its conversation); ``args`` true: only
    for calls with the same arguments."""

    scope: Literal["run", "thread"]
    args: bool = False


class ApprovalPayload(_Payload):
    """``{"approved": true|false, "feedback": "...", "args": {...}, "remember": {...}}``:
    ``false`` requests a revision; ``args`` (an approval of a tool call only) approves the
    call with these arguments instead of the ones it was asked with; ``remember`` (a tool
    call's approval only) makes the decision hold for the tool's later calls: approve always,
    or (with ``false``) deny always."""

    approved: bool
    feedback: str | None = None
    args: dict[str, Any] | None = None
    remember: RememberPayload | None = None


SHAPES: dict[str, type[_Payload]] = {
    "answer": AnswerPayload,
    "answers": AnswersPayload,
    "approved": ApprovalPayload,
}
"""Each shape by the one key that tells it (a resolved payload holds exactly one of them)."""


def generated_schema(model: type[_Payload]) -> dict[str, Any]:
    """``model``'s JSON Schema as pydantic generates it, without titles: what
    :data:`_SCHEMAS` spells out (a test keeps them equal)."""
    schema = model.model_json_schema()
    defs = schema.pop("$defs", {})

    def plain(node: Any) -> Any:  # nested models written in place: a tool's parameter
        if isinstance(node, list):  # schema, set beside them, has "$defs" of its own
            return [plain(item) for item in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            return plain(defs[node["$ref"].rsplit("/", 1)[-1]])
        return {k: plain(v) for k, v in node.items() if k != "title"}

    result: dict[str, Any] = plain(schema)
    result["properties"] = {
        name: plain(prop) for name, prop in schema.get("properties", {}).items()
    }  # a property may be named "title"
    return result


def _object(model: type[_Payload], properties: dict[str, Any], *required: str) -> dict[str, Any]:
    return {
        "additionalProperties": False,
        "description": inspect.cleandoc(model.__doc__ or ""),
        "properties": properties,
        "required": list(required),
        "type": "object",
    }


_REMEMBER = _object(
    RememberPayload,
    {
        "scope": {"enum": ["run", "thread"], "type": "string"},
        "args": {"default": False, "type": "boolean"},
    },
    "scope",
)

_SCHEMAS: dict[type[_Payload], dict[str, Any]] = {
    AnswerPayload: _object(AnswerPayload, {"answer": {"minLength": 1, "type": "string"}}, "answer"),
    AnswersPayload: _object(
        AnswersPayload,
        {"answers": {"items": {"type": "string"}, "minItems": 1, "type": "array"}},
        "answers",
    ),
    ApprovalPayload: _object(
        ApprovalPayload,
        {
            "approved": {"type": "boolean"},
            "feedback": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
            "args": {
                "anyOf": [{"additionalProperties": True, "type": "object"}, {"type": "null"}],
                "default": None,
            },
            "remember": {"anyOf": [_REMEMBER, {"type": "null"}], "default": None},
        },
        "approved",
    ),
}
"""The payload shapes' JSON Schemas, written out: generating them with pydantic costs a fresh
process about a millisecond on its first answer."""


def schema_of(model: type[_Payload]) -> dict[str, Any]:
    """A fresh copy of the JSON Schema of the payload shape ``model`` (the caller may change
    it)."""
    schema: dict[str, Any] = _copied(_SCHEMAS[model])
    return schema


ARGS_SCHEMA = "args_schema"
"""The key, in an approval's ``metadata``, of the JSON Schema of the arguments its approver may
edit (a tool call's parameters): its payload may then carry ``args``; without it, never."""


def approval_schema(args_schema: dict[str, Any] | None = None) -> dict[str, Any]:
    """The response schema of an approval: ``{approved, feedback?}``, and ``args`` of
    ``args_schema`` where its approver may edit the arguments it approves."""
    if args_schema is None:
        plain: dict[str, Any] = _copied(_PLAIN_APPROVAL)
        return plain
    schema = schema_of(ApprovalPayload)
    schema["properties"]["args"] = _copied(args_schema)
    return schema


_PLAIN_APPROVAL = {
    **_SCHEMAS[ApprovalPayload],
    "properties": {
        name: prop
        for name, prop in _SCHEMAS[ApprovalPayload]["properties"].items()
        if name not in ("args", "remember")
    },
}
"""An approval's schema where no arguments may be edited (most of them): copied on every read
of a stored approval, so kept without the parts it leaves out rather than copied whole and cut."""


def _copied(value: Any) -> Any:
    """A deep copy of JSON data (what ``copy.deepcopy`` does, an order faster)."""
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copied(v) for v in value]
    return value


def question_schema(answers: Sequence[str], *, multiple: bool, allow_other: bool) -> dict[str, Any]:
    """The JSON Schema of the payload answering a question whose options record ``answers``:
    ``{answers}`` (unique items) when ``multiple``, else ``{answer}``; the answers as an
    ``enum`` when no other answer is allowed, else as ``examples``."""
    if multiple:
        schema = schema_of(AnswersPayload)
        items = schema["properties"]["answers"]["items"]
        schema["properties"]["answers"]["uniqueItems"] = True
    else:
        schema = schema_of(AnswerPayload)
        items = schema["properties"]["answer"]
    if answers and not allow_other:
        items["enum"] = list(answers)
    elif answers:
        items["examples"] = list(answers)
    return schema
