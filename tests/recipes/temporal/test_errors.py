"""Typed errors cross the Temporal boundary and come back the same: class, fields, exit code."""

from __future__ import annotations

import pytest
from temporalio.exceptions import ApplicationError

from interactions import (
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
    errors,
)
from interactions.errors import StoreUnavailableError, error_code
from recipes.models import ModelError, ScriptExhausted
from recipes.temporal._errors import from_failure, to_failure

ERRORS: list[PiRecipesError] = [
    ConflictError("taken", run_id="r1", interaction_id="int-1", reason="already_answered"),
    ExpiredError("late", run_id="r1", interaction_id="int-1", reason="expired"),
    UnknownRunError("who", run_id="r9", reason="unknown_run"),
    UnknownInteractionError("what", run_id="r1", interaction_id="int-x"),
    UnknownDecisionError("which", decision_id="dec-0123456789ab", reason="unknown_decision"),
    NotAllowedError("who", run_id="r1", interaction_id="int-1", reason="not_an_approver",
                    approvers=("ada", "group:release")),
    InvalidPayloadError("bad", run_id="r1", interaction_id="int-1", reason="invalid_payload"),
    IllegalTransitionError("no", run_id="r1", reason="finished->cancelled"),
    UnreadableInteractionError(
        "unreadable", run_id="r1", interaction_id="int-1", reason="unreadable"
    ),
    StoreUnavailableError("down", reason="unreachable"),
    RunError("odd", run_id="r1", reason="corrupt_checkpoint", hint="look at it"),
    UsageError("misuse"),
    ContractError("skipped a human"),
    InteractionAborted("aborted", tool_call_id="c1"),
    ScriptExhausted("turn 3 of 2", reason="script_exhausted"),
    ModelError(
        "quota", error_class="usage_window", provider="openai", status_code=429,
        retry_after=120.0, run_id="r1",
    ),
]  # fmt: skip


@pytest.mark.parametrize("error", ERRORS, ids=lambda e: type(e).__name__)
def test_errors_come_back_typed_with_their_fields(error: PiRecipesError) -> None:
    back = from_failure(to_failure(error))
    assert type(back) is type(error)
    assert str(back) == str(error)
    for name in ("run_id", "interaction_id", "reason", "hint", "tool_call_id", "decision_id",
                 "approvers"):  # fmt: skip
        assert getattr(back, name, None) == getattr(error, name, None), name
    assert error_code(back) == error_code(error)


def test_every_error_class_the_contract_exports_is_carried() -> None:
    exported = (getattr(errors, name) for name in errors.__all__)
    classes = {cls for cls in exported if isinstance(cls, type) and issubclass(cls, Exception)}
    raised = classes - {PiRecipesError}  # the families' base: nothing raises it as such
    assert raised <= {type(error) for error in ERRORS}


def test_model_errors_keep_their_class() -> None:
    error = ERRORS[-1]
    back = from_failure(to_failure(error))
    assert isinstance(back, ModelError)
    assert (back.error_class, back.provider, back.status_code, back.retry_after) == (
        "usage_window", "openai", 429, 120.0,
    )  # fmt: skip


def test_a_failure_without_our_details_is_none_and_a_foreign_class_is_a_run_error() -> None:
    assert from_failure(ApplicationError("plain", type="Whatever")) is None
    foreign = from_failure(to_failure(KeyError("k")))
    assert isinstance(foreign, RunError) and foreign.reason == "engine"


def test_a_foreign_class_keeps_its_name_where_a_run_records_it() -> None:
    failure = to_failure(KeyError("choices"))
    kept = from_failure(failure, keep_name=True)
    assert isinstance(kept, RunError) and type(kept).__name__ == "KeyError"
    assert (str(kept), kept.reason) == ("'choices'", None)  # recorded "KeyError: 'choices'"
    assert type(from_failure(failure, keep_name=True)) is type(kept)  # one class per name
