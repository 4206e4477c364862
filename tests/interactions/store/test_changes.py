"""The store's watch of other processes' commits, driven through its seams: a counter that
"other processes" move, and hints from a pipe (the test writes to it as the system would tell
of a write to the file). Every waiter waits with ``poll_interval`` infinite, so a wake-up can
only come from the watch."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Iterator

import anyio
import pytest

from interactions.store._changes import ChangeWatch
from interactions.store._doorbell import Doorbell, wait_level

pytestmark = pytest.mark.anyio


class Counter:
    """The store's commit counter, and what each run's check finds."""

    def __init__(self) -> None:
        self.value = 0
        self.answered: set[str] = set()
        self.closed = False

    async def version(self) -> int:
        if self.closed:
            raise RuntimeError("the store is closed")
        return self.value

    def commit(self, run_id: str) -> None:
        """Another process answers ``run_id`` (no ring: the bell is this process's)."""
        self.answered.add(run_id)
        self.value += 1

    def check(self, run_id: str) -> Callable[[], Awaitable[list[str]]]:
        async def found() -> list[str]:
            return [run_id] if run_id in self.answered else []

        return found


class PipeHints:
    """Hints that a test gives by writing a byte to a pipe."""

    def __init__(self) -> None:
        self.read_end, self.write_end = os.pipe()
        os.set_blocking(self.read_end, False)

    def tell(self) -> None:
        os.write(self.write_end, b"w")

    def fileno(self) -> int:
        return self.read_end

    def drain(self) -> bool:
        try:
            return bool(os.read(self.read_end, 4096))
        except BlockingIOError:
            return False

    def close(self) -> None:
        if self.read_end >= 0:
            os.close(self.read_end)
            os.close(self.write_end)
            self.read_end = self.write_end = -1


@pytest.fixture
def hints() -> Iterator[PipeHints]:
    made = PipeHints()
    yield made
    made.close()


async def _waiters(
    bell: Doorbell, watch: ChangeWatch, counter: Counter, runs: list[str], woke: list[str]
) -> None:
    """One waiter per run; answer the runs one by one, each once its waiter is waiting."""
    done = {run_id: anyio.Event() for run_id in runs}

    async def wait(run_id: str) -> None:
        woke.extend(
            await wait_level(bell, run_id, counter.check(run_id), timeout=3600, changes=watch)
        )
        done[run_id].set()

    async with anyio.create_task_group() as tg:
        for run_id in runs:
            tg.start_soon(wait, run_id)
        await anyio.wait_all_tasks_blocked()
        for run_id in runs:
            counter.commit(run_id)
            with anyio.fail_after(5):
                await done[run_id].wait()


async def test_polling_one_lead_wakes_every_waiter_as_others_commit() -> None:
    """Without hints (a system that gives none) the lead reads the counter every interval; as
    each waiter leaves with its answer, another takes the lead."""
    counter, bell, woke = Counter(), Doorbell(), []
    watch = ChangeWatch(counter.version, interval=0.001)
    runs = [f"run-{n}" for n in range(8)]
    await _waiters(bell, watch, counter, runs, woke)
    assert woke == runs


async def test_hints_wake_the_lead_and_it_looks_until_the_commit_shows(hints: PipeHints) -> None:
    """A hint comes before its commit shows (the write, then the flush): the lead keeps
    looking, at short intervals, until the counter moves. The polling interval is an hour."""
    counter, bell = Counter(), Doorbell()
    watch = ChangeWatch(counter.version, interval=3600, hints=lambda: hints)
    woke: list[str] = []

    async def wait() -> None:
        woke.extend(
            await wait_level(bell, "run-1", counter.check("run-1"), timeout=3600, changes=watch)
        )

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(wait)
            await anyio.wait_all_tasks_blocked()
            hints.tell()  # the write
            await anyio.sleep(0.005)  # the flush
            counter.commit("run-1")  # the commit shows
    assert woke == ["run-1"]


@pytest.mark.parametrize("ends", ["times out", "is cancelled"])
async def test_the_lead_leaving_hands_the_watch_to_a_waiter(ends: str, hints: PipeHints) -> None:
    counter, bell = Counter(), Doorbell()
    watch = ChangeWatch(counter.version, interval=3600, hints=lambda: hints)
    woke: list[str] = []

    async def lead(scope: anyio.CancelScope) -> None:
        with scope:
            timeout = 0.05 if ends == "times out" else 3600
            await wait_level(bell, "lead", counter.check("lead"), timeout=timeout, changes=watch)

    async def follow() -> None:
        woke.extend(
            await wait_level(bell, "run-1", counter.check("run-1"), timeout=3600, changes=watch)
        )

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            scope = anyio.CancelScope()
            tg.start_soon(lead, scope)
            await anyio.wait_all_tasks_blocked()  # the first waiter leads
            tg.start_soon(follow)
            await anyio.wait_all_tasks_blocked()
            if ends == "is cancelled":
                scope.cancel()
            else:
                await anyio.sleep(0.1)
            await anyio.wait_all_tasks_blocked()
            counter.commit("run-1")
            hints.tell()
    assert woke == ["run-1"]


async def test_closing_wakes_the_lead_which_finds_the_store_closed(hints: PipeHints) -> None:
    counter, bell = Counter(), Doorbell()
    watch = ChangeWatch(counter.version, interval=3600, hints=lambda: hints)
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:

            async def wait() -> None:
                with pytest.raises(RuntimeError, match="closed"):
                    await wait_level(
                        bell, "run-1", counter.check("run-1"), timeout=3600, changes=watch
                    )

            tg.start_soon(wait)
            await anyio.wait_all_tasks_blocked()
            counter.closed = True
            watch.close()
