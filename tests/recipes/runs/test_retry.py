"""A run that fails on a passing model failure is failed_resumable, and a retry continues it."""

from __future__ import annotations

import anyio
import httpx
import pytest
import respx

from interactions import ConflictError
from interactions.store import RunStatus, Store
from recipes.models import ModelError, OpenAIChatModel, RetryPolicy
from recipes.runs import Runner
from tests.recipes.models._wire import sse, stream_response
from tests.recipes.runs.conftest import RELEASE

pytestmark = pytest.mark.anyio


def _final_answer() -> httpx.Response:
    chunks = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "All set."}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        "[DONE]",
    ]
    return stream_response(sse(*chunks))


def _model() -> OpenAIChatModel:
    return OpenAIChatModel(
        "gpt-4.1-mini", env={"OPENAI_API_KEY": "sk-test"}, retry=RetryPolicy(max_retries=0)
    )


def _error(status: int, code: str | None = None) -> httpx.Response:
    return httpx.Response(status, json={"error": {"message": "no", "code": code}})


@pytest.mark.parametrize(
    ("failure", "error_class"),
    [
        (_error(503), "transient_exhausted"),  # retries (none here) used up on an outage
        (_error(429, "insufficient_quota"), "usage_window"),
        (_error(401), "auth"),
        (_error(400), "unclassified"),
    ],
)
async def test_failure_class_decides_the_status(
    store: Store, failure: httpx.Response, error_class: str
) -> None:
    resumable = error_class in ("transient_exhausted", "usage_window")
    with respx.mock(base_url="https://api.openai.com/v1") as api:
        api.post("/chat/completions").mock(side_effect=[failure, _final_answer()])
        runner = Runner(store, env={}, model=_model())
        with pytest.raises(ModelError) as caught:
            await runner.start(RELEASE, "Release v1")
        assert caught.value.error_class == error_class
        run_id = caught.value.run_id
        assert run_id is not None
        status = (await store.get_run(run_id)).status
        assert status is (RunStatus.FAILED_RESUMABLE if resumable else RunStatus.FAILED)
        if not resumable:
            with pytest.raises(ConflictError):
                await runner.retry(run_id)
            return
        done = await runner.retry(run_id)
    assert done.status is RunStatus.FINISHED and done.text == "All set."
    run = await store.get_run(run_id)
    users = [m for m in run.checkpoint["messages"] if m["role"] == "user"]
    assert len(users) == 1, "a retry adds no message"
    legs = [e.data for e in await store.list_events(run_id) if e.type == "leg_ended"]
    assert [(leg["outcome"], leg.get("code")) for leg in legs] == [
        ("error", error_class),
        ("success", None),
    ]


async def test_retry_of_a_finished_run_is_refused(store: Store) -> None:
    runner = Runner(store, env={"PI_ASK_USER_AUTO_APPROVE": "1"})
    done = await runner.start(RELEASE, "Release v1")
    with pytest.raises(ConflictError, match="only a failed_resumable run"):
        await runner.retry(done.run_id)


async def test_of_two_racing_retry_claims_one_wins_and_the_other_says_what_happened(
    store: Store,
) -> None:
    """The loser was told 'run … is at version 12, not 5; re-read the run and decide again',
    a store's words, not what happened: another process retried it first."""
    with respx.mock(base_url="https://api.openai.com/v1") as api:
        api.post("/chat/completions").mock(side_effect=[_error(503)] * 5)
        runner = Runner(store, env={}, model=_model())
        failed = []
        for _ in range(5):
            with pytest.raises(ModelError) as caught:
                await runner.start(RELEASE, "Release v1")
            failed.append(caught.value.run_id)
    for run_id in failed:
        assert run_id is not None
        outcomes: list[object] = []

        async def claim(run_id: str = run_id, into: list[object] = outcomes) -> None:
            elsewhere = Runner(store, env={"OPENAI_API_KEY": "sk-test"})  # another process
            try:
                into.append(await elsewhere.claim_retry(run_id))
            except ConflictError as exc:
                into.append(exc)

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(claim)
            tasks.start_soon(claim)
        refused = [o for o in outcomes if isinstance(o, ConflictError)]
        assert len(refused) == 1, outcomes
        said = str(refused[0])
        assert "another process first" in said or "only a failed_resumable run" in said, said
        assert (await store.get_run(run_id)).status is RunStatus.RUNNING
