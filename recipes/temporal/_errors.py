"""Typed errors across the Temporal boundary, both ways.

Inside the workflow and its activities a refusal is one of our typed errors; Temporal carries
failures as ``ApplicationError`` (a type name, a message, details). :func:`to_failure` packs an
error with its fields; :func:`from_failure` gives the caller the same typed error back, so a
refusal has the same class, fields and exit code as on the other engines.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict
from temporalio.exceptions import ApplicationError, ApplicationErrorCategory

from interactions import errors
from interactions.errors import (
    ContractError,
    InteractionAborted,
    NotAllowedError,
    PiRecipesError,
    RunError,
    UnknownDecisionError,
    UsageError,
)
from recipes.models import ModelError, ScriptExhausted

__all__ = ["ErrorData", "error_data", "from_failure", "to_failure", "typed_error"]

_RUN_ERRORS: dict[str, type[RunError]] = {
    cls.__name__: cls
    for cls in (*(getattr(errors, name) for name in errors.__all__), ScriptExhausted)
    if isinstance(cls, type) and issubclass(cls, RunError)
}
"""Every run-time failure a caller may catch by class, by name: each ``RunError`` the
contract exports (``RunError`` itself with them) and the scripted model's. A model failure
(``ModelError``) and the other families are read apart in :func:`typed_error`."""
_FOREIGN: dict[str, type[RunError]] = {}
_MODEL_FIELDS = ("error_class", "provider", "status_code", "retry_after", "last_error_class")


class ErrorData(BaseModel):
    """One typed error as data: its class name, message and fields."""

    model_config = ConfigDict(frozen=True)

    type: str
    message: str
    run_id: str | None = None
    interaction_id: str | None = None
    reason: str | None = None
    hint: str | None = None
    fields: dict[str, Any] = {}


def error_data(error: BaseException) -> ErrorData:
    """``error`` as data (a foreign exception keeps its class name and message)."""
    fields: dict[str, Any] = {}
    if isinstance(error, ModelError):
        fields = {name: getattr(error, name) for name in _MODEL_FIELDS}
        fields["retryable"] = error.retryable
    if isinstance(error, InteractionAborted) and error.tool_call_id:
        fields["tool_call_id"] = error.tool_call_id
    if isinstance(error, UnknownDecisionError):
        fields["decision_id"] = error.decision_id
    if isinstance(error, NotAllowedError):
        fields["approvers"] = list(error.approvers)
    return ErrorData(
        type="ModelError" if isinstance(error, ModelError) else type(error).__name__,
        message=str(error) or type(error).__name__,
        run_id=getattr(error, "run_id", None),
        interaction_id=getattr(error, "interaction_id", None),
        reason=getattr(error, "reason", None),
        hint=getattr(error, "hint", None),
        fields=fields,
    )


def to_failure(error: BaseException, *, non_retryable: bool = True) -> ApplicationError:
    """An ``ApplicationError`` carrying ``error`` (its fields as the first detail). A refusal
    is benign (logged at debug level by Temporal); a model failure or a broken contract is not."""
    data = error_data(error)
    benign = not isinstance(error, ModelError | ContractError)
    return ApplicationError(
        data.message,
        data.model_dump(mode="json"),
        type=data.type,
        non_retryable=non_retryable,
        category=ApplicationErrorCategory.BENIGN
        if benign
        else ApplicationErrorCategory.UNSPECIFIED,
    )


def typed_error(data: ErrorData, *, keep_name: bool = False) -> PiRecipesError:
    """The typed error ``data`` describes. A class this side does not know comes back as a
    ``RunError`` (reason ``engine``) naming it; with ``keep_name``, as a ``RunError`` of that
    class's name, message and reason (:func:`_foreign`), for the run to record."""
    fields = data.fields
    if data.type == "ModelError":
        model_error = ModelError(
            data.message,
            error_class=fields.get("error_class") or "unclassified",
            provider=str(fields.get("provider") or "unknown"),
            status_code=fields.get("status_code"),
            retry_after=fields.get("retry_after"),
            last_error_class=fields.get("last_error_class"),
            retryable=fields.get("retryable"),
            run_id=data.run_id,
        )
        model_error.hint = data.hint
        return model_error
    if data.type == "ContractError":
        return ContractError(data.message)
    if data.type in ("UsageError", "RecipeLoadError", "RecipeDefinitionError"):
        return UsageError(data.message)
    if data.type == "InteractionAborted":
        return InteractionAborted(data.message, tool_call_id=fields.get("tool_call_id"))
    cls = _RUN_ERRORS.get(data.type)
    if cls is None and keep_name:
        cls = _foreign(data.type)
    elif cls is None:
        return RunError(f"{data.type}: {data.message}", run_id=data.run_id, reason="engine")
    error = cls(
        data.message, run_id=data.run_id, interaction_id=data.interaction_id, reason=data.reason
    )
    error.hint = data.hint
    if isinstance(error, UnknownDecisionError):
        error.decision_id = fields.get("decision_id")
    if isinstance(error, NotAllowedError):
        error.approvers = tuple(fields.get("approvers") or ())
    return error


def _foreign(name: str) -> type[RunError]:
    """A ``RunError`` subclass called ``name``, for an error of a class only the workers know
    (a custom model's own exception, a builtin such as ``KeyError``): a run records a failure
    as ``Name: message`` with its reason (else its name) as the code, and so records this one
    as the other engines record the original."""
    if name not in _FOREIGN:
        _FOREIGN[name] = type(name, (RunError,), {"__module__": __name__})
    return _FOREIGN[name]


def from_failure(
    failure: BaseException | None, *, keep_name: bool = False
) -> PiRecipesError | None:
    """The typed error an ``ApplicationError`` (or a failure caused by one) carries (as
    :func:`typed_error` makes it, ``keep_name`` alike); ``None`` when there is none in the
    chain."""
    seen = 0
    while failure is not None and seen < 8:
        if isinstance(failure, ApplicationError) and failure.details:
            try:
                data = ErrorData.model_validate(failure.details[0])
            except ValueError:
                return None
            return typed_error(data, keep_name=keep_name)
        failure = failure.__cause__ or getattr(failure, "cause", None)
        seen += 1
    return None
