"""Bounded concurrency for the legs a host drives (starts, resumes, retries), the expiry sweep,
the retry sweep (runs that opted into automatic retries, once their provider's window
reopens) and the reminder sweep (reminders and escalations of open questions).

At most ``limit`` legs run at once; at most ``queue`` more wait for a slot. A request reserves
its place first (:meth:`Workers.reserve`, :class:`Busy` when none is left), so a run it claims
is always continued. Whether this host or another continues a run is decided by the runner's
claims (``Runs.answer(..., claim=True)``, ``claim_answered``, ``claim_retry``), never here: with
two servers on one store, exactly one continues each answered run and retries each due one. The
sweeps start the legs they continue on the workers too.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable
from datetime import datetime

import anyio
from anyio.abc import TaskGroup

from interactions import (
    ConflictError,
    InvalidPayloadError,
    PiRecipesError,
    RunError,
    UsageError,
)
from interactions.errors import StoreUnavailableError
from interactions.reminders import remind_due
from interactions.store import RunStatus, Store
from recipes.runs import RunResult, Runs

__all__ = [
    "Busy",
    "Job",
    "Ticket",
    "Workers",
    "sweep_expired",
    "sweep_reminders",
    "sweep_retries",
]

logger = logging.getLogger("hosts")


class Busy(PiRecipesError):
    """Every worker is taken and the queue is full: try again shortly (the web host's 503)."""

Job = Callable[[], Awaitable[object]]


class Ticket:
    """A reserved place among the workers: start a job with it, or release it."""

    def __init__(self, workers: Workers) -> None:
        self._workers = workers
        self.begun = anyio.Event()
        """Set when the job leaves the queue and starts."""
        self.abandoned = False
        self._held = True

    def start(self, job: Job, *, name: str = "leg", dropped: Job | None = None) -> None:
        """Run ``job`` when a slot is free (it is skipped if abandoned before that). Should the
        server stop before it begins, ``dropped`` runs instead (shielded by its caller): what
        ``job`` had claimed is handed back, never left ``running`` with no one on it."""
        self._workers._start(self, job, name, dropped)

    def abandon(self) -> bool:
        """Give up a job that has not begun; return False if it already began."""
        if self.begun.is_set():
            return False
        self.abandoned = True
        return True

    def release(self) -> None:
        """Give the place back (idempotent)."""
        if self._held:
            self._held = False
            self._workers._pending -= 1


class Workers:
    """Runs jobs ``limit`` at a time, with ``queue`` more waiting; :meth:`run` hosts them."""

    def __init__(self, *, limit: int, queue: int) -> None:
        self.limit = limit
        self.queue = queue
        self._slots = anyio.CapacityLimiter(limit)
        self._pending = 0
        self._group: TaskGroup | None = None
        self._idle = anyio.Event()
        self._idle.set()
        self._stopping = False
        self._grace = 10.0
        self._ended = anyio.Event()

    @property
    def pending(self) -> int:
        """Jobs reserved, waiting or running."""
        return self._pending

    async def wait_idle(self) -> None:
        """Return once no job is reserved, waiting or running."""
        while self._pending:
            await self._idle.wait()

    def reserve(self) -> Ticket:
        """A place for one job; raises :class:`Busy` when every place is taken."""
        if self._group is None:
            raise Busy("the server is not serving (starting up or shutting down)")
        if self._pending >= self.limit + self.queue:
            raise Busy(
                f"all {self.limit} workers are busy and {self.queue} jobs wait; try again shortly"
            )
        self._pending += 1
        self._idle = anyio.Event() if self._idle.is_set() else self._idle
        return Ticket(self)

    def submit(self, job: Job, *, name: str = "leg") -> Ticket:
        """Reserve a place and start ``job`` with it (:class:`Busy` when none is left)."""
        ticket = self.reserve()
        ticket.start(job, name=name)
        return ticket

    def _start(self, ticket: Ticket, job: Job, name: str, dropped: Job | None) -> None:
        assert self._group is not None, "reserve() checked that the workers serve"
        self._group.start_soon(self._run, ticket, job, dropped, name, name=name)

    async def _run(self, ticket: Ticket, job: Job, dropped: Job | None, name: str) -> None:
        try:
            try:
                async with self._slots:
                    if ticket.abandoned or self._stopping:  # stopping: queued jobs are dropped
                        return
                    ticket.begun.set()
                    await job()
            finally:
                if dropped is not None and not ticket.begun.is_set() and not ticket.abandoned:
                    await dropped()  # the server stops with the job still queued
        except StoreUnavailableError as exc:  # how it ended may not be recorded
            logger.warning(
                "%s: the store went away (%s); if the run is left running, `pi-recipes runs "
                "recover --older-than 60` (on this store) frees it from a minute on",
                name, exc,
            )  # fmt: skip
        except RunError as exc:  # recorded on the run by the runner already
            logger.info("a leg ended with %s: %s", type(exc).__name__, exc)
        except PiRecipesError as exc:
            logger.warning("a leg was refused: %s", exc)
        except Exception:
            logger.exception("a leg failed")
        finally:
            ticket.release()
            if self._pending == 0:
                self._idle.set()

    async def run(
        self,
        *,
        grace: float = 10.0,
        task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Host the jobs until :meth:`stop` (or a cancel, which cuts the jobs at once; a run
        cut short is recorded ``failed_resumable`` by its leg). ``grace`` is :meth:`stop`'s
        default."""
        self._grace = grace
        self._ended = anyio.Event()
        try:
            async with anyio.create_task_group() as group:
                self._group = group
                task_status.started()
                try:
                    await anyio.sleep_forever()
                finally:
                    self._group = None
        finally:
            self._ended.set()

    async def stop(self, grace: float | None = None) -> None:
        """Take no more jobs; drop the queued ones (each hands its run back); give the running
        ones ``grace`` seconds (``run``'s by default) to end, then cancel what is left and
        return once :meth:`run` has."""
        group, self._group, self._stopping = self._group, None, True
        with anyio.CancelScope(shield=True):
            with anyio.move_on_after(self._grace if grace is None else grace):
                await self.wait_idle()
            if group is not None:
                group.cancel_scope.cancel()
                with anyio.move_on_after(self._grace if grace is None else grace):
                    await self._ended.wait()  # the cut legs record that they were cut short


async def _sweep(
    every: float, what: str, sweep: Callable[[], Awaitable[list[RunResult]]], done: str
) -> None:
    """Call ``sweep`` at once, then every ``every`` seconds, forever (never when ``every`` is
    not a positive finite number), logging each run it moved with ``done`` and a failure as a
    warning."""
    if not every or every <= 0 or every == math.inf:
        return
    while True:
        try:
            moved = await sweep()
        except (PiRecipesError, OSError) as exc:
            logger.warning("the %s sweep failed: %s", what, exc)
        except Exception:  # never out of the server's task group: it would stop the server
            logger.exception("the %s sweep failed; trying again in %g s", what, every)
        else:
            for result in moved:
                logger.info(done, result.run_id, result.status.value)
        await anyio.sleep(every)


async def sweep_expired(
    runs: Runs, every: float, continue_answered: Callable[[str], Awaitable[None]]
) -> None:
    """Settle expired interactions every ``every`` seconds (``Runs.expire_due``), forever.

    A run left with nothing open is continued on the workers (``continue_answered``: claim it,
    start its leg on a worker), not in the sweep: one long leg never delays the next expiry,
    and the legs count against the workers' limit. A run no worker can take yet (all busy) is
    tried again at the next sweep.
    """
    waiting: dict[str, None] = {}  # settled, not yet handed to a worker (insertion order)

    async def sweep() -> list[RunResult]:
        settled = await runs.expire_due(resume=False)
        for result in settled:
            if result.status is RunStatus.PAUSED_WAITING_HUMAN and not result.interrupts:
                waiting[result.run_id] = None
        for run_id in list(waiting):
            try:
                await continue_answered(run_id)
            except Busy:
                break  # every worker is taken: this run and the rest wait for the next sweep
            except (ConflictError, InvalidPayloadError):
                pass  # continued elsewhere, or it moved on
            except UsageError as exc:
                logger.warning("run %s cannot continue in this server: %s", run_id, exc)
            except Exception:  # none of ours (a model's bug): it stays paused, answered
                logger.exception("run %s could not be continued after its expiry", run_id)
            del waiting[run_id]
        return settled

    await _sweep(every, "expiry", sweep, "settled expired interactions of %s (%s)")


async def sweep_retries(
    runs: Runs, every: float, continue_retry: Callable[[str], Awaitable[None]]
) -> None:
    """Retry the ``failed_resumable`` runs whose automatic retry is due every ``every`` seconds
    (``Runs.due_retries``: each run at most as often as it opted in for), forever.

    Each is claimed (one server of several per run) and its leg started on the workers
    (``continue_retry``), not in the sweep: one long leg never delays the next due retry, and
    the legs count against the workers' limit. A run no worker can take yet (all busy) is
    retried at a later sweep; its retry stays due.
    """

    async def sweep() -> list[RunResult]:
        started: list[RunResult] = []
        for run in await runs.due_retries():
            try:
                await continue_retry(run.id)
            except Busy:
                break  # every worker is taken: this run and the rest wait for the next sweep
            except ConflictError:
                continue  # retried elsewhere first, or it moved
            except UsageError as exc:
                logger.warning("run %s is due for a retry but cannot continue here: %s",
                               run.id, exc)  # fmt: skip
                continue
            except Exception:  # none of ours (a model's bug): it stays failed_resumable
                logger.exception("run %s could not be retried", run.id)
                continue
            started.append(await runs.status(run.id))
        return started

    await _sweep(every, "retry", sweep, "started the retry of %s (%s)")


async def sweep_reminders(store: Store, every: float, clock: Callable[[], datetime]) -> None:
    """Write the reminders and escalations due (``interactions.reminders.remind_due`` at
    ``clock()``) every ``every`` seconds, forever (never when ``every`` is not a positive
    finite number). With several servers on one store each notice is written once, by
    whichever sweep finds it due first; the hosts show it from the store's feed."""

    async def sweep() -> list[RunResult]:
        for event in await remind_due(store, now=clock()):
            logger.info("%s %s of run %s", event.type, event.data.get("interaction_id"),
                        event.run_id)  # fmt: skip
        return []

    await _sweep(every, "reminder", sweep, "")
