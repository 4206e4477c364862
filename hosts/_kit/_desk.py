"""A host's answers and continuations: one runner call each, the claimed run handed to a worker.

A person answers on a page, in Slack, in a terminal: the host calls :meth:`Desk.answer` and
decides nothing else. The runner records the answer and, when it was the last a paused run
waited for, claims the run in the same write; the desk hands that claim to the host's
workers. Before the claim is written the desk reserves the worker that will continue it, so a
run it claims is always continued: when every worker is taken the answer is refused
(:class:`Busy`) with nothing written. Other answers need no worker and are never refused for
want of one.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from hosts._kit._workers import Ticket, Workers
from interactions import ConflictError, InvalidPayloadError, PiRecipesError, UsageError
from interactions.people import Identity
from interactions.store import RunStatus, is_terminal
from recipes.runs import Claim, EventSink, Runs, Surface

__all__ = ["Answered", "CannotContinue", "Desk"]

logger = logging.getLogger("hosts")


@dataclass(frozen=True)
class Answered:
    """What answering did. ``created``: this call stored the answer (false for an identical
    replay). ``resumed``: this host took the run on (its last question was answered here).
    ``queued``: this call stored an answer that waits for the run to take it (other questions
    are still open, or the run goes on elsewhere or later); never for a replay, which queues
    nothing. ``still_open``: what the run still waits for."""

    run_id: str
    interaction_id: str
    created: bool
    queued: bool
    resumed: bool
    still_open: tuple[str, ...]
    settled: bool = True
    """False while an approval that needs several approvals waits for more (this answer was
    one vote)."""
    approvals: tuple[str, ...] = ()
    """Who approved so far (an approval that needs several)."""
    required_approvals: int = 1


class CannotContinue(PiRecipesError):
    """The last answer of a paused run is stored, but the run cannot continue in this host
    (its recipe or its model's credentials are missing here, or an unexpected failure): the
    run stays paused with the answer; ``cause`` says why."""

    def __init__(self, run_id: str, interaction_id: str, cause: Exception) -> None:
        why = str(cause) if isinstance(cause, PiRecipesError) else "an unexpected error"
        super().__init__(f"the answer is stored, but run {run_id} cannot continue here: {why}")
        self.run_id = run_id
        self.interaction_id = interaction_id
        self.cause = cause


class Desk:
    """Answers and continuations of ``runs``, driven on ``workers``. ``live(run_id)`` gives the
    sink that sees a continued leg's AG-UI events as they happen (``None``: none)."""

    def __init__(
        self,
        runs: Runs,
        workers: Workers,
        live: Callable[[str], EventSink | None] = lambda run_id: None,
    ) -> None:
        self.runs = runs
        self.workers = workers
        self.live = live

    async def answer(
        self,
        run_id: str,
        interaction_id: str,
        payload: Any,
        *,
        status: Literal["resolved", "cancelled"] = "resolved",
        answered_by: str | Identity | None = None,
    ) -> Answered:
        """Record one answer; continue the run on the workers when it was the last one open.

        ``answered_by`` is who answers, as the host established them (an
        :class:`~interactions.people.Identity`, whose groups count for the interrupt's
        approvers). Raises the runner's refusals (an unknown id, a different answer stored, an
        expired question, a payload off the schema, someone not among the approvers
        (``NotAllowedError``): nothing is written), :class:`Busy` when it is the
        last answer and no worker is free (nothing is written), and :class:`CannotContinue`
        when the answer is stored but the run cannot continue in this host.
        """
        reserved: list[Ticket] = []
        started = False
        try:
            try:
                done = await self.runs.answer(
                    run_id, interaction_id, payload, status=status, answered_by=answered_by,
                    claim=True, before_claim=lambda: reserved.append(self.workers.reserve()),
                )  # fmt: skip
            except UsageError as exc:  # the runner stores the answer, then says it can't go on
                raise await self._not_continued(run_id, interaction_id, exc) from exc
            except PiRecipesError:
                raise  # a refusal: nothing was written
            except Exception as exc:  # none of ours (a driver's bug): the answer may be kept
                logger.exception("run %s: answering %s failed", run_id, interaction_id)
                raise await self._not_continued(run_id, interaction_id, exc) from exc
            if done.claim is not None:
                ticket = reserved.pop() if reserved else self.workers.reserve()
                self._start(done.claim, ticket)
                started = True
        finally:
            for ticket in reserved:
                ticket.release()
        ended = done.run_status is not None and is_terminal(done.run_status)
        return Answered(
            run_id=run_id,
            interaction_id=interaction_id,
            created=done.created,
            queued=done.created and not started and not ended,
            resumed=started,
            still_open=tuple(done.still_open),
            settled=done.settled,
            approvals=tuple(done.approvals),
            required_approvals=done.required_approvals,
        )

    async def continue_answered(self, run_id: str) -> None:
        """Claim a paused run whose questions are all answered and continue it on the workers.

        Raises ``ConflictError`` (not paused, or claimed elsewhere), ``InvalidPayloadError``
        (questions still open), :class:`Busy`, and ``UsageError`` when the run cannot continue
        in this host (it is left paused).
        """
        if not await self._claim_and_start(self.runs.claim_answered, run_id):
            raise await self._not_ready(run_id)

    async def continue_retry(self, run_id: str) -> None:
        """Claim a ``failed_resumable`` run and retry it on the workers. Raises :class:`Busy`
        before anything is written, ``ConflictError`` (not failed_resumable, or claimed
        elsewhere), and ``UsageError`` when the run cannot continue here (left as it was)."""
        await self._claim_and_start(self.runs.claim_retry, run_id)

    async def _claim_and_start(
        self, claim: Callable[[str], Awaitable[Claim | None]], run_id: str
    ) -> bool:
        """Reserve a worker (:class:`Busy` before anything is written), ``claim`` the run and
        continue it on that worker; ``False`` (the worker given back) when there was nothing
        to claim. What ``claim`` raises is raised, the worker given back."""
        ticket = self.workers.reserve()
        try:
            claimed = await claim(run_id)
        except BaseException:
            ticket.release()
            raise
        if claimed is None:
            ticket.release()
            return False
        self._start(claimed, ticket)
        return True

    def _start(self, claim: Claim, ticket: Ticket) -> None:
        """Continue ``claim`` with ``ticket``; should the host stop before the leg begins, the
        claim is given back (the run is recorded interrupted, to retry)."""
        surface = Surface(on_event=self.live(claim.run_id))

        async def proceed() -> None:
            await self.runs.proceed(claim, surface=surface)

        async def release() -> None:
            await self.runs.release(claim)

        what = "retry" if claim.retry else "resume"
        ticket.start(proceed, name=f"{what} of {claim.run_id}", dropped=release)

    async def _not_continued(
        self, run_id: str, interaction_id: str, exc: Exception
    ) -> Exception:
        """The error of an answer the runner could not continue: :class:`CannotContinue` when
        the answer is stored, else ``exc`` (it was refused before anything was written)."""
        try:
            stored = await self.runs.interaction(run_id, interaction_id)
        except PiRecipesError:
            return exc
        return CannotContinue(run_id, interaction_id, exc) if stored.answer is not None else exc

    async def _not_ready(self, run_id: str) -> PiRecipesError:
        """Why a paused run could not be claimed (read only on this refusal path)."""
        run = await self.runs.status(run_id)
        if run.status is not RunStatus.PAUSED_WAITING_HUMAN:
            message = f"run {run_id} is {run.status.value}, not paused; nothing to resume"
            return ConflictError(message, run_id=run_id, reason="not_paused")
        if run.interrupts:
            open_ = [i.id for i in run.interrupts]
            return InvalidPayloadError(
                f"run {run_id} still waits for answers to {open_}",
                run_id=run_id,
                reason="incomplete_resume",
            )
        return ConflictError(f"run {run_id} was just continued elsewhere", run_id=run_id)

