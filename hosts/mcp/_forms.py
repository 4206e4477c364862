"""An ask as an MCP elicitation form, and the client's reply as the ask's outcome (pure, no I/O).

:func:`elicitation_form` turns a request into the ``message`` and ``requestedSchema`` of an
``elicitation/create`` request (form mode, the flat schema subset MCP allows):

========================  ==========================================================
ask                       form fields
========================  ==========================================================
free-text question        ``answer``: a string (required)
one of the options        ``answer``: a string enum, ``oneOf`` const = the option's
                          value, title = its label; with ``allow_other`` also
                          ``other``: a string, and ``answer`` is optional
several of the options    ``answers``: an array of enum strings (``anyOf`` const/title);
                          with ``allow_other`` also ``other``
approval                  ``approved``: a boolean (required, default false) and
                          ``feedback``: an optional string; a tool's declared approval
                          whose arguments are all flat also ``arg_NAME`` per argument,
                          defaulting to the call's own (a changed one edits it)
========================  ==========================================================

Those are the shapes of MCP 2025-11-25, which added titled enums and arrays. A client that
negotiated an earlier version (2025-06-18, the first with elicitation) knows neither, so its
forms use that version's shapes (``protocol_version=``): one of the options is ``answer``, a
string ``enum`` of the values with the labels as ``enumNames``; several of the options are one
boolean per option (``option_1``, ``option_2``... titled with the labels, default false), the
checked ones being the answers. The rest is the same.

:func:`read_elicitation` reads the client's reply as the dialog walk would read the same
choices: ``accept`` answers (a typed ``other`` wins over a picked option and is matched
against the labels, so typing a label records that option's value; nothing picked and nothing
typed is a decline), approves (``approved: true``) or requests a revision (``approved:
false``), with the feedback trimmed; ``decline`` and ``cancel`` are a decline. Content that
does not match the form (a value outside the enum, a wrong type, an unknown or missing field;
a field left out or sent as ``null`` takes the form's default, if it declares one) is refused
with :class:`~interactions.InvalidPayloadError`: a client's malformed reply is never guessed
into an answer, nor passed off as the human's decline.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hosts._kit import call_arguments, flat_parameters
from hosts.mcp._wire import sendable
from interactions import (
    Answered,
    AnsweredMultiple,
    Approved,
    AskUserOption,
    AskUserOutcome,
    Declined,
    InvalidPayloadError,
    RevisionRequested,
)
from interactions.asks import ApprovalRequest, AskUserRequest, QuestionRequest
from interactions.dialogs import dialog_title
from interactions.resume import check_payload_against_schema, normalize_answer

__all__ = [
    "ANSWER",
    "ANSWERS",
    "APPROVED",
    "ARG_PREFIX",
    "FEEDBACK",
    "OTHER",
    "TITLED_ENUMS_SINCE",
    "ElicitationForm",
    "elicitation_form",
    "read_elicitation",
]

TITLED_ENUMS_SINCE = "2025-11-25"
"""The first MCP protocol version whose forms take titled enums (``oneOf``/``anyOf``) and
arrays; a client on an earlier one gets enums with ``enumNames`` and one boolean per option."""

ANSWER = "answer"
ANSWERS = "answers"
OTHER = "other"
APPROVED = "approved"
ARG_PREFIX = "arg_"
"""The prefix of a form field holding a tool call's argument (``arg_env``), for its approver
to edit."""
FEEDBACK = "feedback"

OTHER_DESCRIPTION = "Or type your own answer; when given, it is used instead of a choice above."
APPROVED_DESCRIPTION = "Check to approve; submit unchecked to request changes."
FEEDBACK_DESCRIPTION = "Optional: what should change?"


@dataclass(frozen=True)
class ElicitationForm:
    """What an ``elicitation/create`` request (form mode) carries: the ``message`` shown to the
    human and the ``requested_schema`` of the form (a flat JSON Schema object)."""

    message: str
    requested_schema: dict[str, Any]


def _described(options: tuple[AskUserOption, ...]) -> dict[str, str]:
    lines = [f"{o.label}: {o.description}" for o in options if o.description]
    return {"description": "\n".join(lines)} if lines else {}


def _other() -> dict[str, Any]:
    return {"type": "string", "title": "Other", "description": OTHER_DESCRIPTION}


def _titled(protocol_version: str | None) -> bool:
    """Whether a client on ``protocol_version`` (``None``: the latest) reads titled enums.
    MCP versions are dates, so they compare as strings."""
    return protocol_version is None or protocol_version >= TITLED_ENUMS_SINCE


def _option_key(position: int) -> str:
    return f"option_{position + 1}"


def _legacy_choices(request: QuestionRequest) -> dict[str, Any]:
    """The properties of a choice in the 2025-06-18 shapes (see the module docstring)."""
    if request.selection == "multiple":
        return {
            _option_key(i): {"type": "boolean", "title": o.label, "default": False}
            | ({"description": o.description} if o.description else {})
            for i, o in enumerate(request.options)
        }
    labels = dict[str, str]()
    for option in request.options:  # two options may share a value: the first one's label
        labels.setdefault(option.answer, option.label)
    answer = {"type": "string", "title": "Answer", "enum": list(labels)}
    return {ANSWER: answer | {"enumNames": list(labels.values())} | _described(request.options)}


def _question_schema(request: QuestionRequest, titled: bool) -> dict[str, Any]:
    if not request.options:
        props: dict[str, Any] = {ANSWER: {"type": "string", "title": "Answer"}}
        return {"type": "object", "properties": props, "required": [ANSWER]}
    choices = [{"const": o.answer, "title": o.label} for o in request.options]
    required: list[str]
    if not titled:
        props = _legacy_choices(request)
        required = [] if request.allow_other or request.selection == "multiple" else [ANSWER]
    elif request.selection == "multiple":
        props = {
            ANSWERS: {
                "type": "array",
                "title": "Answers",
                "items": {"anyOf": choices},
                **_described(request.options),
            }
        }
        required = []
    else:
        props = {
            ANSWER: {"type": "string", "title": "Answer", "oneOf": choices}
            | _described(request.options)
        }
        required = [] if request.allow_other else [ANSWER]
    if request.allow_other:
        props[OTHER] = _other()
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        schema["required"] = required
    return schema


def _approval_schema(request: ApprovalRequest) -> dict[str, Any]:
    props: dict[str, Any] = {
        APPROVED: {
            "type": "boolean",
            "title": "Approve",
            "description": APPROVED_DESCRIPTION,
            "default": False,
        },
        FEEDBACK: {"type": "string", "title": "Feedback", "description": FEEDBACK_DESCRIPTION},
    }
    for name, field in _editable(request).items():
        props[ARG_PREFIX + name] = field
    return {"type": "object", "properties": props, "required": [APPROVED]}


def _editable(request: ApprovalRequest) -> dict[str, dict[str, Any]]:
    """The fields of a tool's arguments its approver may edit in the form, by argument name,
    each defaulting to the call's own value: every argument, where they are all flat (the host
    kit's rule, :func:`hosts._kit.flat_parameters`); none otherwise (MCP forms are flat: such
    an approval is approved or not, and edited through another host)."""
    found = call_arguments(request.metadata)
    flat = flat_parameters(found[0]) if found is not None else None
    if found is None or flat is None:
        return {}
    arguments = found[1]
    fields: dict[str, dict[str, Any]] = {}
    for name, prop in flat:
        field: dict[str, Any] = {"type": prop["type"], "title": name}
        if "enum" in prop:
            field["enum"] = list(prop["enum"])
        if prop.get("description"):
            field["description"] = prop["description"]
        if arguments.get(name) is not None:
            field["default"] = arguments[name]
        fields[name] = field
    return fields


def elicitation_form(
    request: AskUserRequest, *, protocol_version: str | None = None
) -> ElicitationForm:
    """The elicitation form of ``request`` for a client on MCP ``protocol_version`` (``None``:
    the latest; see the module docstring for its fields).

    The message is the dialog's plain-text prompt (the header and question, or the approval's
    title, body, sections and message), sent as text: the client renders it literally. A lone
    surrogate in it or in an option is sent (and read back) as U+FFFD.
    """
    if isinstance(request, ApprovalRequest):
        return ElicitationForm(sendable(dialog_title(request)), sendable(_approval_schema(request)))
    schema = _question_schema(request, _titled(protocol_version))
    return ElicitationForm(sendable(dialog_title(request)), sendable(schema))


def _validation_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The form's schema as a validator reads it: unknown fields refused, and each list of
    const choices an ``enum`` (plain error messages; two options may share a value)."""
    strict = copy.deepcopy(schema)
    strict["additionalProperties"] = False
    for prop in strict["properties"].values():
        holder = prop.get("items", prop)
        for key in ("oneOf", "anyOf"):
            if key in holder:
                holder["enum"] = list(dict.fromkeys(c["const"] for c in holder.pop(key)))
    return strict


def _text(content: Mapping[str, Any], key: str) -> str | None:
    value = content.get(key)
    return value.strip() or None if isinstance(value, str) else None


def read_elicitation(
    request: AskUserRequest,
    action: str,
    content: Mapping[str, Any] | None,
    *,
    interaction_id: str | None = None,
    protocol_version: str | None = None,
) -> AskUserOutcome:
    """The outcome of the client's reply (``action`` and form ``content``) to the form of
    ``request`` it was sent on MCP ``protocol_version`` (see the module docstring).

    Raises :class:`~interactions.InvalidPayloadError` (``interaction_id`` set, ``reason``
    ``invalid_elicitation``) for an unknown action, an ``accept`` without content, or content
    that does not match the form.
    """
    if action in ("decline", "cancel"):
        return Declined()
    if action != "accept":
        expected = "expected accept, decline or cancel"
        raise _malformed(f"unknown action {action!r}; {expected}", interaction_id)
    if not isinstance(content, Mapping):
        raise _malformed("an accepted form carries no content", interaction_id)
    form = elicitation_form(request, protocol_version=protocol_version)
    defaults = {
        key: prop["default"]
        for key, prop in form.requested_schema["properties"].items()
        if "default" in prop
    }
    content = defaults | {key: value for key, value in content.items() if value is not None}
    try:
        check_payload_against_schema(
            content, _validation_schema(form.requested_schema), interaction_id=interaction_id
        )
    except InvalidPayloadError as exc:
        detail = str(exc).split("; expected", 1)[0]
        raise _malformed(detail, interaction_id) from None
    if isinstance(request, ApprovalRequest):
        feedback = _text(content, FEEDBACK)
        if content[APPROVED] is not True:
            return RevisionRequested(feedback=feedback)
        edited = {k[len(ARG_PREFIX) :]: v for k, v in content.items() if k.startswith(ARG_PREFIX)}
        asked = request.metadata.get("arguments") or {}
        if not edited or edited == {k: v for k, v in asked.items() if k in edited}:
            return Approved(feedback=feedback)
        return Approved(feedback=feedback, args={**asked, **edited})
    own = _text(content, OTHER) if request.allow_other else None
    if request.selection == "multiple":
        if _titled(protocol_version):
            picked = content.get(ANSWERS) or []
            answers = [o.answer for o in request.options if o.answer in picked]
        else:
            checked = enumerate(request.options)
            answers = [o.answer for i, o in checked if content.get(_option_key(i)) is True]
        if own:
            answers.append(normalize_answer(request.options, own))
        answers = list(dict.fromkeys(answers))
        return AnsweredMultiple(answers=tuple(answers)) if answers else Declined()
    if own:
        return Answered(answer=normalize_answer(request.options, own))
    if not request.options:
        text = _text(content, ANSWER)
        return Answered(answer=text) if text else Declined()
    chosen = content.get(ANSWER)  # one of the option values: the form's enum (never blank)
    return Answered(answer=chosen) if isinstance(chosen, str) and chosen else Declined()


def _malformed(detail: str, interaction_id: str | None) -> InvalidPayloadError:
    return InvalidPayloadError(
        f"the MCP client's elicitation reply does not match the form it was sent ({detail})",
        interaction_id=interaction_id,
        reason="invalid_elicitation",
    )
