"""Resume payloads: reading one from a wire, checking it, and turning it into an outcome.

A resume answers one interrupt with a status (``resolved`` / ``cancelled``) and a payload of one
of three shapes (:mod:`interactions._schemas`: one strict model each, nothing ambiguous is
guessed). :func:`resolve_answer` is the one place an
incoming answer is checked against the interrupt it answers and turned into an outcome: an
option's label or value both record the option's value.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import ValidationError

from interactions._errors import InvalidPayloadError
from interactions._models import (
    Answered,
    AnsweredMultiple,
    ApprovalRequest,
    Approved,
    AskUserInterrupt,
    AskUserOption,
    AskUserOutcome,
    AskUserRequest,
    Declined,
    Remember,
    RevisionRequested,
)
from interactions._schemas import (
    ARGS_SCHEMA,
    OWN_REASONS,
    SHAPES,
    AnswerPayload,
    AnswersPayload,
    ApprovalPayload,
    approval_schema,
    question_schema,
)

__all__ = [
    "MAX_PAYLOAD_BYTES",
    "AnswerPayload",
    "AnswersPayload",
    "ApprovalPayload",
    "ResumeStatus",
    "check_payload_against_schema",
    "normalize_answer",
    "outcome_from_resume",
    "parse_json",
    "resolve_answer",
    "response_schema_for",
]

ResumeStatus = Literal["resolved", "cancelled", "expired"]
"""``resolved`` carries a payload; ``cancelled`` is a human's decline; ``expired`` is the
expiry sweep's decline. Both declines read ``declined`` to the model."""

MAX_PAYLOAD_BYTES = 1 << 20
"""The largest answer payload accepted (1 MiB of compact JSON): larger is refused, typed."""


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def parse_json(
    text: str | bytes, *, what: str = "payload", max_bytes: int = MAX_PAYLOAD_BYTES
) -> Any:
    """Read JSON that came over a wire strictly, or raise :class:`InvalidPayloadError` saying why.

    Refused: bytes that are not UTF-8, more than ``max_bytes``, text that is not JSON, ``NaN``
    and ``Infinity``, integers longer than Python reads, nesting deeper than it can, and
    strings with lone surrogates (they cannot be stored as UTF-8).
    """
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _invalid(f"the {what} is not UTF-8 ({exc.reason} at byte {exc.start})") from None
    if len(text.encode("utf-8", "surrogatepass")) > max_bytes:
        raise _invalid(f"the {what} is larger than {max_bytes} bytes", reason="too_large")
    try:
        value = json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise _invalid(
            f"the {what} is not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except (ValueError, RecursionError) as exc:
        raise _invalid(f"the {what} is not usable JSON: {exc}") from None
    check_text(value, what=what)
    return value


def check_text(value: Any, *, what: str = "payload") -> None:
    """Raise :class:`InvalidPayloadError` if ``value`` holds a string that is not valid Unicode
    (a lone surrogate, as invalid UTF-8 decodes to)."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise _invalid(
            f"the {what} holds text that is not valid Unicode (a lone surrogate)"
        ) from None
    except (TypeError, ValueError) as exc:
        raise _invalid(f"the {what} is not JSON data ({exc})") from None


def _invalid(message: str, *, reason: str = "invalid_payload") -> InvalidPayloadError:
    return InvalidPayloadError(message, reason=reason)


def response_schema_for(request: AskUserRequest) -> dict[str, Any]:
    """The JSON Schema of the payload a resume of ``request`` must send.

    ``{answer}`` for a single question (an ``enum`` of the option answers when the options are
    fixed), ``{answers}`` for multiple selection (``enum`` items likewise), ``{approved,
    feedback}`` for an approval.
    """
    if isinstance(request, ApprovalRequest):
        return approval_schema(request.metadata.get(ARGS_SCHEMA))
    return question_schema(
        [o.answer for o in request.options],
        multiple=request.selection == "multiple",
        allow_other=request.allow_other,
    )


@functools.lru_cache(maxsize=256)
def _validator(schema_text: str) -> Any:
    import jsonschema  # only custom interrupts need it: imported on first use

    schema = json.loads(schema_text)
    jsonschema.validators.validator_for(schema).check_schema(schema)
    return jsonschema.validators.validator_for(schema)(schema)


def check_payload_against_schema(
    payload: Any, schema: dict[str, Any], *, interaction_id: str | None = None
) -> None:
    """Raise :class:`InvalidPayloadError` unless ``payload`` satisfies the JSON Schema
    ``schema`` (the validator is built once per schema)."""
    import jsonschema

    try:
        text = json.dumps(schema, sort_keys=True, separators=(",", ":"))
        error = jsonschema.exceptions.best_match(_validator(text).iter_errors(payload))
        if error is not None:
            raise error
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

    ``cancelled`` → declined, ``expired`` → declined (reason ``expired``). ``resolved`` takes
    exactly one shape: ``{answer}`` → answered,
    ``{answers}`` → answered_multiple, ``{approved: true, feedback?}`` → approved,
    ``{approved: false, feedback?}`` → revision_requested. Anything else raises
    :class:`InvalidPayloadError` saying what was expected.
    """
    if status == "cancelled":
        return Declined(reason="cancelled")
    if status == "expired":
        return Declined(reason="expired")
    if status != "resolved":
        raise InvalidPayloadError(
            f"resume status must be 'resolved' or 'cancelled', got {status!r}",
            interaction_id=interaction_id,
            reason="invalid_status",
        )
    keys = [k for k in SHAPES if isinstance(payload, dict) and k in payload]
    if len(keys) != 1:
        raise InvalidPayloadError(
            "a resolved payload must be an object with exactly one of 'answer', 'answers' or "
            f"'approved' (got {_describe(payload)})",
            interaction_id=interaction_id,
            reason="invalid_payload",
        )
    try:
        parsed = SHAPES[keys[0]].model_validate(payload)
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
    if parsed.args is not None and not parsed.approved:
        raise InvalidPayloadError(
            "args: edited arguments go with an approval ('approved': true); a revision "
            "request says what to change in its feedback",
            interaction_id=interaction_id,
            reason="invalid_payload",
        )
    remember = (
        Remember(scope=parsed.remember.scope, args=parsed.remember.args)
        if parsed.remember is not None
        else None
    )
    if parsed.approved:
        return Approved(feedback=feedback, args=parsed.args, remember=remember)
    return RevisionRequested(feedback=feedback, remember=remember)


def _describe(payload: Any) -> str:
    if isinstance(payload, dict):
        return f"keys {sorted(str(k) for k in payload)}"
    return type(payload).__name__


def normalize_answer(options: Iterable[AskUserOption], text: str) -> str:
    """What an incoming answer ``text`` records against ``options``.

    An option's value (matched exactly), or an option's label (exactly, then ignoring case and
    surrounding spaces) records the option's answer — its value, else its label. Any other text
    is returned trimmed: a typed ("Other") answer.
    """
    options = tuple(options)
    for option in options:
        if option.value is not None and text == option.value:
            return option.answer
    for option in options:
        if text == option.label:
            return option.answer
    folded = text.strip().casefold()
    for option in options:
        if folded == option.label.casefold():
            return option.answer
    return text.strip()


def resolve_answer(
    interrupt: AskUserInterrupt,
    status: str,
    payload: Any = None,
    *,
    interaction_id: str | None = None,
) -> tuple[AskUserOutcome, Any]:
    """Check one answer against the interrupt it answers; return its outcome and the payload
    to record.

    The payload must have the interrupt's shape (``{answer}`` for a single question,
    ``{answers}`` for a multiple selection, ``{approved, feedback?}`` for an approval). Answers
    are normalized against the options (:func:`normalize_answer`: a label records the value),
    and must be one of them when ``allow_other`` is false. An interrupt with a reason of its own
    is also checked against its ``response_schema``. ``cancelled`` and ``expired`` take no
    payload. Raises :class:`InvalidPayloadError` saying what was expected.
    """
    where = interaction_id or interrupt.id
    try:
        check_text(payload)
        size = len(json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode())
    except InvalidPayloadError as exc:
        exc.interaction_id = where
        raise
    if size > MAX_PAYLOAD_BYTES:
        raise InvalidPayloadError(
            f"the answer is {size} bytes; the most an answer may be is {MAX_PAYLOAD_BYTES}",
            interaction_id=where,
            reason="too_large",
        )
    if status in ("cancelled", "expired"):
        if payload is not None:
            raise InvalidPayloadError(
                f"a {status} answer carries no payload (got {_describe(payload)})",
                interaction_id=where,
                reason="invalid_payload",
            )
        return outcome_from_resume(status, None, interaction_id=where), None
    outcome = outcome_from_resume(status, payload, interaction_id=where)
    own = interrupt.reason in OWN_REASONS
    key = _payload_key(interrupt)
    if own and key not in payload:
        raise InvalidPayloadError(
            f"this interrupt expects a payload {{{key!r}: ...}}, got {_describe(payload)}; "
            "see its response_schema",
            interaction_id=where,
            reason="invalid_payload",
        )
    if not own and interrupt.response_schema:
        check_payload_against_schema(payload, interrupt.response_schema, interaction_id=where)
    remembered = isinstance(outcome, Approved | RevisionRequested) and outcome.remember
    if remembered and (interrupt.metadata or {}).get(ARGS_SCHEMA) is None:
        raise InvalidPayloadError(
            "remember: only the approval of a tool call can be remembered for its later "
            'calls; answer {"approved": true} or {"approved": false, "feedback": "..."}',
            interaction_id=where,
            reason="invalid_payload",
        )
    if isinstance(outcome, Approved) and outcome.args is not None:
        editable = (interrupt.metadata or {}).get(ARGS_SCHEMA)
        if editable is None:
            raise InvalidPayloadError(
                "args: this approval's arguments cannot be edited (only a tool call's can); "
                'answer {"approved": true} or {"approved": false, "feedback": "..."}',
                interaction_id=where,
                reason="invalid_payload",
            )
        try:
            check_payload_against_schema(outcome.args, editable, interaction_id=where)
        except InvalidPayloadError as exc:
            said = (
                str(exc)
                .removeprefix("payload: ")
                .replace("the interrupt's response_schema", "the tool's parameters")
            )
            raise InvalidPayloadError(
                f"args: {said}", interaction_id=where, reason="invalid_payload"
            ) from None
    if isinstance(outcome, Answered):
        answer = _checked(interrupt, outcome.answer, where)
        return Answered(answer=answer), {"answer": answer}
    if isinstance(outcome, AnsweredMultiple):
        # in the options' order, then typed answers as given: as a dialog records the same
        # picks, so one set of picks is one answer whatever order it was sent in
        picked = dict.fromkeys(_checked(interrupt, a, where) for a in outcome.answers)
        order = {option.answer: index for index, option in enumerate(interrupt.options)}
        answers = sorted(picked, key=lambda answer: order.get(answer, len(order)))
        return AnsweredMultiple(answers=tuple(answers)), {"answers": answers}
    return outcome, payload


def _payload_key(interrupt: AskUserInterrupt) -> str:
    if interrupt.is_approval:
        return "approved"
    return "answers" if interrupt.selection == "multiple" else "answer"


def _checked(interrupt: AskUserInterrupt, text: str, where: str) -> str:
    answer = normalize_answer(interrupt.options, text)
    if not interrupt.allow_other and interrupt.options:
        allowed = [o.answer for o in interrupt.options]
        if answer not in allowed:
            labels = ", ".join(repr(o.label) for o in interrupt.options)
            raise InvalidPayloadError(
                f"{text!r} is not one of the options ({labels}); answer with an option's "
                "label or value",
                interaction_id=where,
                reason="invalid_payload",
            )
    return answer
