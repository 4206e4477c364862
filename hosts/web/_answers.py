"""How the web host refuses an answer or a resume, whichever way it came (the page, a WebSocket
client, REST, AG-UI).

The host kit's :class:`~hosts._kit.Desk` answers: one runner call records the answer and,
when it was the run's last open question, claims the run in the same write (of two servers,
exactly one continues it) and hands it to this server's workers; the caller learns
``resumed: true`` only if the claim was its own. The last answer of a paused run reserves a
worker before it is written (busy: 503, nothing written). This module turns what the desk and
the runner raise into the web host's refusals.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ag_ui.core import ResumeEntry

from hosts._kit import CannotContinue
from hosts.web._errors import Refusal, complaints_for, refusal
from interactions import InvalidPayloadError, PiRecipesError
from interactions.store import Store

__all__ = ["explain_answer", "explain_resume"]


async def explain_answer(
    store: Store, run_id: str, interaction_id: str, payload: Any, exc: PiRecipesError
) -> Refusal:
    """The refusal of an answer :meth:`hosts._kit.Desk.answer` refused: 404 unknown, 409
    answered differently, 410 expired, 422 off the schema with its complaints, 503 busy
    (nothing is written then). When the answer is stored but the run cannot continue in this
    server (its recipe or its model's credentials are missing here): 400, reason
    ``cannot_continue``, saying how to continue it."""
    if isinstance(exc, CannotContinue):
        return _cannot_continue(exc)
    if isinstance(exc, InvalidPayloadError):
        return await _with_complaints(store, run_id, interaction_id, payload, exc)
    return refusal(exc)


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
        return await _with_complaints(store, run_id, exc.interaction_id, payload, exc)
    return refusal(exc)


async def _with_complaints(
    store: Store, run_id: str, interaction_id: str, payload: Any, exc: InvalidPayloadError
) -> Refusal:
    """The refusal of ``payload``, off the schema of the interaction it answers: it lists the
    schema's complaints (the refusal alone, should the interaction not be read)."""
    try:
        interrupt = (await store.get_interaction(run_id, interaction_id)).interrupt
    except PiRecipesError:
        return refusal(exc)
    return refusal(exc, complaints_for(interrupt, payload, exc))
