"""One leg of a recipe run: drive the session until it stops, then write down where it stopped.

A leg's end is one transaction, written by the kernel's :func:`~recipes.runs._close.close_leg`
as every run kind's is: the status (finished, paused with its interactions, cancelled, failed
or failed_resumable), the checkpoint, and a :class:`LegRecord` from which the leg's AG-UI
events are rebuilt on read. A host's live sink gets those events as they happen; they are only
built when there is a sink.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from interactions import AskUserInterrupt, RunError
from interactions.async_questions import AWAIT_REASON, waited_for
from interactions.store import InteractionRecord, RunRecord, RunStatus, Store, utc_now
from recipes import tracing
from recipes.events import AgentEvent
from recipes.messages import stop_warning
from recipes.runs._async import LegWrites
from recipes.runs._checkpoint import LEG_ENDED, Checkpoint, LegRecord, default_agui_run_id
from recipes.runs._close import close_leg, interrupted_message, record_interrupted
from recipes.runs._envelope import LegIds
from recipes.runs._plan import LegEnd, checkpoint_paused, last_text, leg_end, new_interaction
from recipes.runs._results import RunResult, Surface
from recipes.runs._watch import watch_run
from recipes.session import AgentSession

if TYPE_CHECKING:
    from recipes.runs._agui import LegTranslator

__all__ = ["agui_run_id", "drive_leg"]

logger = logging.getLogger("recipes.runs")

_OUTCOMES = {
    RunStatus.PAUSED_WAITING_HUMAN: "interrupt",
    RunStatus.CANCELLED: "cancelled",
    RunStatus.FINISHED: "success",
}


def agui_run_id(run: RunRecord, leg: int) -> str:
    """The default AG-UI run id of a run's ``leg`` (from 1): the run's id, then ``<id>.<n>``."""
    return default_agui_run_id(run.id, leg)


class _Live:
    """A host's live sink, fed AG-UI events as the leg goes (built only when there is one)."""

    def __init__(self, sink: Callable[[Any], object], translator: LegTranslator) -> None:
        self._sink = sink
        self.translator = translator

    def tell(self, *events: Any) -> None:
        for event in events:
            try:
                self._sink(event)
            except Exception:
                logger.exception("a live event sink failed on %s", event.type)

    def on_event(self, event: AgentEvent) -> None:
        self.tell(*self.translator.translate(event))


def _live(run: RunRecord, session: AgentSession, leg: LegRecord, surface: Surface) -> _Live | None:
    if surface.on_event is None:
        return None
    from recipes.runs._agui import LegTranslator  # ag-ui's models load only for a live sink

    translator = LegTranslator(
        thread_id=run.thread_id,
        run_id=leg.run,
        parent_run_id=leg.parent,
        size=lambda: len(session.messages),
    )
    live = _Live(surface.on_event, translator)
    live.tell(translator.run_started())
    return live


async def _interrupted(store: Store, run: RunRecord, leg: LegRecord) -> None:
    """Record that the leg was cut short: ``failed_resumable``, the checkpoint as it was before
    the leg (a retry does the leg again)."""
    message = interrupted_message(run.id)
    record = leg.model_copy(update={"outcome": "error", "error": message, "code": "interrupted"})
    await record_interrupted(store, run, events=[(LEG_ENDED, record.dump(run.id))])


def _with_retry_note(end: LegEnd, retries: int) -> LegEnd:
    if end.error is None or retries < 2:
        return end
    return replace(
        end,
        error=f"{end.error} (the same run failed {retries} retries in a row: it may need a "
        "fix, a key or a model, more than another retry)",
    )


async def _waited_on(
    store: Store, run_id: str, interrupts: list[AskUserInterrupt]
) -> list[AskUserInterrupt]:
    """What a pause on ``interrupts`` waits for (:func:`~interactions.async_questions.
    waited_for`). A recipe run pauses with nothing open from before (a resume answered it all),
    so its stored questions are read only when an ``await_answers`` wait stands for them."""
    if not any(i.reason == AWAIT_REASON for i in interrupts):
        return list(interrupts)
    return waited_for(interrupts, await store.list_interactions(run_id, pending=True))


def _abort_session(session: AgentSession) -> Callable[[RunRecord], None]:
    """A watch's ``stop`` for a recipe leg: abort the agent session, saying why."""

    def stop(run: RunRecord) -> None:
        session.abort(f"run {run.id} is {run.status.value} now: {run.error or 'moved elsewhere'}")

    return stop


async def drive_leg(
    store: Store,
    run: RunRecord,
    session: AgentSession,
    checkpoint: Checkpoint,
    leg: Awaitable[None],
    surface: Surface,
    writes: LegWrites | None = None,
    clock: Callable[[], datetime] = utc_now,
    interactions: Sequence[InteractionRecord] | None = None,
) -> RunResult:
    """Await ``leg`` (a prompt, a resume or a retry of ``session``) and write where it ended.

    The kernel's :func:`close_leg` records the status, the checkpoint (its envelope closed at
    ``clock()``), the leg's interactions and its :class:`LegRecord` in one write. The host's
    live sink gets every AG-UI event as it happens, the closing one once it is stored. A
    failure is recorded, then re-raised with the run's id (and, when the run can be retried,
    the command) set on it. ``writes`` is the leg's share of the run with its tools (async
    questions posted mid-leg): its version and its pending events. ``interactions``: the
    run's interactions as the leg found them, when read already (tracing shows the waits
    they end; read when needed otherwise).
    """
    writes = writes or LegWrites(store, run)
    ids = checkpoint.next_leg(run.id, surface.agui_run_id)
    async with tracing.leg(
        store, run, number=ids.number, stored=checkpoint.trace, interactions=interactions
    ) as traced:
        return await _drive(store, run, session, checkpoint, leg, surface, writes, clock, ids,
                            traced)  # fmt: skip


async def _drive(
    store: Store,
    run: RunRecord,
    session: AgentSession,
    checkpoint: Checkpoint,
    leg: Awaitable[None],
    surface: Surface,
    writes: LegWrites,
    clock: Callable[[], datetime],
    ids: LegIds,
    traced: tracing.Leg,
) -> RunResult:
    record = LegRecord(
        run=ids.run,
        parent=ids.parent,
        start=len(checkpoint.messages),
        end=len(checkpoint.messages),
        outcome="error",
    )
    live = _live(run, session, record, surface)
    unsubscribe = session.on_event(live.on_event) if live else None
    error: BaseException | None = None
    try:
        await watch_run(store, run.id, _abort_session(session), leg)
    except Exception as exc:  # a model failure: recorded on the run, then re-raised
        error = exc
    except BaseException:  # Ctrl-C, SIGTERM, a host stopping: the leg did not finish
        await _interrupted(store, writes.run, record)
        raise
    finally:
        if unsubscribe is not None:
            unsubscribe()
    end = leg_end(session.status, session.paused, error, continuing=checkpoint.leg > 0)
    if end.error is not None:  # a model's or a tool's exception may quote a credential
        end = replace(end, error=session.scrub(end.error))
    shown = await _waited_on(store, run.id, end.interrupts)
    failed = end.status in (RunStatus.FAILED, RunStatus.FAILED_RESUMABLE)
    end = _with_retry_note(end, checkpoint.retries) if failed else end
    record = record.model_copy(
        update={
            "end": len(session.messages),
            "outcome": _OUTCOMES.get(end.status, "error"),
            "interrupts": [i.id for i in shown],
            "error": end.error,
            "code": end.error_code,
        }
    )
    now = clock()
    traced.ended(end.status.value, interactions=[i.id for i in end.interrupts])
    closed, planned = checkpoint.closing(
        ids, end.status, code=end.error_code, now=now,
        retry_after=getattr(error, "retry_after", None), trace=traced.ref(now),
    )  # fmt: skip
    checkpoint = checkpoint.model_copy(
        update={
            "messages": session.messages,
            "paused": checkpoint_paused(session.paused),
            **closed,
        }
    )
    writing = time.monotonic()
    run = await close_leg(
        store,
        writes.run,
        status=end.status,
        checkpoint=checkpoint.dump(run.id, run.model_name),
        error=end.error,
        new_interactions=[new_interaction(i) for i in end.interrupts],
        events=[*writes.take(), *planned, (LEG_ENDED, record.dump(run.id))],
        may_leave_open=writes.asks_async,
    )
    traced.store_write(time.monotonic() - writing)
    if live is not None:
        from recipes.runs._agui import closing_event

        live.tell(closing_event(run.thread_id, record, shown, session.messages))
    if error is not None:
        if isinstance(error, RunError):
            error.run_id = error.run_id or run.id
            if run.status is RunStatus.FAILED_RESUMABLE:
                error.hint = f"retry it with: pi-recipes runs retry {run.id}"
        raise error
    return RunResult(
        run_id=run.id,
        thread_id=run.thread_id,
        kind=run.kind,
        status=run.status,
        interrupts=shown,
        text=last_text(session.messages),
        error=run.error,
        warning=stop_warning(session.messages) if run.status is RunStatus.FINISHED else None,
        agui_run_id=record.run,
    )
