"""One leg of a run: drive the session until it stops, then write down where it stopped."""

from __future__ import annotations

from collections.abc import Awaitable, Sequence

from ag_ui.core import BaseEvent

from interactions import AskUserInterrupt, RunError
from interactions.store import NewInteraction, RunRecord, RunStatus, Store
from recipes.messages import AssistantMessage, Message
from recipes.models._errors import ModelError
from recipes.runs._agui import AguiTranslator, event_record
from recipes.runs._checkpoint import Checkpoint
from recipes.runs._interrupts import interrupt_of, new_interaction
from recipes.runs._results import RunResult
from recipes.session import AgentSession

__all__ = ["RESUMABLE_ERROR_CLASSES", "drive_leg", "last_text"]


async def drive_leg(
    store: Store,
    run: RunRecord,
    session: AgentSession,
    checkpoint: Checkpoint,
    leg: Awaitable[None],
) -> RunResult:
    """Await ``leg`` (a prompt, a resume or a retry of ``session``) and write where it ended.

    One ``update_run`` records the status (finished, paused with its interactions, cancelled,
    failed or failed_resumable), the checkpoint and the leg's AG-UI events. A failure is
    recorded, then re-raised with the run's id set on it.
    """
    translator = AguiTranslator(thread_id=run.thread_id, run_id=run.id)
    events: list[BaseEvent] = [translator.run_started()]
    unsubscribe = session.on_event(lambda event: events.extend(translator.translate(event)))
    error: BaseException | None = None
    try:
        await leg
    except Exception as exc:  # a model failure: recorded on the run, then re-raised
        error = exc
    finally:
        unsubscribe()
    checkpoint = checkpoint.model_copy(
        update={"messages": session.messages, "paused": session.paused}
    )
    interactions: list[NewInteraction] = []
    interrupts: list[AskUserInterrupt] = []
    message: str | None = None
    if error is not None or session.status == "failed":
        message = _describe(error) if error else "the run failed"
        status = RunStatus.FAILED_RESUMABLE if _resumable(error) else RunStatus.FAILED
        code = (getattr(error, "reason", None) or type(error).__name__) if error else None
        events.append(translator.error(message, code=code))
    elif session.status == "paused" and session.paused is not None:
        status = RunStatus.PAUSED_WAITING_HUMAN
        interrupts = [interrupt_of(m) for m in session.paused.awaiting]
        interactions = [new_interaction(i) for i in interrupts]
        events.append(translator.interrupted(interrupts))
    elif session.status == "aborted":
        status = RunStatus.CANCELLED
        events.append(translator.cancelled())
    else:
        status = RunStatus.FINISHED
        events.append(translator.finished(result=last_text(session.messages) or None))
    run = await store.update_run(
        run.id,
        expected_version=run.version,
        status=status,
        checkpoint=checkpoint.dump(),
        error=message,
        new_interactions=interactions,
        events=[event_record(e) for e in events],
    )
    if error is not None:
        if isinstance(error, RunError) and error.run_id is None:
            error.run_id = run.id
        raise error
    return RunResult(
        run_id=run.id,
        thread_id=run.thread_id,
        status=run.status,
        interrupts=interrupts,
        text=last_text(session.messages),
        error=run.error,
    )


RESUMABLE_ERROR_CLASSES = frozenset({"usage_window", "unavailable", "transient_exhausted"})
"""Model failure classes that pass with time: such a run ends ``failed_resumable``."""


def _resumable(error: BaseException | None) -> bool:
    return isinstance(error, ModelError) and error.error_class in RESUMABLE_ERROR_CLASSES


def _describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"


def last_text(messages: Sequence[Message]) -> str:
    """The last assistant text of a transcript ("" when there is none)."""
    for message in reversed(messages):
        if isinstance(message, AssistantMessage) and message.text:
            return message.text
    return ""
