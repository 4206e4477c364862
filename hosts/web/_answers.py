"""Answering one interaction from the page, a WebSocket client or REST, and continuing the run.

The host kit's :class:`~hosts._kit.Desk` does the work: one runner call records the answer and,
when it was the run's last open question, claims the run in the same write (of two servers,
exactly one continues it) and hands it to this server's workers; the caller learns
``resumed: true`` only if the claim was its own. The last answer of a paused run reserves a
worker before it is written (busy: 503, nothing written). This module turns what the desk
raises into the web host's refusals.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from ag_ui.core import ResumeEntry

from hosts._kit import Answered, CannotContinue, Desk, Workers
from hosts.web._errors import Refusal, complaints_for, refusal
from hosts.web._feed import Feed
from interactions import InvalidPayloadError, PiRecipesError
from interactions.store import Store
from recipes.runs import Runs

__all__ = ["Answers", "explain_resume"]


class Answers:
    """Answers interactions through ``runs`` and continues runs on ``workers``: answered ones,
    and the retries the retry sweep finds due."""

    def __init__(self, runs: Runs, workers: Workers, feed: Feed) -> None:
        self.runs = runs
        self.desk = Desk(runs, workers, feed.live)

    async def answer(
        self,
        run_id: str,
        interaction_id: str,
        payload: Any,
        *,
        status: Literal["resolved", "cancelled"] = "resolved",
        answered_by: str | None = None,
    ) -> Answered:
        """Record one answer; continue the run here when it was the last one open.

        Raises :class:`~hosts.web._errors.Refusal` (404 unknown, 409 answered differently,
        410 expired, 422 off the schema with its complaints, 503 busy); nothing is written
        then. When the run cannot continue in this server (its recipe or its model's
        credentials are missing here), the answer is stored and that is raised (400, reason
        ``cannot_continue``), saying how to continue it.
        """
        try:
            return await self.desk.answer(
                run_id, interaction_id, payload, status=status, answered_by=answered_by
            )
        except InvalidPayloadError as exc:
            record = await self.runs.interaction(run_id, interaction_id)
            raise refusal(exc, complaints_for(record.interrupt, payload, exc)) from None
        except CannotContinue as exc:
            raise _cannot_continue(exc) from None
        except PiRecipesError as exc:
            raise refusal(exc) from None

    async def continue_answered(self, run_id: str) -> None:
        """Claim a paused run whose questions are all answered and continue it on the workers
        (see :meth:`hosts._kit.Desk.continue_answered`)."""
        await self.desk.continue_answered(run_id)

    async def continue_retry(self, run_id: str) -> None:
        """Claim a ``failed_resumable`` run whose automatic retry is due and retry it on the
        workers (see :meth:`hosts._kit.Desk.continue_retry`)."""
        await self.desk.continue_retry(run_id)


def _cannot_continue(exc: CannotContinue) -> Refusal:
    """The refusal of a last answer that is stored while its run cannot continue here (an
    error none of ours is a 500 whose message does not quote it: it may hold a secret)."""
    refused = refusal(exc.cause)
    cause = exc.cause
    why = str(cause) if isinstance(cause, PiRecipesError) else "an unexpected error (see its log)"
    message = (
        f"the answer is stored, but run {exc.run_id} cannot continue in this server: {why}. "
        f"Fix that, then continue it: POST /api/runs/{exc.run_id}/resume"
    )
    fields = {"message": message, "reason": "cannot_continue", "run_id": exc.run_id}
    body = refused.body.model_copy(update=fields | {"interaction_id": exc.interaction_id})
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
