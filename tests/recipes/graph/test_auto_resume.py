"""Automatic retries of a graph run that failed on a passing model failure: planned in the
failing leg's own write (``run_retry_scheduled``), due when the provider's reset header says,
with backoff when it says nothing, at most N times; ``Runner.retry_due`` continues what is
due. The clock is passed in (``now=``), never waited on."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest

from interactions import UsageError
from interactions.store import RunStatus, Store, open_sqlite_store, utc_now
from recipes.graph import start_graph
from recipes.graph.runtime import GraphCheckpoint, path_lines
from recipes.runs import Runner
from recipes.runs.drivers import RetrySchedule, retry_schedule_of
from tests.hosts.fake_providers import (
    FakeProviders,
    error,
    fake_providers,
    outage,
    says,
    usage_window,
)
from tests.recipes.graph.fallback_flows import REVIEW, write_plan_phase

pytestmark = pytest.mark.anyio


@pytest.fixture
def fake() -> Any:
    with fake_providers() as served:
        yield served


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    async with await open_sqlite_store(tmp_path / "state.db") as opened:
        yield opened


async def schedule_of(store: Store, run_id: str) -> RetrySchedule:
    found = retry_schedule_of((await store.get_run(run_id)).checkpoint)
    assert found is not None
    return found


async def test_a_retry_is_due_when_the_reset_header_says_and_at_most_n_times(
    tmp_path: Path, store: Store, fake: FakeProviders
) -> None:
    flow = write_plan_phase(tmp_path)
    runner = Runner(store, env=fake.env(), cwd=tmp_path)
    fake.queue("openai", usage_window(reset="1m30s"))
    before = utc_now()
    failed = await start_graph(runner, flow, auto_resume=1)
    assert failed.status is RunStatus.FAILED_RESUMABLE
    [planned] = [e for e in await store.list_events(failed.run_id)
                 if e.type == "run_retry_scheduled"]  # fmt: skip
    assert {k: planned.data[k] for k in ("attempt", "max", "delay_ms", "reason", "retry_after")} \
        == {"attempt": 1, "max": 1, "delay_ms": 90_000, "reason": "usage_window",
            "retry_after": 90.0}  # fmt: skip
    schedule = await schedule_of(store, failed.run_id)
    assert schedule.attempts == 1 and schedule.due_at is not None
    assert timedelta(seconds=89) < schedule.due_at - before < timedelta(seconds=91)
    cp = GraphCheckpoint.model_validate((await store.get_run(failed.run_id)).checkpoint)
    assert path_lines(cp)[-1].startswith("auto-resume: 1 of 1 retries planned, next due ")

    assert await runner.retry_due(now=schedule.due_at - timedelta(milliseconds=1)) == []
    assert len(fake.requests["openai"]) == 1, "nothing was retried before the window reopened"
    fake.queue("openai", usage_window(reset="1m30s"))  # still shut
    [again] = await runner.retry_due(now=schedule.due_at)
    assert again.run_id == failed.run_id and again.status is RunStatus.FAILED_RESUMABLE
    skipped = [e.data for e in await store.list_events(failed.run_id)
               if e.type == "run_retry_skipped"]  # fmt: skip
    assert skipped == [{"reason": "budget_spent", "code": "usage_window", "attempts": 1,
                        "max": 1}]  # fmt: skip
    spent = await schedule_of(store, failed.run_id)
    assert spent.due_at is None and spent.attempts == 1
    assert await runner.retry_due(now=utc_now() + timedelta(days=30)) == []
    fake.queue("openai", says(REVIEW))  # a person may still retry it by hand
    assert (await runner.retry(failed.run_id)).status is RunStatus.FINISHED


async def test_without_a_provider_hint_the_waits_back_off(
    tmp_path: Path, store: Store, fake: FakeProviders
) -> None:
    flow = write_plan_phase(tmp_path)
    runner = Runner(store, env=fake.env(), cwd=tmp_path)
    fake.queue("openai", *[outage()] * 3)
    schedule = RetrySchedule(max=3, backoff=0.25)
    failed = await start_graph(runner, flow, auto_resume=schedule)
    assert failed.status is RunStatus.FAILED_RESUMABLE, failed.error
    fake.queue("openai", *[outage()] * 6)
    for _ in range(2):
        due = (await schedule_of(store, failed.run_id)).due_at
        assert due is not None
        [retried] = await runner.retry_due(now=due)
        assert retried.status is RunStatus.FAILED_RESUMABLE
    delays = [e.data["delay_ms"] for e in await store.list_events(failed.run_id)
              if e.type == "run_retry_scheduled"]  # fmt: skip
    assert delays == [250, 500, 1000]
    reasons = {e.data["reason"] for e in await store.list_events(failed.run_id)
               if e.type == "run_retry_scheduled"}  # fmt: skip
    assert reasons == {"transient_exhausted"}


async def test_a_failure_that_does_not_pass_is_not_scheduled(
    tmp_path: Path, store: Store, fake: FakeProviders
) -> None:
    flow = write_plan_phase(tmp_path)
    runner = Runner(store, env=fake.env(), cwd=tmp_path)
    fake.queue("openai", error(401, "invalid_api_key"))
    failed = await start_graph(runner, flow, auto_resume=3)
    assert failed.status is RunStatus.FAILED
    types = {e.type for e in await store.list_events(failed.run_id)}
    assert "run_retry_scheduled" not in types and "run_retry_skipped" not in types
    assert (await schedule_of(store, failed.run_id)).attempts == 0


async def test_two_sweepers_retry_a_due_run_exactly_once(
    tmp_path: Path, store: Store, fake: FakeProviders
) -> None:
    flow = write_plan_phase(tmp_path)
    first = Runner(store, env=fake.env(), cwd=tmp_path)
    second = Runner(store, env=fake.env(), cwd=tmp_path, host="web")
    fake.queue("openai", usage_window(reset="5s"))
    failed = await start_graph(first, flow, auto_resume=2)
    due = (await schedule_of(store, failed.run_id)).due_at
    assert due is not None
    fake.queue("openai", says(REVIEW))
    results: list[list[Any]] = []

    async def sweep(runner: Runner) -> None:
        results.append(await runner.retry_due(now=due))

    with anyio.fail_after(30):
        async with anyio.create_task_group() as group:
            group.start_soon(sweep, first)
            group.start_soon(sweep, second)
    assert sorted(len(r) for r in results) == [0, 1]
    assert (await store.get_run(failed.run_id)).status is RunStatus.FINISHED
    assert len(fake.requests["openai"]) == 2, "one retry, by one sweeper"


async def test_auto_resume_is_a_bounded_count(tmp_path: Path, store: Store) -> None:
    flow = write_plan_phase(tmp_path)
    runner = Runner(store, env={}, cwd=tmp_path)
    for bad in (0, -1, 1001, True):
        with pytest.raises(UsageError, match="auto_resume"):
            await start_graph(runner, flow, auto_resume=bad)
    assert await store.list_runs() == []
