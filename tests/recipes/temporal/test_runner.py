"""The Temporal engine's runner implements the runs protocol itself, beside the SQL one, neither
inheriting the other: every call is its run's workflow's; a claim to retry is continued by the
workflow, and ``proceed`` waits for it; what Temporal does by itself (the sweeps, recovery,
giving a claim back) is a documented no-op that writes nothing."""

from __future__ import annotations

import inspect
import uuid
from datetime import timedelta
from typing import Any

import pytest
from temporalio.common import RetryPolicy

from interactions import (
    ConflictError,
    RunError,
    UnknownInteractionError,
    UnknownRunError,
    UsageError,
)
from interactions.store import MemoryStore, RunStatus, utc_now
from recipes.models import ModelError
from recipes.runs import Claim, Runner, Runs, runner_for
from recipes.temporal import TemporalRunner
from tests.hosts.fake_openai import fake_openai
from tests.recipes.temporal.conftest import RECIPES, RELEASE, Engine, Worker, open_engine

pytestmark = pytest.mark.anyio

PROTOCOL = [name for name, value in vars(Runs).items() if inspect.isfunction(value)]
PROTOCOL = [name for name in PROTOCOL if not name.startswith("_")]


def test_the_protocol_is_what_a_host_calls() -> None:
    assert sorted(PROTOCOL) == sorted(
        ["start", "answer", "resume", "resume_answered", "claim_answered", "claim_retry",
         "proceed", "release", "retry", "cancel", "expire_due", "due_retries", "recover",
         "status", "interaction", "view"]
    )  # fmt: skip


def test_the_temporal_runner_is_no_runner_subclass_and_defines_every_call_itself() -> None:
    assert not issubclass(TemporalRunner, Runner)
    assert not issubclass(Runner, TemporalRunner)
    assert TemporalRunner.__mro__ == (TemporalRunner, object)
    missing = [name for name in PROTOCOL if name not in vars(TemporalRunner)]
    assert missing == []
    for name in PROTOCOL:  # the same parameters as the SQL runner's (the host calls either)
        ours = inspect.signature(getattr(TemporalRunner, name)).parameters
        theirs = inspect.signature(getattr(Runner, name)).parameters
        assert list(ours) == list(theirs), name


async def test_runner_for_gives_each_store_the_runs_of_its_engine(engine: Engine) -> None:
    sql = runner_for(MemoryStore(), env={}, host="test")
    assert isinstance(sql, Runner) and isinstance(sql, Runs)
    assert isinstance(engine.runner, TemporalRunner) and isinstance(engine.runner, Runs)
    assert engine.runner.store is engine.store and not engine.runner.strandable


async def test_what_temporal_does_itself_is_a_no_op_that_writes_nothing(engine: Engine) -> None:
    runner = engine.runner
    started = await runner.start(RELEASE, "Release v7.0.0")
    run_id = started.run_id
    before = await engine.store.snapshot(run_id)
    assert before.run is not None
    later = utc_now() + timedelta(days=30)  # its question is long expired then
    assert await runner.expire_due(now=later) == []  # the run's own timer settles it
    assert await runner.expire_due(now=later, resume=False) == []
    assert await runner.due_retries(now=later) == []
    assert await runner.recover(older_than=0, now=later) == []
    await runner.release(Claim(before.run))  # nothing to give back
    assert await engine.store.snapshot(run_id) == before, "nothing was written"
    with pytest.raises(UsageError):
        await runner.recover(older_than=-1)
    with pytest.raises(UsageError):  # and the store writes nothing behind the workflow's back
        await engine.store.update_run(run_id, expected_version=before.run.version)
    assert await engine.store.snapshot(run_id) == before


async def test_reads_are_the_workflow_s(engine: Engine) -> None:
    runner = engine.runner
    started = await runner.start(RELEASE, "Release v7.1.0")
    record = await runner.interaction(started.run_id, "int-call_channel")
    assert record.pending and record.run_id == started.run_id
    with pytest.raises(UnknownInteractionError):
        await runner.interaction(started.run_id, "int-nope")
    with pytest.raises(UnknownRunError):
        await runner.interaction("run-nope", "int-call_channel")
    run = (await engine.store.snapshot(started.run_id)).run
    assert run is not None
    sql_view = Runner(MemoryStore(), env={}).view(run)
    assert runner.view(run) == sql_view and sql_view.agui_run_id == started.agui_run_id
    assert runner.view(run.model_copy(update={"kind": "no-such-kind"})).text == ""


async def test_a_claim_to_retry_is_continued_by_the_workflow(address: Any, worker: Worker) -> None:
    quick = RetryPolicy(initial_interval=timedelta(milliseconds=100), maximum_attempts=2)
    with fake_openai([503] * 6 + ["Back again."]) as fake:
        env = {"OPENAI_BASE_URL": fake.base_url, "OPENAI_API_KEY": "sk-test-not-real"}
        async with (
            worker(f"{RECIPES}:openai", env=env, model_retry=quick),
            open_engine(address) as engine,
        ):
            runner = engine.runner
            with pytest.raises(ModelError):
                await runner.start(f"{RECIPES}:openai", "Hello", run_id="run-claimed")
            assert (await runner.status("run-claimed")).status is RunStatus.FAILED_RESUMABLE
            assert await runner.due_retries() == [], "Temporal retried it by its policy"
            claim = await runner.claim_retry("run-claimed")
            assert claim.retry and claim.run.status is RunStatus.RUNNING
            with pytest.raises(ConflictError) as again:
                await runner.claim_retry("run-claimed")
            assert again.value.reason == "not_resumable"
            done = await runner.proceed(claim)
            assert (done.status, done.text) == (RunStatus.FINISHED, "Back again.")
            with pytest.raises(ConflictError) as ended:
                await runner.claim_retry("run-claimed")
            assert ended.value.reason == "not_resumable"
            assert "finished" in str(ended.value)


ALIKE = [
    ("int-nope", "resolved", {"answer": "beta"}),
    ("int-call_channel", "maybe", {"answer": "beta"}),  # not a status
    ("int-call_channel", "resolved", {"approved": True}),
    ("int-call_channel", "resolved", "beta"),
]


async def test_an_answer_is_refused_alike_on_both_engines(engine: Engine) -> None:
    """The same run on each engine, the same hostile answers: the same class, reason and
    message (the workflow's validator decides with the runner's own rules)."""
    sql = Runner(MemoryStore(), env={}, host="test")
    for n, (interaction, status, payload) in enumerate(ALIKE):
        run_id = f"run-alike-{n}-{uuid.uuid4().hex[:8]}"
        refused: list[tuple[type[Exception], str | None, str]] = []
        for runner in (sql, engine.runner):
            await runner.start(RELEASE, "Release v7.2.0", run_id=run_id)
            with pytest.raises(RunError) as caught:
                await runner.answer(run_id, interaction, payload, status=status)
            refused.append((type(caught.value), caught.value.reason, str(caught.value)))
        assert refused[0] == refused[1], interaction
