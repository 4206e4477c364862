"""Answering one interaction from the page, a WebSocket client or REST, and continuing the run.

The answer is the runner's compare-and-set (the first answer wins; an identical replay is
accepted; a different one is a conflict). When it was the run's last open question, this server
claims the run (compare-and-set again: of two servers, exactly one continues it) and hands the
continuation to its workers; the caller learns ``resumed: true`` only if the claim was its own.
The last answer of a paused run reserves a place among the workers before it is written (busy:
503, nothing written), so its run is never left paused for want of one; other answers need none.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ag_ui.core import ResumeEntry

from hosts.web._errors import Refusal, complaints_for, refusal
from hosts.web._feed import Feed
from hosts.web._workers import Ticket, Workers
from interactions import ConflictError, InvalidPayloadError, PiRecipesError
from interactions.async_questions import open_for_pause
from interactions.store import RunRecord, RunStatus, Store, is_terminal
from recipes.runs import Runner, Surface, record_interrupted

logger = logging.getLogger("hosts.web")

__all__ = ["AnswerOutcome", "Answers", "explain_resume"]


@dataclass(frozen=True)
class AnswerOutcome:
    """What answering did. ``created``: this call stored the answer (false for an identical
    replay). ``resumed``: this server took the run on (its last question was answered here).
    ``queued``: this call stored an answer that waits for the run to take it (other questions
    are still open, or the run goes on elsewhere or later); never for a replay, which queues
    nothing."""

    run_id: str
    interaction_id: str
    created: bool
    queued: bool
    resumed: bool
    still_open: tuple[str, ...]


class Answers:
    """Answers interactions through ``runner`` and continues runs on ``workers``: answered
    ones, and the retries the retry sweep finds due."""

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
        410 expired, 422 off the schema with its complaints, 503 busy); nothing is written
        then. The last answer of a paused run first reserves a place among the workers, so
        its run is always continued. When the run cannot continue in this server (its recipe
        or its model's credentials are missing here), the answer is stored and that is raised
        (400, reason ``cannot_continue``), saying how to continue it.
        """
        try:
            ticket = await self._place_for(run_id, interaction_id)
        except PiRecipesError as exc:
            raise refusal(exc) from None
        started = False
        try:
            try:
                done = await self.runner.answer(
                    run_id, interaction_id, payload, status=status, answered_by=answered_by
                )
            except InvalidPayloadError as exc:
                record = await self.runner.store.get_interaction(run_id, interaction_id)
                raise refusal(exc, complaints_for(record.interrupt, payload, exc)) from None
            except PiRecipesError as exc:
                raise refusal(exc) from None
            if not done.still_open:
                try:
                    ticket = ticket or self.workers.reserve()  # the last of two racing answers
                    started = await self._continue(run_id, ticket)
                except PiRecipesError as exc:  # the answer stands; the run stays paused
                    raise _cannot_continue(run_id, interaction_id, exc) from None
                except Exception as exc:  # none of ours (a model's bug): the answer stands too
                    logger.exception("run %s: its answer is stored, it cannot continue", run_id)
                    raise _cannot_continue(run_id, interaction_id, exc) from None
        finally:
            if ticket is not None and not started:
                ticket.release()
        run = await self.runner.store.get_run(run_id)
        return AnswerOutcome(
            run_id=run_id,
            interaction_id=interaction_id,
            created=done.created,
            queued=done.created and not started and not is_terminal(run.status),
            resumed=started,
            still_open=tuple(done.still_open),
        )

    async def _place_for(self, run_id: str, interaction_id: str) -> Ticket | None:
        """A place among the workers when this answer is the last a paused run waits for
        (:class:`Busy` when none is free: refused before anything is written); ``None`` for an
        answer that continues nothing (another question stays open, or the run is working and
        its agent reads the answer)."""
        run = await self.runner.store.get_run(run_id)
        if run.status is not RunStatus.PAUSED_WAITING_HUMAN:
            return None
        pending = await self.runner.store.list_interactions(run_id, pending=True)
        if [r.id for r in open_for_pause(pending)] != [interaction_id]:
            return None
        return self.workers.reserve()

    async def continue_answered(self, run_id: str) -> None:
        """Claim a paused run whose questions are all answered and continue it on the workers.

        Raises ``ConflictError`` (not paused, or claimed elsewhere), ``InvalidPayloadError``
        (questions still open), :class:`Busy`, and ``UsageError`` when the run cannot continue
        in this server (it is left paused).
        """
        ticket = self.workers.reserve()
        try:
            started = await self._continue(run_id, ticket)
        except BaseException:
            ticket.release()
            raise
        if not started:
            ticket.release()
            raise await self._not_ready(run_id)

    async def continue_retry(self, run_id: str) -> None:
        """Claim a ``failed_resumable`` run whose automatic retry is due and retry it on the
        workers (``Runner.claim_retry``). Raises :class:`Busy` before anything is written,
        ``ConflictError`` (not failed_resumable, or claimed elsewhere), and ``UsageError`` when
        the run cannot continue in this server (it is left as it was)."""
        ticket = self.workers.reserve()
        try:
            claimed = await self.runner.claim_retry(run_id)
        except BaseException:
            ticket.release()
            raise
        surface = Surface(on_event=self.feed.live(run_id))

        async def retry() -> None:
            await self.runner.continue_retry(claimed, surface=surface)

        ticket.start(retry, name=f"retry of {run_id}", dropped=self._hand_back(claimed))

    async def _continue(self, run_id: str, ticket: Ticket) -> bool:
        """Claim ``run_id`` and start its continuation with ``ticket``; return whether this
        server took it (False: not paused, questions open, or claimed elsewhere; ``ticket``
        is then the caller's to release). ``UsageError`` when it cannot continue here."""
        claimed = await self.runner.claim_answered(run_id)
        if claimed is None:
            return False
        surface = Surface(on_event=self.feed.live(run_id))

        async def proceed() -> None:
            await self.runner.proceed(claimed, surface=surface)

        ticket.start(proceed, name=f"resume of {run_id}", dropped=self._hand_back(claimed))
        return True

    def _hand_back(self, claimed: RunRecord) -> Callable[[], Awaitable[None]]:
        """What a claimed run's queued continuation does when the server stops before it
        begins: the run is recorded interrupted (``failed_resumable``, to retry), as a leg
        cut short is, not left ``running`` with no one driving it."""

        async def hand_back() -> None:
            await record_interrupted(self.runner.store, claimed)

        return hand_back

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


def _cannot_continue(run_id: str, interaction_id: str, exc: Exception) -> Refusal:
    """The refusal of a last answer that is stored while its run cannot continue here (an
    error none of ours is a 500 whose message does not quote it: it may hold a secret)."""
    refused = refusal(exc)
    why = str(exc) if isinstance(exc, PiRecipesError) else "an unexpected error (see its log)"
    message = (
        f"the answer is stored, but run {run_id} cannot continue in this server: {why}. "
        f"Fix that, then continue it: POST /api/runs/{run_id}/resume"
    )
    fields = {"message": message, "reason": "cannot_continue", "run_id": run_id}
    body = refused.body.model_copy(update=fields | {"interaction_id": interaction_id})
    return Refusal(refused.status, body)


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
