"""Lanes: what the host says in Slack about one run, in order, without waiting on other runs.

Slack limits posts per channel (about one a second, and a 429 with ``Retry-After`` past it,
which the client waits out). Posted one after another, every run's cards waited behind the
one busy channel; each run now has a lane: a queue of jobs run in order by a task of its own.
A run's jobs keep their order; runs do not wait on each other, up to :data:`BUSY_LANES` at
work at once (a host catching up hundreds of runs does not open hundreds of requests to Slack:
past the client's connection pool they would time out, waiting for a connection).

A lane holds at most ``capacity`` jobs waiting (:data:`LANE_CAPACITY`), besides the one at
work: memory stays bounded however long Slack holds a channel up. A job that finds its lane
full is not queued, and :meth:`Lanes.submit` says so (``False``): its caller decides what the
run loses and says it (the follower brings the run's cards up to date from the store once its
lane moves again, and says in its thread that some of the run is missing there). One job more
than ``capacity`` may be queued with ``reserve=True``: room for that catch-up. A lane's task
ends once its queue is empty; the next job starts another, so a lane costs nothing while its
run is quiet, paused for days or over.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Awaitable, Callable

import anyio
from anyio.abc import TaskGroup

__all__ = ["BUSY_LANES", "LANE_CAPACITY", "Job", "Lanes"]

logger = logging.getLogger("hosts.slack")

LANE_CAPACITY = 1000
"""Jobs a run's lane holds (waiting, or running) before it refuses more (the default of
``SlackConfig.lane_capacity``)."""
BUSY_LANES = 32
"""Lanes at work at once (the others' next jobs wait their turn, first come first served)."""

Job = Callable[[], Awaitable[None]]


class Lanes:
    """One ordered lane per key (a run id): see the module docstring."""

    def __init__(self, capacity: int = LANE_CAPACITY, *, busy: int = BUSY_LANES) -> None:
        if capacity < 1:
            raise ValueError(f"a lane holds at least one job, got {capacity!r}")
        self.capacity = capacity
        self._busy = anyio.CapacityLimiter(busy)
        self._group: TaskGroup | None = None
        self._lanes: dict[str, deque[tuple[Job, str]]] = {}
        self._working = 0  # jobs taken off their lanes, not done yet
        self._changed = anyio.Event()

    def attach(self, group: TaskGroup | None) -> None:
        """Run the lanes' tasks on ``group`` from now on (``None``: take no more jobs)."""
        self._group = group

    def __len__(self) -> int:
        """How many lanes have work (queued or running)."""
        return len(self._lanes)

    def waiting(self) -> int:
        """How many jobs the lanes hold, waiting or at work."""
        return self._working + sum(len(jobs) for jobs in self._lanes.values())

    def submit(self, key: str, job: Job, what: str, *, reserve: bool = False) -> bool:
        """Queue ``job`` (described by ``what`` in a log) last on ``key``'s lane, starting the
        lane's task if none runs. Return ``False``, queuing nothing, when ``capacity`` jobs
        wait on the lane already (``reserve``: one more is taken) or the lanes are detached."""
        if self._group is None:
            logger.warning("the host is stopping: %s was not shown in Slack", what)
            return False
        jobs = self._lanes.get(key)
        if jobs is not None and len(jobs) >= self.capacity + (1 if reserve else 0):
            return False
        if jobs is None:
            jobs = self._lanes[key] = deque()
            self._group.start_soon(self._run, key, jobs)
        jobs.append((job, what))
        return True

    async def _run(self, key: str, jobs: deque[tuple[Job, str]]) -> None:
        try:
            while jobs:
                job, what = jobs.popleft()  # taken off: room for one more while it works
                self._working += 1
                try:
                    async with self._busy:
                        await job()
                except Exception:
                    logger.exception("could not show %s in Slack", what)
                finally:
                    self._working -= 1
        finally:
            if self._lanes.get(key) is jobs:
                del self._lanes[key]
            self._changed.set()
            self._changed = anyio.Event()

    async def drain(self, within: float) -> bool:
        """Wait, at most ``within`` seconds, until every lane is empty (jobs queued meanwhile
        included); return whether they all are."""
        with anyio.move_on_after(within):
            while self._lanes:
                await self._changed.wait()
        return not self._lanes
