"""The host's worker: drives runs in this process on the host kit's workers. It starts the runs a
mention or the slash command asks for, answers what is clicked in Slack (the answer that was a
run's last claims it and continues it here), and sweeps expired interactions (continuing their
runs, as ``runs expire`` does).

At most ``max_legs`` legs run at once; the rest wait their turn. A leg's failure is recorded
on its run (the feed follower says so in the run's thread); a start refused before the run
exists (a recipe that does not load) is said in the thread here.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio

from hosts._kit import (
    Answered,
    Busy,
    CannotContinue,
    Desk,
    Workers,
    sweep_expired,
    sweep_reminders,
)
from hosts.slack._client import SlackOut
from hosts.slack._config import SlackConfig
from hosts.slack._events import thread_id_for
from interactions import ConflictError, InvalidPayloadError, PiRecipesError, UnknownRunError
from interactions.async_questions import open_for_pause
from interactions.errors import error_code
from interactions.people import Identity
from interactions.store import RunStatus, utc_now
from recipes.runs import Runs

__all__ = ["Worker"]

logger = logging.getLogger("hosts.slack")

_WAITING = 100_000
"""Legs that may wait for a free worker: Slack's clicks and mentions are never refused for want
of one (a bound all the same: no silent infinity)."""


class Worker:
    """Runs legs for the Slack host (see the module docs); :meth:`run` hosts them."""

    def __init__(self, runs: Runs, config: SlackConfig, out: SlackOut) -> None:
        self.runs = runs
        self.config = config
        self.out = out
        self.workers = Workers(limit=config.max_legs, queue=_WAITING)
        self.desk = Desk(runs, self.workers)

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Host the legs until :meth:`stop` (or a cancel)."""
        await self.workers.run(grace=self.config.stop_grace, task_status=task_status)

    async def stop(self) -> None:
        """Take no more legs; those in flight get ``stop_grace`` seconds, then are cancelled
        (their runs left to retry)."""
        await self.workers.stop()

    def start(self, prompt: str, *, channel: str, thread_ts: str, run_id: str) -> bool:
        """Start a run of the host's recipe on ``prompt``, its replies going to the thread;
        ``False`` when the host is stopping and starts nothing (the caller says so)."""

        async def start() -> None:
            await self._start(prompt, channel=channel, thread_ts=thread_ts, run_id=run_id)

        try:
            self.workers.submit(start, name=f"starting run {run_id}")
        except Busy:
            logger.warning("the host is stopping: run %s was not started", run_id)
            return False
        return True

    async def _start(self, prompt: str, *, channel: str, thread_ts: str, run_id: str) -> None:
        try:
            await self.runs.start(
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
                await self.runs.store.get_run(run_id)
            except UnknownRunError:  # refused before the run was written: say it here
                label = error_code(exc).label
                await self.out.reply(channel, thread_ts, f"Could not start a run: {label}: {exc}")
                return
            raise  # the run records its failure; the follower posts it

    async def answer(
        self, run_id: str, interaction_id: str, payload: Any, *, status: Any, user: str | Identity
    ) -> Answered | None:
        """Answer as ``user`` (a Slack user id, or the person the users file maps it to);
        when it was the run's last open question, the run continues here. Raises the runner's
        refusals (``NotAllowedError`` for someone the interrupt's approvers do not name);
        ``None`` when the answer is stored but the run cannot continue in this host (logged:
        the run stays paused with its answers)."""
        try:
            return await self.desk.answer(
                run_id, interaction_id, payload, status=status, answered_by=user
            )
        except CannotContinue as exc:
            logger.warning("run %s: %s", run_id, exc)
            return None

    async def continue_answered(self, run_id: str) -> None:
        """Continue ``run_id`` now that nothing it waits for is open (nothing happens if
        someone else continued it first; a run that cannot continue here is logged)."""
        try:
            await self.desk.continue_answered(run_id)
        except (ConflictError, InvalidPayloadError):
            pass  # continued elsewhere, or it moved on
        except PiRecipesError as exc:
            logger.warning("resuming run %s: %s: %s", run_id, error_code(exc).label, exc)

    async def resume_left_paused(self) -> None:
        """Resume the runs an answer given in Slack (or an expiry) left paused with nothing
        open: a host stopped between storing the answer and resuming its run. A run answered
        elsewhere (``runs answer`` without ``--resume``) is left as its answerer left it."""
        store = self.runs.store
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
                    await self.continue_answered(run.id)

    async def sweep_forever(self) -> None:
        """Settle expired interactions every ``expire_every`` seconds, until cancelled; a run
        left with nothing open is continued on the workers, so one long leg never delays the
        next expiry. Reminders and escalations due are written as often."""
        async with anyio.create_task_group() as sweeps:
            sweeps.start_soon(
                sweep_expired, self.runs, self.config.expire_every, self.desk.continue_answered
            )
            clock = getattr(self.runs, "clock", None)
            sweeps.start_soon(sweep_reminders, self.runs.store, self.config.expire_every,
                              clock if callable(clock) else utc_now)  # fmt: skip
