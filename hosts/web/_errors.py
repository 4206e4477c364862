"""Refusals as the web host reports them: one typed body for REST, AG-UI and WebSocket frames.

The status comes from the one error table (:func:`interactions.errors.error_code`: 409 a
conflict, 404 an unknown id, 410 expired, 422 a payload off the schema, 400 a usage error); a
payload off the schema also lists the schema's complaints, one per failing place.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ValidationError
from pydantic_core import PydanticCustomError

from hosts._kit import Busy
from interactions import AskUserInterrupt, PiRecipesError, RunError
from interactions.errors import InvalidPayloadError, error_code
from interactions.store import MAX_JSON_DEPTH

__all__ = [
    "Busy",
    "Complaint",
    "ErrorBody",
    "Kept",
    "Refusal",
    "complaints_for",
    "framework_refusal",
    "refusal",
    "validation_refusal",
]


def _sendable(text: str) -> str:
    """``text`` as UTF-8 carries it: a lone surrogate (JSON's ``"\\ud800"`` reads as one, and a
    refusal may quote the id it refuses) becomes U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)
    return text


Said = Annotated[str, AfterValidator(_sendable)]
"""Text a refusal sends back."""


def _kept(text: str) -> str:
    """``text`` a client sent, if every store can keep it; a NUL character (PostgreSQL keeps
    none in a text column) or a lone surrogate is refused, as a field off the expected shape."""
    if "\x00" in text:
        raise PydanticCustomError(
            "unstorable_text", "holds a NUL character (\\x00); no store keeps it"
        )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise PydanticCustomError(
            "unstorable_text",
            "holds text that is not valid Unicode (a lone surrogate); no store keeps it",
        ) from None
    return text


Kept = Annotated[str, AfterValidator(_kept)]
"""Text a client sends that the store keeps as it is (an id, a thread, who answered): one
holding what no store keeps is a 422 naming the field, before anything is written."""


class Complaint(BaseModel):
    """One thing wrong with a payload or a frame: where (a JSON path, ``""`` for the whole
    value) and what."""

    path: Said
    message: Said


class ErrorBody(BaseModel):
    """The body of every refusal. ``error`` is the error table's label (``conflict``,
    ``unknown run``, ``expired``, ``invalid payload``, ``usage``, ``busy``, ``unauthorized``...;
    ``error`` for a failure none of ours, whose message is only ``internal error``)."""

    error: str
    message: Said
    reason: Said | None = None
    run_id: Said | None = None
    interaction_id: Said | None = None
    complaints: list[Complaint] = []


class Refusal(Exception):
    """A refusal on its way to the client: its HTTP status and its body."""

    def __init__(self, status: int, body: ErrorBody) -> None:
        super().__init__(body.message)
        self.status = status
        self.body = body


def refusal(exc: Exception, complaints: Sequence[Complaint] = ()) -> Refusal:
    """The refusal that reports ``exc`` (a :class:`Refusal` is returned as it is)."""
    if isinstance(exc, Refusal):
        return exc
    if isinstance(exc, Busy):
        return Refusal(503, ErrorBody(error="busy", message=str(exc), reason="busy"))
    code = error_code(exc)
    fields: dict[str, Any] = {}
    if isinstance(exc, RunError):
        fields = {"reason": exc.reason, "run_id": exc.run_id, "interaction_id": exc.interaction_id}
    message = str(exc) if isinstance(exc, PiRecipesError) else "internal error"
    if isinstance(exc, InvalidPayloadError) and not complaints:
        complaints = [Complaint(path="", message=str(exc))]
    body = ErrorBody(error=code.label, message=message, complaints=list(complaints), **fields)
    return Refusal(code.http_status, body)


def complaints_for(interrupt: AskUserInterrupt, payload: Any, exc: Exception) -> list[Complaint]:
    """What is wrong with ``payload`` as an answer to ``interrupt``: every place its
    ``response_schema`` refuses, else the refusal's own message."""
    found: list[Complaint] = []
    if interrupt.response_schema and payload is not None:
        import jsonschema

        try:
            validator = jsonschema.validators.validator_for(interrupt.response_schema)
            checker = validator(interrupt.response_schema)
            for error in sorted(checker.iter_errors(payload), key=lambda e: list(e.path)):
                where = "/".join(str(p) for p in error.absolute_path)
                found.append(Complaint(path=where, message=error.message))
        except jsonschema.SchemaError:
            found = []
    return found or [Complaint(path="", message=str(exc))]


def validation_refusal(exc: ValidationError | Any, what: str) -> Refusal:
    """A request body or frame that is not the expected shape (HTTP 422)."""
    errors = exc.errors() if hasattr(exc, "errors") else []
    complaints = [
        Complaint(
            path="/".join(str(p) for p in e.get("loc", ()) if p != "body"),
            message=str(e.get("msg", "")),
        )
        for e in errors
    ]
    first = complaints[0] if complaints else Complaint(path="", message="malformed")
    text = f"{what}: {first.path + ': ' if first.path else ''}{first.message}"
    body = ErrorBody(
        error="invalid request", message=text, reason="invalid_request", complaints=complaints
    )
    return Refusal(422, body)


_FRAMEWORK: dict[int, tuple[str, str, str]] = {
    400: (
        "invalid request",
        "invalid_request",
        f"the body could not be read: send UTF-8 JSON, nested at most {MAX_JSON_DEPTH} levels deep",
    ),
    404: ("not found", "unknown_route", "no such route; GET /openapi.json lists them"),
    405: ("method not allowed", "method_not_allowed", "the route does not take this method"),
}


def framework_refusal(status: int, detail: object) -> Refusal:
    """A refusal the web framework found before any route ran (a body it could not parse, an
    unknown route, a method the route does not take), in the typed body. A body that is not
    UTF-8 is refused as one off the expected shape (422), like one that is not JSON."""
    error, reason, message = _FRAMEWORK.get(status, ("http error", "http_error", str(detail)))
    if status == 400:
        status = 422
    return Refusal(status, ErrorBody(error=error, message=message, reason=reason))
