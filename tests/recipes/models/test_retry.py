"""The backoff schedule and the retry driver."""

from __future__ import annotations

import math
import traceback
from collections.abc import AsyncGenerator, Callable

import pytest

from interactions.errors import UsageError
from recipes.models._errors import ModelError
from recipes.models._retry import RetryPolicy, retrying
from recipes.models._secrets import Secrets

from ._wire import RecordingSleep, fast_policy

NONE = Secrets()


def test_backoff_is_exponential_capped_and_jittered() -> None:
    policy = RetryPolicy(backoff_base=1.0, backoff_max=5.0, jitter=lambda: 1.0)
    assert [policy.backoff(n) for n in (1, 2, 3, 4)] == [1.0, 2.0, 4.0, 5.0]
    assert RetryPolicy(backoff_base=1.0, jitter=lambda: 0.0).backoff(1) == 0.5


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("max_retries", -1),
        ("max_retries", True),  # a flag where a count was meant: it was 1 retry
        ("max_retries", 2.5),  # it failed at the first call, with a TypeError
        ("max_retries", 3.0),
        ("max_retries", "2"),
        ("max_retries", None),
        ("backoff_base", -0.1),
        ("backoff_base", False),
        ("backoff_max", math.nan),
        ("backoff_max", "8"),
        ("retry_after_cap", math.inf),
        ("retry_after_cap", -1),
        ("sleep", None),
        ("jitter", 0.5),
    ],
)
def test_policy_refuses_bad_settings_naming_the_one(field: str, value: object) -> None:
    with pytest.raises(UsageError) as info:
        RetryPolicy(**{field: value})  # type: ignore[arg-type]
    message = str(info.value)
    assert f"RetryPolicy {field}" in message and repr(value) in message
    others = {"max_retries", "backoff_base", "backoff_max", "retry_after_cap"} - {field}
    assert not [other for other in others if other in message], "only the bad field is named"


@pytest.mark.parametrize("retries", [0, 1, 5])
def test_policy_takes_whole_retry_counts(retries: int) -> None:
    assert (
        RetryPolicy(max_retries=retries, backoff_base=0, retry_after_cap=0).max_retries == retries
    )


def failing(*errors: ModelError, then: list[str] | None = None):  # type: ignore[no-untyped-def]
    """An attempt factory: each call raises the next error, then yields ``then``."""
    queue = list(errors)
    calls: list[int] = []

    async def attempt() -> AsyncGenerator[str, None]:
        calls.append(1)
        if queue:
            raise queue.pop(0)
        for item in then or []:
            yield item

    return attempt, calls


async def drain(
    attempt: Callable[[], AsyncGenerator[str, None]], policy: RetryPolicy, secrets: Secrets = NONE
) -> list[str]:
    return [e async for e in retrying(attempt, policy, provider="p", secrets=secrets)]


def unavailable() -> ModelError:
    return ModelError("down", error_class="unavailable", provider="p", status_code=503)


@pytest.mark.anyio
async def test_no_retries_when_disabled() -> None:
    attempt, calls = failing(unavailable())
    with pytest.raises(ModelError) as info:
        await drain(attempt, RetryPolicy(max_retries=0))
    assert info.value.error_class == "transient_exhausted"
    assert info.value.last_error_class == "unavailable"
    assert len(calls) == 1 and info.value.attempts == 1


@pytest.mark.anyio
async def test_the_raised_error_counts_the_attempts_made() -> None:
    attempt, calls = failing(unavailable(), unavailable(), unavailable())
    with pytest.raises(ModelError) as info:
        await drain(attempt, fast_policy(RecordingSleep()))
    assert info.value.error_class == "transient_exhausted"
    assert info.value.attempts == len(calls) == 3
    quota = ModelError("quota", error_class="usage_window", provider="p", retryable=False)
    attempt, calls = failing(unavailable(), quota)
    with pytest.raises(ModelError) as info:
        await drain(attempt, fast_policy(RecordingSleep()))
    assert info.value is quota and quota.attempts == 2


@pytest.mark.anyio
async def test_retries_then_succeeds_with_backoff_waits() -> None:
    sleep = RecordingSleep()
    attempt, calls = failing(unavailable(), unavailable(), then=["ok"])
    events = await drain(attempt, fast_policy(sleep))
    assert events == ["ok"]
    assert len(calls) == 3
    assert sleep.delays == [0.001, 0.002]


@pytest.mark.anyio
async def test_non_retryable_error_is_raised_at_once() -> None:
    sleep = RecordingSleep()
    auth = ModelError("no", error_class="auth", provider="p", status_code=401)
    attempt, calls = failing(auth, then=["ok"])
    with pytest.raises(ModelError) as info:
        await drain(attempt, fast_policy(sleep))
    assert info.value is auth
    assert (len(calls), sleep.delays) == (1, [])


@pytest.mark.anyio
async def test_failure_after_a_yield_is_not_retried() -> None:
    calls: list[int] = []

    async def attempt() -> AsyncGenerator[str, None]:
        calls.append(1)
        yield "partial"
        raise unavailable()

    seen: list[str] = []
    with pytest.raises(ModelError) as info:
        async for event in retrying(
            attempt, fast_policy(RecordingSleep()), provider="p", secrets=NONE
        ):
            seen.append(event)
    assert seen == ["partial"]
    assert len(calls) == 1
    assert info.value.error_class == "unclassified"
    assert info.value.last_error_class == "unavailable"
    assert isinstance(info.value.__cause__, ModelError)


KEY = "tok.LEAKRETRY.0123456789/+=Wx7R"


class Quoting(Exception):
    """An exception whose text is not its ``args`` (as ``OSError``'s is not)."""

    def __str__(self) -> str:
        return f"quoting {KEY}"


def leaking(error_class: str, retryable: bool | None = None) -> ModelError:
    try:
        try:
            raise ValueError(f"decoded {KEY}")
        except ValueError as inner:
            raise Quoting() from inner
    except Quoting:
        error = ModelError(
            f"p: HTTP 503: rejected {KEY}",
            error_class=error_class,  # type: ignore[arg-type]
            provider="p",
            retryable=retryable,
        )
    error.add_note(f"sent {KEY}")
    error.__cause__ = ValueError(f"cause {KEY}")
    return error


@pytest.mark.parametrize(
    "errors",
    [
        [leaking("auth")],
        [leaking("unavailable"), leaking("unavailable"), leaking("unavailable")],
        [leaking("unavailable"), leaking("usage_window", retryable=False)],
    ],
    ids=["raised at once", "every attempt failed", "retried, then not retryable"],
)
@pytest.mark.anyio
async def test_every_error_that_leaves_is_scrubbed_with_its_chain(
    errors: list[ModelError], caplog: pytest.LogCaptureFixture
) -> None:
    """An attempt's error quotes what the provider sent, decoded: a secret the wire text only
    spelled is whole again. Neither the raised error, nor anything chained to it, nor the
    warnings logged while retrying may hold it."""
    attempt, _ = failing(*errors)
    policy = fast_policy(RecordingSleep())
    with pytest.raises(ModelError) as info:
        await drain(attempt, policy, Secrets([KEY]))
    shown = ["".join(traceback.format_exception(info.value)), caplog.text]
    chained: list[BaseException | None] = [info.value]
    while chained:
        error = chained.pop()
        if error is not None:
            shown += [str(error), repr(error)]
            chained += [error.__cause__, error.__context__]
    assert not [text for text in shown if "LEAKRETRY" in text]
    assert "rejected ***" in shown[0] and "sent ***" in shown[0]
    assert "cause ***" in shown[0], "a chained error whose text could be scrubbed stays chained"
