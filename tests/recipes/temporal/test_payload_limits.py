"""Temporal's payload limit (2 MiB a payload): a tool result or a transcript past it is refused
at once, saying why, instead of retried without end; a run stays readable."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import anyio
import pytest

from interactions import RunError, UsageError
from interactions.store import RunStatus
from recipes.runs.drivers import Checkpoint
from tests.recipes.temporal.conftest import RECIPES, Worker, open_engine
from tests.recipes.temporal.recipes_for_temporal import LOG_ENV

pytestmark = pytest.mark.anyio


def bodies(log: Path) -> list[str]:
    """The tool bodies that ran, in order (from the test log)."""
    return [line.split()[0] for line in log.read_text().splitlines()] if log.exists() else []


async def test_a_tool_result_over_the_limit_is_an_error_the_model_reads_and_runs_once(
    address: Any, worker: Worker, tmp_path: Path
) -> None:
    log = tmp_path / "log"
    recipe = f"{RECIPES}:huge_result"
    async with worker(recipe, env={LOG_ENV: str(log)}), open_engine(address) as engine:
        with anyio.fail_after(30):
            done = await engine.runner.start(recipe, "Read it")
    assert done.status is RunStatus.FINISHED
    assert done.text.startswith("Read: read's result is 3,000,"), done.text
    assert "over Temporal's payload limit of 2,097,152 bytes" in done.text
    assert bodies(log) == ["read-1"], "retrying would have run the body again"


async def test_a_transcript_over_the_limit_fails_the_run_at_once_saying_why(
    address: Any, worker: Worker, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    log = tmp_path / "log"
    recipe = f"{RECIPES}:growing_transcript"
    async with worker(recipe, env={LOG_ENV: str(log)}), open_engine(address) as engine:
        with anyio.fail_after(30), pytest.raises(RunError) as failed:  # not the 30 s "no worker"
            await engine.runner.start(recipe, "Read it all", run_id="run-big")
        assert failed.value.reason == "payload_too_large"
        assert "the model call (the transcript) is 2," in str(failed.value)
        assert "on the SQLite or PostgreSQL engine" in str(failed.value)
        with caplog.at_level(logging.WARNING, logger="recipes.temporal"):
            run = await engine.store.get_run("run-big")  # still readable: the query fits
            listed = await engine.store.list_runs()
    assert run.status is RunStatus.FAILED and run.error is not None
    assert "payload limit" in run.error
    assert [r.id for r in listed] == ["run-big"]
    assert Checkpoint.of(run).messages == [], "the transcript is left out of the reads"
    assert "its transcript is left out" in caplog.text
    assert bodies(log) == ["read-1", "read-2", "read-3"], "each body once; no fourth model call"


async def test_a_history_near_its_limit_fails_the_run_before_temporal_ends_it(
    address: Any, worker: Worker, tmp_path: Path
) -> None:
    log = tmp_path / "log"
    recipe = f"{RECIPES}:growing_transcript"
    limit = 5 * 1024 * 1024  # as a server with limit.historySize.error = 5 MiB
    async with (
        worker(recipe, env={LOG_ENV: str(log)}, history_limit=limit),
        open_engine(address) as engine,
    ):
        with anyio.fail_after(30), pytest.raises(RunError) as failed:
            await engine.runner.start(recipe, "Read it all", run_id="run-long")
        assert failed.value.reason == "history_too_large"
        assert f"near the {limit:,} at which Temporal ends a workflow" in str(failed.value)
        run = await engine.store.get_run("run-long")
    assert run.status is RunStatus.FAILED and run.error is not None
    assert "limit.historySize.error" in run.error
    assert bodies(log) == ["read-1", "read-2"], "stopped before the third model call"


async def test_a_history_limit_without_room_for_one_call_is_refused(address: Any) -> None:
    from recipes.temporal import running_worker

    with pytest.raises(UsageError, match="history_limit must exceed"):
        async with running_worker(f"{RECIPES}:growing_transcript", address, history_limit=1024):
            pass


async def test_a_run_keeps_the_history_limit_it_started_with(
    address: Any, worker: Worker
) -> None:
    recipe = f"{RECIPES}:two_reads"
    async with worker(recipe), open_engine(address) as engine:
        with anyio.fail_after(30):
            done = await engine.runner.start(recipe, "Read both", run_id="run-kept")
        assert done.status is RunStatus.FINISHED
    # Workers set to a lower limit replay the run (none kept in memory) as it ran: a replay
    # that stopped where the run went on would break every read of it.
    lower = 5 * 1024 * 1024
    async with (
        worker(recipe, history_limit=lower, max_cached_workflows=0),
        open_engine(address) as engine,
    ):
        run = await engine.store.get_run("run-kept")
        assert run.status is RunStatus.FINISHED and run.error is None
        assert [r.id for r in await engine.store.list_runs()] == ["run-kept"]


async def test_an_input_over_the_limit_is_refused_before_anything_starts(
    address: Any, worker: Worker
) -> None:
    recipe = f"{RECIPES}:two_reads"
    async with worker(recipe), open_engine(address) as engine:
        with pytest.raises(UsageError, match=r"the run's input is [\d,]+ bytes, over Temporal's"):
            await engine.runner.start(recipe, "x" * 2_500_000, run_id="run-huge-input")
        assert await engine.store.list_runs() == []
