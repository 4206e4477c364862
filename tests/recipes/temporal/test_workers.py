"""Workers in their own processes: one killed with SIGKILL in the middle of a tool body is
replaced by another, which finishes the run without calling the model again for what was done;
paused runs hold no memory in the worker."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from interactions.store import RunStatus
from recipes.runs import RunResult
from tests.recipes.temporal.conftest import RECIPES, RELEASE, entries, logged, open_engine
from tests.recipes.temporal.recipes_for_temporal import HANG_ENV, LOG_ENV
from tests.recipes.temporal.workers import worker_process

pytestmark = pytest.mark.anyio


async def test_a_worker_killed_mid_tool_is_replaced(address: Any, tmp_path: Path) -> None:
    log = tmp_path / "executions.log"
    slow = f"{RECIPES}:slow"
    options = ("--heartbeat", "2")
    finished: list[RunResult] = []
    done = anyio.Event()
    async with open_engine(address) as engine:
        with worker_process(slow, address, env={LOG_ENV: str(log), HANG_ENV: "1"},
                            options=options) as first:  # fmt: skip

            async def start() -> None:
                finished.append(await engine.runner.start(slow, "Deploy", run_id="run-kill"))
                done.set()

            async with anyio.create_task_group() as run:
                run.start_soon(start)
                await logged(log, "tool-start")
                first.kill()
                with (
                    worker_process(slow, address, env={LOG_ENV: str(log)}, options=options),
                    anyio.fail_after(60),
                ):
                    await done.wait()  # the start returns once the second worker is done
    assert finished[0].status is RunStatus.FINISHED
    assert finished[0].text == "Done: Deployed prod."
    seen = entries(log)
    first_pid = first.pid
    second = [pid for what, pid in seen if pid != first_pid]
    assert [what for what, pid in seen if pid == first_pid] == ["model-1", "tool-start"]
    assert [what for what, pid in seen if pid != first_pid] == ["tool-start", "tool-end", "model-2"]
    assert len(set(second)) == 1  # the model's first call was not made again on replay


async def test_paused_runs_hold_no_memory_in_the_worker(address: Any) -> None:
    options = ("--max-cached-workflows", "10")
    async with open_engine(address) as engine:
        with worker_process(RELEASE, address, options=options) as worker:

            async def start_many(count: int, prefix: str) -> None:
                async def one(n: int) -> None:
                    run = await engine.runner.start(RELEASE, "Release v1", run_id=f"{prefix}-{n}")
                    assert run.status is RunStatus.PAUSED_WAITING_HUMAN

                for chunk in range(0, count, 10):
                    async with anyio.create_task_group() as starts:
                        for n in range(chunk, min(chunk + 10, count)):
                            starts.start_soon(one, n)

            await start_many(60, "run-warm")
            warm = worker.rss_kib()
            await start_many(240, "run-more")
            held = worker.rss_kib()
            # 240 more paused runs: the worker keeps at most 10 in memory (seen here: +9 MiB;
            # +31 MiB when it keeps them all, with --max-cached-workflows 1000)
            assert held - warm < 18 * 1024, (warm, held)
            first = await engine.runner.answer(
                "run-warm-0", "int-call_channel", {"answer": "beta"}, resume=True
            )  # long evicted: replayed from history, resumed
            assert first.run is not None
            assert [i.id for i in first.run.interrupts] == ["int-call_publish"]
