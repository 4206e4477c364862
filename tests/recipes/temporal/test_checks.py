"""The update validators refuse what the store engine's runner refuses, with the same error
class and reason, deciding from the run as last written (no I/O)."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from interactions import PiRecipesError
from interactions.store import MemoryStore, utc_now
from recipes.runs import Runner
from recipes.temporal._checks import check_answer, check_cancel, check_resume, check_retry
from recipes.temporal._closed import closed_answer, state_of
from recipes.temporal._run_store import RunState
from recipes.temporal._wire import AnswerRequest, ResumeRequest, Snapshot
from tests.recipes.temporal.conftest import RELEASE

pytestmark = pytest.mark.anyio


async def paused() -> tuple[Runner, MemoryStore, str]:
    store = MemoryStore()
    runner = Runner(store, env={}, host="cli")
    run = await runner.start(RELEASE, "Release v1.0.0")
    return runner, store, run.run_id


async def state(store: MemoryStore, run_id: str) -> RunState:
    return state_of(
        Snapshot(run=await store.get_run(run_id), interactions=await store.list_interactions())
    )


async def refusal(call: Any) -> tuple[type[Exception], str | None] | None:
    try:
        result = call()
        if hasattr(result, "__await__"):
            await result
    except PiRecipesError as exc:
        return type(exc), getattr(exc, "reason", None)
    return None


ANSWERS = [
    ("int-nope", "resolved", {"answer": "x"}),
    ("int-call_channel", "resolved", {"approved": True}),
    ("int-call_channel", "resolved", {"answers": ["a"]}),
    ("int-call_channel", "resolved", {"answer": "Beta"}),  # accepted, then a replay
    ("int-call_channel", "cancelled", None),
    ("int-call_channel", "resolved", {"answer": json.loads("[" * 300 + "]" * 300)}),  # too deep
]


@pytest.mark.parametrize(("interaction", "status", "payload"), ANSWERS)
async def test_answers_are_refused_as_the_runner_refuses_them(
    interaction: str, status: str, payload: Any
) -> None:
    runner, store, run_id = await paused()
    request = AnswerRequest.model_validate(
        {"interaction_id": interaction, "status": status, "payload": payload, "via": "cli"}
    )
    current = await state(store, run_id)
    validator = await refusal(lambda: check_answer(current, run_id, request, utc_now()))
    runner_says = await refusal(lambda: runner.answer(run_id, interaction, payload, status=status))
    assert validator == runner_says


async def test_a_second_different_answer_and_an_identical_replay() -> None:
    runner, store, run_id = await paused()
    await runner.answer(run_id, "int-call_channel", {"answer": "beta"})
    current = await state(store, run_id)
    again = AnswerRequest(interaction_id="int-call_channel", payload={"answer": "Beta"})
    check_answer(current, run_id, again, utc_now())  # a replay passes
    other = AnswerRequest(interaction_id="int-call_channel", payload={"answer": "stable"})
    validator = await refusal(lambda: check_answer(current, run_id, other, utc_now()))
    runner_says = await refusal(
        lambda: runner.answer(run_id, "int-call_channel", {"answer": "stable"})
    )
    assert validator == runner_says
    assert validator is not None and validator[1] == "already_answered"


async def test_expired_and_cancelled_runs() -> None:
    runner, store, run_id = await paused()
    current = await state(store, run_id)
    late = utc_now() + timedelta(days=8)
    request = AnswerRequest(interaction_id="int-call_channel", payload={"answer": "beta"})
    validator = await refusal(lambda: check_answer(current, run_id, request, late))
    assert validator is not None and validator[0].__name__ == "ExpiredError"
    await runner.cancel(run_id)
    cancelled = await state(store, run_id)
    validator = await refusal(lambda: check_answer(cancelled, run_id, request, utc_now()))
    runner_says = await refusal(
        lambda: runner.answer(run_id, "int-call_channel", {"answer": "beta"})
    )
    assert validator == runner_says and validator is not None and validator[1] == "run_cancelled"
    assert await refusal(lambda: check_cancel(cancelled, run_id)) == await refusal(
        lambda: runner.cancel(run_id)
    )


async def test_resumes_and_retries() -> None:
    runner, store, run_id = await paused()
    current = await state(store, run_id)
    entries = [
        {"interruptId": "int-call_channel", "status": "resolved", "payload": {"answer": "beta"}}
    ]
    assert check_resume(current, run_id, ResumeRequest(entries=entries), utc_now()) is False
    unknown = [{"interruptId": "int-x", "status": "resolved", "payload": {"answer": "beta"}}]
    validator = await refusal(
        lambda: check_resume(current, run_id, ResumeRequest(entries=unknown), utc_now())
    )
    from ag_ui.core import ResumeEntry

    runner_says = await refusal(
        lambda: runner.resume(run_id, [ResumeEntry.model_validate(e) for e in unknown])
    )
    assert validator == runner_says
    assert await refusal(lambda: check_retry(current, run_id)) == await refusal(
        lambda: runner.retry(run_id)
    )


async def test_an_ended_run_takes_replays_only() -> None:
    runner, store, run_id = await paused()
    await runner.answer(run_id, "int-call_channel", {"answer": "beta"}, resume=True)
    await runner.answer(run_id, "int-call_publish", {"approved": True}, resume=True)
    snapshot = Snapshot(
        run=await store.get_run(run_id), interactions=await store.list_interactions()
    )
    replay = closed_answer(
        snapshot, AnswerRequest(interaction_id="int-call_publish", payload={"approved": True})
    )
    assert not replay.created
    other = AnswerRequest(interaction_id="int-call_publish", payload={"approved": False})
    assert await refusal(lambda: closed_answer(snapshot, other)) == await refusal(
        lambda: runner.answer(run_id, "int-call_publish", {"approved": False})
    )
