"""Answering one interaction from the page, a WebSocket client or REST, and continuing the run.

The answer is the runner's compare-and-set (the first answer wins; an identical replay is
accepted; a different one is a conflict). When it was the run's last open question, this server
claims the run (compare-and-set again: of two servers, exactly one continues it) and hands the
continuation to its workers; the caller learns ``resumed: true`` only if the claim was its own.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ag_ui.core import ResumeEntry

from hosts.web._errors import Busy, Refusal, complaints_for, refusal
from hosts.web._feed import Feed
from hosts.web._workers import Workers
from interactions import ConflictError, InvalidPayloadError, PiRecipesError
from interactions.store import RunStatus, Store, is_terminal
from recipes.runs import Runner, Surface

__all__ = ["AnswerOutcome", "Answers", "explain_resume"]

logger = logging.getLogger("hosts.web")


@dataclass(frozen=True)
class AnswerOutcome:
    """What answering did. ``created``: this call stored the answer (false for an identical
    replay). ``resumed``: this server took the run on (its last question was answered here).
    ``queued``: the answer waits for the run to take it (other questions are still open, or
    the run goes on elsewhere or later)."""

    run_id: str
    interaction_id: str
    created: bool
    queued: bool
    resumed: bool
    still_open: tuple[str, ...]


class Answers:
    """Answers interactions through ``runner`` and continues runs on ``workers``."""

    def __init__(self, runner: Runner, workers: Workers, feed: Feed) -> None:
        self.runner = runner
        self.workers = workers
        self.feed = feed

    async def answer(
        self,
        run_id: str,
        interaction_id: str,
        payload: Any,
        *,
        status: Literal["resolved", "cancelled"] = "resolved",
        answered_by: str | None = None,
    ) -> AnswerOutcome:
        """Record one answer; continue the run here when it was the last one open.

        Raises :class:`~hosts.web._errors.Refusal` (404 unknown, 409 answered differently,
        410 expired, 422 off the schema with its complaints); nothing is written then.
        """
        try:
            done = await self.runner.answer(
                run_id, interaction_id, payload, status=status, answered_by=answered_by
            )
        except InvalidPayloadError as exc:
            record = await self.runner.store.get_interaction(run_id, interaction_id)
            raise refusal(exc, complaints_for(record.interrupt, payload, exc)) from None
        except PiRecipesError as exc:
            raise refusal(exc) from None
        resumed = not done.still_open and await self.continue_answered(run_id)
        run = await self.runner.store.get_run(run_id)
        return AnswerOutcome(
            run_id=run_id,
            interaction_id=interaction_id,
            created=done.created,
            queued=not resumed and not is_terminal(run.status),
            resumed=resumed,
            still_open=tuple(done.still_open),
        )

    async def continue_answered(self, run_id: str, *, strict: bool = False) -> bool:
        """Claim a paused run whose questions are all answered and continue it on the workers;
        return whether this server took it (False: not ready, claimed elsewhere, or busy).

        With ``strict`` each of those is raised instead: ``ConflictError`` (not paused, or
        claimed elsewhere), ``InvalidPayloadError`` (questions still open), :class:`Busy`.
        """
        try:
            ticket = self.workers.reserve()
        except Busy:
            if strict:
                raise
            return False
        try:
            claimed = await self.runner.claim_answered(run_id)
        except PiRecipesError as exc:  # it cannot be continued here: it stays paused, answered
            ticket.release()
            if strict:
                raise
            logger.warning("run %s is answered but cannot continue here: %s", run_id, exc)
            return False
        except BaseException:
            ticket.release()
            raise
        if claimed is None:
            ticket.release()
            if strict:
                raise await self._not_ready(run_id)
            return False
        surface = Surface(on_event=self.feed.live(run_id))

        async def proceed() -> None:
            await self.runner.proceed(claimed, surface=surface)

        ticket.start(proceed, name=f"resume of {run_id}")
        return True

    async def _not_ready(self, run_id: str) -> PiRecipesError:
        run = await self.runner.store.get_run(run_id)
        if run.status is not RunStatus.PAUSED_WAITING_HUMAN:
            message = f"run {run_id} is {run.status.value}, not paused; nothing to resume"
            return ConflictError(message, run_id=run_id, reason="not_paused")
        records = await self.runner.store.list_interactions(run_id, pending=True)
        open_ = [r.id for r in records if r.is_open_blocking]
        if open_:
            return InvalidPayloadError(
                f"run {run_id} still waits for answers to {open_}",
                run_id=run_id,
                reason="incomplete_resume",
            )
        return ConflictError(f"run {run_id} was just continued elsewhere", run_id=run_id)


async def explain_resume(
    store: Store, run_id: str, entries: Sequence[ResumeEntry], exc: PiRecipesError
) -> Refusal:
    """The refusal of a resume: a payload off the schema lists the schema's complaints."""
    if isinstance(exc, InvalidPayloadError) and exc.interaction_id:
        payload = next((e.payload for e in entries if e.interrupt_id == exc.interaction_id), None)
        try:
            record = await store.get_interaction(run_id, exc.interaction_id)
        except PiRecipesError:
            return refusal(exc)
        return refusal(exc, complaints_for(record.interrupt, payload, exc))
    return refusal(exc)
