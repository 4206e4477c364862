"""The host's worker: drives runs in this process. It starts the runs a mention or the slash
command asks for, resumes a run once its last open interaction is answered in Slack, and
sweeps expired interactions (which continues their runs, as ``runs expire`` does).

At most ``max_legs`` legs run at once; the rest wait their turn. A leg's failure is recorded
on its run (the feed follower says so in the run's thread); a start refused before the run
exists (a recipe that does not load) is said in the thread here.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import anyio
from anyio.abc import TaskGroup

from hosts.slack._client import SlackOut
from hosts.slack._config import SlackConfig
from hosts.slack._events import thread_id_for
from interactions import ConflictError, PiRecipesError, UnknownRunError
from interactions.async_questions import open_for_pause
from interactions.errors import error_code
from interactions.store import RunStatus
from recipes.runs import Runner

__all__ = ["Worker"]

logger = logging.getLogger("hosts.slack")


class Worker:
    """Runs legs for the Slack host on the task group it is given (see the module docs)."""

    def __init__(self, runner: Runner, config: SlackConfig, out: SlackOut) -> None:
        self.runner = runner
        self.config = config
        self.out = out
        self._limiter = anyio.CapacityLimiter(config.max_legs)
        self._group: TaskGroup | None = None

    def attach(self, group: TaskGroup | None) -> None:
        """Run legs on ``group`` from now on (``None``: accept no more)."""
        self._group = group

    def _spawn(self, work: Callable[[], Awaitable[object]], what: str) -> bool:
        if self._group is None:
            logger.warning("the host is stopping: %s was not started", what)
            return False

        async def guarded() -> None:
            try:
                async with self._limiter:
                    await work()
            except PiRecipesError as exc:
                logger.warning("%s: %s: %s", what, error_code(exc).label, exc)
            except Exception:
                logger.exception("%s failed", what)

        self._group.start_soon(guarded)
        return True

    def start(self, prompt: str, *, channel: str, thread_ts: str, run_id: str) -> bool:
        """Start a run of the host's recipe on ``prompt``, its replies going to the thread;
        ``False`` when the host is stopping and starts nothing (the caller says so)."""
        return self._spawn(
            lambda: self._start(prompt, channel=channel, thread_ts=thread_ts, run_id=run_id),
            f"starting run {run_id}",
        )

    async def _start(self, prompt: str, *, channel: str, thread_ts: str, run_id: str) -> None:
        try:
            await self.runner.start(
                self.config.recipe,
                prompt,
                agent=self.config.agent,
                model=self.config.model,
                thread_id=thread_id_for(channel, thread_ts),
                run_id=run_id,
            )
        except ConflictError as exc:
            if exc.reason == "duplicate_run":
                return  # Slack delivered the event again: the run exists already
            raise
        except PiRecipesError as exc:
            try:
                await self.runner.store.get_run(run_id)
            except UnknownRunError:  # refused before the run was written: say it here
                label = error_code(exc).label
                await self.out.reply(channel, thread_ts, f"Could not start a run: {label}: {exc}")
                return
            raise  # the run records its failure; the follower posts it

    def resume(self, run_id: str) -> None:
        """Continue ``run_id`` now that nothing it waits for is open (a no-op if someone else
        resumed it first)."""
        self._spawn(lambda: self.runner.resume_answered(run_id), f"resuming run {run_id}")

    async def resume_left_paused(self) -> None:
        """Resume the runs an answer given in Slack (or an expiry) left paused with nothing
        open: a host stopped between storing the answer and resuming its run. A run answered
        elsewhere (``runs answer`` without ``--resume``) is left as its answerer left it."""
        store = self.runner.store
        after: str | None = None
        while runs := await store.list_runs(RunStatus.PAUSED_WAITING_HUMAN, limit=100, after=after):
            after = runs[-1].id
            for run in runs:
                records = await store.list_interactions(run.id)
                answered = [r for r in records if r.answer is not None]
                if not answered or open_for_pause([r for r in records if r.pending]):
                    continue
                last = max(answered, key=lambda r: r.answered_at or r.requested_at).answer
                if last is not None and (last.via == "slack" or last.status == "expired"):
                    logger.info("run %s: answered while no host ran; resuming it", run.id)
                    self.resume(run.id)

    async def sweep_forever(self) -> None:
        """Settle expired interactions every ``expire_every`` seconds, until cancelled; a run
        left with nothing open is continued in a task of its own (:meth:`resume`), so one long
        leg never delays the next expiry."""
        while True:
            try:
                for result in await self.runner.expire_due(resume=False):
                    logger.info("run %s: expired interactions settled", result.run_id)
                    if result.status is RunStatus.PAUSED_WAITING_HUMAN and not result.interrupts:
                        self.resume(result.run_id)
            except PiRecipesError as exc:
                logger.warning("expiry sweep: %s: %s", error_code(exc).label, exc)
            except Exception:
                logger.exception("expiry sweep failed; trying again later")
            await anyio.sleep(self.config.expire_every)
