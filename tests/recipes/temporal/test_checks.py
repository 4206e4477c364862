"""The update validators refuse what the store engine's runner refuses, with the same error
class, reason and message, deciding from the run as last written (pure: no server)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import pytest
from ag_ui.core import ResumeEntry

from interactions import PiRecipesError
from interactions.store import MemoryStore, utc_now
from recipes.runs import Runner
from recipes.temporal._checks import (
    check_answer,
    check_cancel,
    check_resume,
    check_resume_answered,
    check_retry,
)
from recipes.temporal._closed import closed_answer, state_of
from recipes.temporal._run_store import RunState
from recipes.temporal._wire import AnswerRequest, ResumeRequest, Snapshot
from tests.recipes.runs.conftest import RECIPES
from tests.recipes.temporal.conftest import RELEASE

pytestmark = pytest.mark.anyio

AUTHOR = f"{RECIPES}:async_author"
LISTENER = f"{RECIPES}:async_listener"

Refusal = tuple[type[Exception], str | None, str] | None


@dataclass
class Clock:
    """The runner's clock, which a test moves on (the validator is given the same now)."""

    now: datetime

    def __call__(self) -> datetime:
        return self.now


async def refusal(call: Callable[[], object]) -> Refusal:
    """The typed error ``call`` raises (class, reason, message), or ``None`` if it accepts."""
    try:
        result = call()
        if isinstance(result, Awaitable):
            await result
    except PiRecipesError as exc:
        return type(exc), getattr(exc, "reason", None), str(exc)
    return None


async def state(store: MemoryStore, run_id: str) -> RunState:
    return state_of(
        Snapshot(run=await store.get_run(run_id), interactions=await store.list_interactions())
    )


def fresh() -> tuple[Runner, MemoryStore, Clock]:
    clock = Clock(utc_now())
    store = MemoryStore(clock=clock)
    return Runner(store, env={}, host="cli", clock=clock), store, clock


# Each situation: a run on a Runner over a MemoryStore, brought to where the answer arrives.


async def paused(runner: Runner, clock: Clock) -> str:
    return (await runner.start(RELEASE, "Release v1.0.0")).run_id


async def answered(runner: Runner, clock: Clock) -> str:
    run_id = await paused(runner, clock)
    await runner.answer(run_id, "int-call_channel", {"answer": "beta"}, resume=True)
    return run_id


async def expired(runner: Runner, clock: Clock) -> str:
    run_id = await paused(runner, clock)
    clock.now += timedelta(days=8)
    return run_id


async def expired_and_settled(runner: Runner, clock: Clock) -> str:
    run_id = await expired(runner, clock)
    await runner.expire_due(resume=False)
    return run_id


async def cancelled(runner: Runner, clock: Clock) -> str:
    run_id = await paused(runner, clock)
    await runner.cancel(run_id)
    return run_id


async def finished(runner: Runner, clock: Clock) -> str:
    run_id = await answered(runner, clock)
    await runner.answer(run_id, "int-call_publish", {"approved": True}, resume=True)
    return run_id


async def awaiting(runner: Runner, clock: Clock) -> str:
    """Paused on ``await_answers`` for two async questions."""
    return (await runner.start(AUTHOR, "Write it.")).run_id


async def async_ended(runner: Runner, clock: Clock) -> str:
    """Finished with an async question no one answered (closed with the run)."""
    run_id = (await runner.start(LISTENER, "Listen.")).run_id
    await runner.answer(run_id, "int-c1", {"answer": "red"}, resume=True)
    return run_id


Situation = Callable[[Runner, Clock], Awaitable[str]]
ASYNC_1 = "{run}_author_async_1"
DEEP = json.loads("[" * 300 + "]" * 300)

HOSTILE: list[tuple[Situation, str, str, Any, str | None]] = [
    # situation, interaction ("{run}" is the run's id), status, payload, the expected reason
    (paused, "int-nope", "resolved", {"answer": "x"}, "unknown_interaction"),
    (paused, "int-call_channel", "resolved", {"approved": True}, "invalid_payload"),
    (paused, "int-call_channel", "resolved", {"answers": ["a"]}, "invalid_payload"),
    (paused, "int-call_channel", "resolved", {"answer": DEEP}, "invalid_payload"),
    (paused, "int-call_channel", "maybe", {"answer": "beta"}, "invalid_status"),
    (paused, "int-call_channel", "resolved", "beta", "invalid_payload"),
    (paused, "int-call_channel", "resolved", {"answer": "Beta"}, None),  # a label: its value
    (paused, "int-call_channel", "cancelled", None, None),
    (answered, "int-call_channel", "resolved", {"answer": "stable"}, "already_answered"),
    (answered, "int-call_channel", "resolved", {"answer": "Beta"}, None),  # a replay
    (answered, "int-call_publish", "resolved", {"approved": "yes"}, "invalid_payload"),
    (expired, "int-call_channel", "resolved", {"answer": "beta"}, "expired"),
    (expired_and_settled, "int-call_channel", "resolved", {"answer": "beta"}, "expired"),
    (cancelled, "int-call_channel", "resolved", {"answer": "beta"}, "run_cancelled"),
    (cancelled, "int-call_channel", "cancelled", None, "run_cancelled"),
    (finished, "int-call_publish", "resolved", {"approved": False}, "already_answered"),
    (finished, "int-call_publish", "resolved", {"approved": True}, None),  # a replay
    (awaiting, "int-w1", "resolved", {"answer": "go"}, "await"),
    (awaiting, "int-w1", "cancelled", None, "await"),
    (awaiting, ASYNC_1, "resolved", {"answer": "Pipette"}, None),
    (async_ended, "{run}_listener_async_1", "resolved", {"answer": "Pipette"}, "run_ended"),
]


@pytest.mark.parametrize(("situation", "interaction", "status", "payload", "reason"), HOSTILE)
async def test_an_answer_is_refused_by_the_validator_as_by_the_runner(
    situation: Situation, interaction: str, status: str, payload: Any, reason: str | None
) -> None:
    runner, store, clock = fresh()
    run_id = await situation(runner, clock)
    iid = interaction.format(run=run_id)
    request = AnswerRequest.model_validate(
        {"interaction_id": iid, "status": status, "payload": payload, "via": "cli"}
    )
    current = await state(store, run_id)
    validator = await refusal(lambda: check_answer(current, run_id, request, clock.now))
    runner_says = await refusal(lambda: runner.answer(run_id, iid, payload, status=status))
    assert validator == runner_says
    assert (validator[1] if validator else None) == reason


async def test_resumes_retries_and_cancels() -> None:
    runner, store, clock = fresh()
    run_id = await paused(runner, clock)
    current = await state(store, run_id)
    entries = [
        {"interruptId": "int-call_channel", "status": "resolved", "payload": {"answer": "beta"}}
    ]
    assert check_resume(current, run_id, ResumeRequest(entries=entries), clock.now) is False
    unknown = [{"interruptId": "int-x", "status": "resolved", "payload": {"answer": "beta"}}]
    validator = await refusal(
        lambda: check_resume(current, run_id, ResumeRequest(entries=unknown), clock.now)
    )
    runner_says = await refusal(
        lambda: runner.resume(run_id, [ResumeEntry.model_validate(e) for e in unknown])
    )
    assert validator == runner_says and validator is not None
    assert await refusal(lambda: check_retry(current, run_id)) == await refusal(
        lambda: runner.retry(run_id)
    )
    await runner.cancel(run_id)
    ended = await state(store, run_id)
    validator = await refusal(lambda: check_cancel(ended, run_id))
    assert validator == await refusal(lambda: runner.cancel(run_id)) and validator is not None


async def test_a_resume_with_the_answers_given_waits_for_the_awaited_questions() -> None:
    runner, store, clock = fresh()
    run_id = await awaiting(runner, clock)
    current = await state(store, run_id)
    validator = await refusal(lambda: check_resume_answered(current, run_id))
    runner_says = await refusal(lambda: runner.resume_answered(run_id))
    assert validator == runner_says
    assert validator is not None and validator[1] == "incomplete_resume"
    assert f"{run_id}_author_async_1" in validator[2] and "int-w1" not in validator[2]


@pytest.mark.parametrize(
    ("situation", "interaction", "payload"),
    [
        (finished, "int-call_publish", {"approved": False}),
        (finished, "int-call_publish", {"approved": "yes"}),
        (finished, "int-nope", {"answer": "x"}),
        (async_ended, "{run}_listener_async_1", {"answer": "Pipette"}),
        (cancelled, "int-call_channel", {"answer": "beta"}),
    ],
)
async def test_an_ended_run_refuses_as_the_runner_does(
    situation: Situation, interaction: str, payload: Any
) -> None:
    """A run whose workflow has ended is decided from its snapshot, by the same rules."""
    runner, store, clock = fresh()
    run_id = await situation(runner, clock)
    iid = interaction.format(run=run_id)
    snapshot = Snapshot(
        run=await store.get_run(run_id), interactions=await store.list_interactions()
    )
    request = AnswerRequest(interaction_id=iid, payload=payload, via="cli")
    closed = await refusal(lambda: closed_answer(snapshot, request))
    assert closed == await refusal(lambda: runner.answer(run_id, iid, payload))
    assert closed is not None


async def test_an_ended_run_takes_an_identical_replay() -> None:
    runner, store, clock = fresh()
    run_id = await finished(runner, clock)
    snapshot = Snapshot(
        run=await store.get_run(run_id), interactions=await store.list_interactions()
    )
    request = AnswerRequest(interaction_id="int-call_publish", payload={"approved": True})
    replay = closed_answer(snapshot, request)
    assert not replay.created and replay.interaction.id == "int-call_publish"


async def test_an_approval_needing_several_approvals_is_refused_typed() -> None:
    """The Temporal engine keeps no votes: a vote is refused by the validator (a typed
    ``UsageError`` naming the count), never settled on the first approval."""
    from interactions import UsageError
    from tests.recipes.runs.test_votes import QUORUM

    runner, store, clock = fresh()
    started = await runner.start(QUORUM, "release it")
    (gate,) = started.interrupts
    current = await state(store, started.run_id)
    request = AnswerRequest(
        interaction_id=gate.id, payload={"approved": True}, answered_by="ada", groups=["release"]
    )
    with pytest.raises(UsageError, match="needs 2 approvals, and the Temporal engine keeps no"):
        check_answer(current, started.run_id, request, clock.now)
    entries = [{"interruptId": gate.id, "status": "resolved", "payload": {"approved": True}}]
    resume = ResumeRequest(entries=entries, answered_by="ada", groups=["release"])
    with pytest.raises(UsageError, match="keeps no votes"):
        check_resume(current, started.run_id, resume, clock.now)
