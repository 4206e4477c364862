"""Model failure classes map to retry decisions in one table."""

from __future__ import annotations

from datetime import timedelta

import pytest

from recipes.models import ModelError, ScriptExhausted
from recipes.runs.planning import RESUMABLE_ERROR_CLASSES
from recipes.temporal import MODEL_FAILURES
from recipes.temporal._failures import DEFAULT_WINDOW, WINDOW_CAP, model_failure


def error(error_class: str, **fields: object) -> ModelError:
    return ModelError("failed", error_class=error_class, provider="openai", **fields)  # type: ignore[arg-type]


def test_every_class_has_a_policy() -> None:
    assert set(MODEL_FAILURES) == {
        "usage_window", "auth", "unavailable", "transient_exhausted", "unclassified",
    }  # fmt: skip
    retried = {c for c, p in MODEL_FAILURES.items() if p.retry}
    assert retried == set(RESUMABLE_ERROR_CLASSES)  # what waits out is what a retry cures


@pytest.mark.parametrize(
    ("failure", "non_retryable", "delay"),
    [
        (error("auth"), True, None),
        (error("unclassified"), True, None),
        (error("unavailable"), False, None),
        (error("transient_exhausted"), False, None),
        (error("usage_window", retry_after=300.0), False, timedelta(seconds=300)),
        (error("usage_window"), False, timedelta(seconds=DEFAULT_WINDOW)),
        (error("usage_window", retry_after=WINDOW_CAP + 1), True, None),
        (error("usage_window", retry_after=30.0, retryable=False), True, None),
    ],
)
def test_model_failures_carry_their_retry(
    failure: ModelError, non_retryable: bool, delay: timedelta | None
) -> None:
    failed = model_failure(failure)
    assert failed.type == "ModelError"
    assert failed.non_retryable is non_retryable
    assert failed.next_retry_delay == delay


@pytest.mark.parametrize(
    "raised", [KeyError("choices"), ScriptExhausted("turn 2 of 1", reason="script_exhausted")]
)
def test_anything_else_a_model_raises_is_not_retried_and_keeps_its_fields(
    raised: Exception,
) -> None:
    failed = model_failure(raised)
    assert failed.non_retryable and failed.type == type(raised).__name__
    assert failed.details[0]["message"] == str(raised)
    assert failed.details[0]["reason"] == getattr(raised, "reason", None)
