"""The lanes alone: a key's jobs in order, keys apart, a bounded queue, a bounded number at
work at once."""

from __future__ import annotations

import anyio
import pytest

from hosts.slack._lanes import Job, Lanes

pytestmark = pytest.mark.anyio


async def test_a_lane_keeps_its_order_and_does_not_wait_for_another() -> None:
    lanes = Lanes(capacity=10)
    done: list[str] = []
    stuck = anyio.Event()

    def job(name: str, wait: anyio.Event | None = None) -> Job:
        async def run() -> None:
            if wait is not None:
                await wait.wait()
            done.append(name)

        return run

    async with anyio.create_task_group() as group:
        lanes.attach(group)
        assert lanes.submit("a", job("a1", stuck), "a1")
        assert lanes.submit("a", job("a2"), "a2")
        assert lanes.submit("b", job("b1"), "b1")
        with anyio.fail_after(5):
            while done != ["b1"]:
                await anyio.wait_all_tasks_blocked()
        stuck.set()
        assert await lanes.drain(5)
    assert done == ["b1", "a1", "a2"]
    assert len(lanes) == 0, "a drained lane's task ended"


async def test_a_full_lane_refuses_a_job_but_one_reserved() -> None:
    lanes = Lanes(capacity=2)
    release = anyio.Event()

    async def held() -> None:
        await release.wait()

    async with anyio.create_task_group() as group:
        lanes.attach(group)
        assert lanes.submit("a", held, "1") and lanes.submit("a", held, "2")
        assert not lanes.submit("a", held, "3")
        assert lanes.submit("a", held, "catch-up", reserve=True)
        assert not lanes.submit("a", held, "another catch-up", reserve=True)
        assert lanes.waiting() == 3
        release.set()
        assert await lanes.drain(5)


async def test_a_job_at_work_leaves_room_for_a_catch_up_after_it() -> None:
    """The job at work counted in its lane: a catch-up at work on a lane that filled again
    left no room for the next catch-up, and the run was never caught up again."""
    lanes = Lanes(capacity=2)
    started, release = anyio.Event(), anyio.Event()

    async def catching_up() -> None:
        started.set()
        await release.wait()

    async def held() -> None:
        await release.wait()

    async with anyio.create_task_group() as group:
        lanes.attach(group)
        assert lanes.submit("a", catching_up, "a catch-up", reserve=True)
        with anyio.fail_after(5):
            await started.wait()
        assert lanes.submit("a", held, "1") and lanes.submit("a", held, "2")
        assert not lanes.submit("a", held, "3")
        assert lanes.submit("a", held, "the next catch-up", reserve=True)
        assert lanes.waiting() == 4
        release.set()
        assert await lanes.drain(5)


async def test_no_more_lanes_than_allowed_work_at_once() -> None:
    lanes = Lanes(busy=2)
    at_work = 0
    most = 0
    release = anyio.Event()

    async def held() -> None:
        nonlocal at_work, most
        at_work += 1
        most = max(most, at_work)
        await release.wait()
        at_work -= 1

    async with anyio.create_task_group() as group:
        lanes.attach(group)
        for key in "abcde":
            assert lanes.submit(key, held, key)
        await anyio.wait_all_tasks_blocked()
        assert at_work == 2
        release.set()
        assert await lanes.drain(5)
    assert most == 2
