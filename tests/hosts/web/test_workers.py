"""Bounded concurrency: at most ``limit`` jobs run at once, ``queue`` more wait, the rest are
refused as busy; an abandoned job never runs. The expiry sweep settles expired questions; the
retry sweep retries a run whose automatic retry is due."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path

import anyio
import pytest

from hosts._kit import Desk, Workers, sweep_expired, sweep_retries
from hosts.web._errors import Busy
from hosts.web._feed import Feed
from hosts.web._hub import Hub
from interactions.store import MemoryStore, RunStatus, Store
from recipes.graph import start_graph
from recipes.models import ModelRequest
from recipes.runs import Runner
from recipes.runs.drivers import retry_schedule_of
from tests.hosts.fake_providers import fake_providers, says, usage_window
from tests.hosts.web.server import FRAGILE_RECIPE, RELEASE
from tests.hosts.web.web_fragile_recipe import SEALED
from tests.recipes.graph.fallback_flows import REVIEW, write_plan_phase

pytestmark = pytest.mark.anyio


async def test_limit_queue_and_busy() -> None:
    workers = Workers(limit=2, queue=1)
    running = peak = 0
    release = anyio.Event()
    done: list[int] = []

    async def job(n: int) -> None:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await release.wait()
        running -= 1
        done.append(n)

    async with anyio.create_task_group() as tg:
        await tg.start(workers.run)
        tickets = [workers.submit(lambda n=n: job(n)) for n in range(3)]
        with pytest.raises(Busy):
            workers.submit(lambda: job(99))
        with anyio.fail_after(5):
            await tickets[1].begun.wait()
        assert not tickets[2].begun.is_set(), "the third waits for a slot"
        release.set()
        with anyio.fail_after(5):
            await tickets[2].begun.wait()
            await workers.wait_idle()
        tg.cancel_scope.cancel()
    assert peak == 2 and sorted(done) == [0, 1, 2]


async def test_an_abandoned_job_never_runs() -> None:
    workers = Workers(limit=1, queue=1)
    gate = anyio.Event()
    ran: list[str] = []

    async def first() -> None:
        await gate.wait()

    async def second() -> None:
        ran.append("second")

    async with anyio.create_task_group() as tg:
        await tg.start(workers.run)
        workers.submit(first)
        waiting = workers.submit(second)
        assert waiting.abandon()
        gate.set()
        with anyio.fail_after(5):
            await workers.wait_idle()
        tg.cancel_scope.cancel()
    assert ran == []


async def test_reserving_before_serving_is_busy() -> None:
    with pytest.raises(Busy):
        Workers(limit=1, queue=0).reserve()


@asynccontextmanager
async def sweeping(
    runner: Runner, workers: Workers, *, retries: bool = False
) -> AsyncIterator[None]:
    """The web host's expiry sweep (``retries``: its retry sweep) every 50 ms, continuing the
    runs it settles (retrying the due ones) on ``workers``."""
    desk = Desk(runner, workers, Feed(runner.store, Hub()).live)
    async with anyio.create_task_group() as tg:
        await tg.start(workers.run)
        if retries:
            tg.start_soon(sweep_retries, runner, 0.05, desk.continue_retry)
        else:
            tg.start_soon(sweep_expired, runner, 0.05, desk.continue_answered)
        yield
        tg.cancel_scope.cancel()


async def until_status(store: Store, run_id: str, wanted: set[RunStatus]) -> RunStatus:
    """Wait (level-triggered, at most 10 s) until the run's status is one of ``wanted``."""
    seen = 0
    with anyio.fail_after(10):
        while (status := (await store.get_run(run_id)).status) not in wanted:
            new = await store.wait_for_events(run_id, after_seq=seen, timeout=5)
            seen = new[-1].seq if new else seen
    return status


async def test_the_sweep_settles_expired_questions_and_the_run_goes_on() -> None:
    async with MemoryStore() as store:
        runner = Runner(store, env={"PI_INTERRUPT_TTL_SECONDS": "0.2"}, host="web")
        paused = await runner.start(RELEASE, "Release v1.0.0")
        async with sweeping(runner, Workers(limit=1, queue=0)):
            await until_status(store, paused.run_id, {RunStatus.FINISHED})
        answers = [i.answer for i in await store.list_interactions(paused.run_id)]
        assert [a.status for a in answers if a] == ["expired", "expired"]
        assert (await runner.status(paused.run_id)).text.startswith("Did not publish v1.0.0")


class Broken:
    """A model whose client fails with an exception none of ours (a bug in a custom model)."""

    name = "scripted:release-demo"

    async def stream(self, request: ModelRequest) -> AsyncIterator[object]:
        raise RuntimeError("the custom model's client broke")
        yield  # pragma: no cover


async def test_a_continuation_failing_after_expiry_is_recorded_and_the_sweep_goes_on() -> None:
    """Before, the exception left the sweep, whose task group was the server's: the server
    stopped. Now the run records the failure and the sweep settles the next run as well."""
    async with MemoryStore() as store:
        asking = Runner(store, env={"PI_INTERRUPT_TTL_SECONDS": "0.2"}, host="web")
        first = await asking.start(RELEASE, "Release v1.0.0")
        broken = Runner(store, env={}, host="web", model=Broken())  # type: ignore[arg-type]
        async with sweeping(broken, Workers(limit=1, queue=0)):
            failed = await until_status(
                store, first.run_id, {RunStatus.FAILED, RunStatus.FAILED_RESUMABLE}
            )
            second = await asking.start(RELEASE, "Release v2.0.0")  # the sweep still sweeps
            await until_status(store, second.run_id, {failed})
        run = await store.get_run(first.run_id)
        assert "the custom model's client broke" in (run.error or "")


async def test_a_run_that_fails_to_continue_holds_up_no_other(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run whose model's credentials check raises (an error none of ours) as the sweep hands
    it to a worker: it stays paused and answered, and the next run goes on all the same."""
    monkeypatch.chdir(tmp_path)  # the fragile model fails while ./vault-sealed exists
    async with MemoryStore() as store:
        runner = Runner(store, env={"PI_INTERRUPT_TTL_SECONDS": "0.2"}, host="web")
        fragile = await runner.start(FRAGILE_RECIPE, "Ask me a word")
        release = await runner.start(RELEASE, "Release v1.0.0")
        (tmp_path / SEALED).write_text("")
        async with sweeping(runner, Workers(limit=1, queue=0)):
            await until_status(store, release.run_id, {RunStatus.FINISHED})
        stuck = await runner.status(fragile.run_id)
        assert (stuck.status, stuck.interrupts) == (RunStatus.PAUSED_WAITING_HUMAN, [])


async def test_runs_no_worker_can_take_wait_for_the_next_sweep() -> None:
    async with MemoryStore() as store:
        runner = Runner(store, env={"PI_INTERRUPT_TTL_SECONDS": "0.2"}, host="web")
        runs = [await runner.start(RELEASE, f"Release v{n}.0.0") for n in (1, 2, 3)]
        async with sweeping(runner, Workers(limit=1, queue=0)):  # one leg at a time
            for run in runs:
                await until_status(store, run.run_id, {RunStatus.FINISHED})


async def test_the_retry_sweep_retries_a_due_run_once_its_window_reopens(tmp_path: Path) -> None:
    flow = write_plan_phase(tmp_path)
    with fake_providers() as fake:
        async with MemoryStore() as store:
            runner = Runner(store, env=fake.env(), host="web", cwd=tmp_path)
            fake.queue("openai", usage_window(reset="200ms"), says(REVIEW))
            failed = await start_graph(runner, flow, auto_resume=3)
            assert failed.status is RunStatus.FAILED_RESUMABLE
            schedule = retry_schedule_of((await store.get_run(failed.run_id)).checkpoint)
            assert schedule is not None and schedule.due_at is not None
            async with sweeping(runner, Workers(limit=1, queue=0), retries=True):
                await until_status(store, failed.run_id, {RunStatus.FINISHED})
            assert len(fake.requests["openai"]) == 2, "retried once, when due"
            resumed = [e for e in await store.list_events(failed.run_id) if e.type == "run_resumed"]
            assert [e.data for e in resumed] == [{"from": "failed_resumable"}]
            assert resumed[0].at >= schedule.due_at, "not before the window reopened"


async def test_a_long_retried_leg_holds_up_no_other_due_retry(tmp_path: Path) -> None:
    """Before, the sweep ran each retried leg itself: while one took long (a slow model, a long
    tool), no other due run was retried. Now each leg starts on the workers."""
    flow = write_plan_phase(tmp_path)
    held = threading.Event()
    with fake_providers() as fake:
        async with MemoryStore() as store:
            runner = Runner(store, env=fake.env(), host="web", cwd=tmp_path)
            fake.queue("openai", usage_window(reset="200ms"), usage_window(reset="200ms"))
            runs = [(await start_graph(runner, flow, auto_resume=3)).run_id for _ in range(2)]
            fake.queue("openai", replace(says(REVIEW), hold=held), says(REVIEW))
            try:
                async with sweeping(runner, Workers(limit=2, queue=0), retries=True):
                    with anyio.fail_after(10):
                        first = await _first_to_finish(store, runs)
                    (slow,) = set(runs) - {first}
                    assert (await store.get_run(slow)).status is RunStatus.RUNNING, "held"
                    held.set()
                    await until_status(store, slow, {RunStatus.FINISHED})
            finally:
                held.set()  # let the fake server's thread go, whatever happened
            assert len(fake.requests["openai"]) == 4, "each run retried once"


async def _first_to_finish(store: Store, run_ids: list[str]) -> str:
    async with store.watch() as feed:
        async for event in feed:
            finished = event.type == "run_status_changed" and event.data["to"] == "finished"
            if finished and event.run_id in run_ids:
                return event.run_id
    raise AssertionError("the store's feed ended")


async def test_the_retry_sweep_can_be_turned_off() -> None:
    async with MemoryStore() as store:
        runner = Runner(store, env={}, host="web")
        desk = Desk(runner, Workers(limit=1, queue=0), Feed(store, Hub()).live)
        with anyio.fail_after(1):
            await sweep_retries(runner, 0, desk.continue_retry)  # returns at once


async def test_a_continuation_still_queued_when_the_server_stops_leaves_the_run_to_retry() -> None:
    """The last answer claimed the run (``running``) for a continuation that waited for a
    worker; the server stopped first and the run stayed ``running`` with no one on it, for
    good (a restart did not take it up; only ``runs recover`` did)."""
    async with MemoryStore() as store:
        runner = Runner(store, env={}, host="web")
        workers = Workers(limit=1, queue=1)
        desk = Desk(runner, workers, Feed(store, Hub()).live)
        paused = await runner.start(RELEASE, "Release v1")
        async with anyio.create_task_group() as tg:
            await tg.start(workers.run)
            workers.submit(anyio.sleep_forever)  # the only worker: a leg that goes on
            with anyio.fail_after(5):
                await desk.answer(paused.run_id, "int-call_channel", {"answer": "Beta"})
            assert (await store.get_run(paused.run_id)).status is RunStatus.RUNNING  # claimed
            tg.cancel_scope.cancel()  # the server stops: the queued continuation never began
        run = await store.get_run(paused.run_id)
        assert run.status is RunStatus.FAILED_RESUMABLE
        assert run.error is not None and run.error.startswith("interrupted before the leg")
        done = await runner.retry(paused.run_id)
        assert done.status is RunStatus.PAUSED_WAITING_HUMAN  # on to its approval
        assert [i.id for i in done.interrupts] == ["int-call_publish"]


async def test_stopping_gives_running_jobs_the_grace_and_drops_queued_ones() -> None:
    """A stop cut every job at once (the shutdown's cancel reached them before the grace was
    given); a job still queued then started, only to be cut."""
    workers = Workers(limit=1, queue=1)
    release = anyio.Event()
    ran: list[str] = []
    dropped: list[str] = []

    async def long_job() -> None:
        await release.wait()
        ran.append("long")

    async def queued_job() -> None:
        ran.append("queued")

    async def hand_back() -> None:
        dropped.append("queued")

    async with anyio.create_task_group() as tg:
        await tg.start(workers.run)
        first = workers.submit(long_job)
        workers.reserve().start(queued_job, dropped=hand_back)
        with anyio.fail_after(5):
            await first.begun.wait()
        tg.start_soon(workers.stop, 5.0)
        await anyio.wait_all_tasks_blocked()  # the stop waits for the running job...
        release.set()  # ...which ends within the grace
    assert ran == ["long"] and dropped == ["queued"]
    with pytest.raises(Busy):
        workers.reserve()


async def test_stopping_cancels_a_job_past_the_grace() -> None:
    workers = Workers(limit=1, queue=0)
    cut = anyio.Event()

    async def stubborn() -> None:
        try:
            await anyio.sleep_forever()
        finally:
            cut.set()

    async with anyio.create_task_group() as tg:
        await tg.start(workers.run)
        ticket = workers.submit(stubborn)
        with anyio.fail_after(5):
            await ticket.begun.wait()
            await workers.stop(0.1)
    assert cut.is_set()
