"""One leg of a recipe run: drive the session until it stops, then write down where it stopped.

A leg's end is one transaction: the status (finished, paused with its interactions, cancelled,
failed or failed_resumable), the checkpoint, and a :class:`LegRecord` from which the leg's AG-UI
events are rebuilt on read. A host's live sink gets those events as they happen; they are only
built when there is a sink.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from interactions import AskUserInterrupt, ConflictError, RunError, UsageError
from interactions.async_questions import AWAIT_REASON
from interactions.resume import RUN_ENDED
from interactions.store import (
    EventInput,
    RunRecord,
    RunStatus,
    Store,
    StoreEventType,
    is_terminal,
)
from recipes.events import AgentEvent
from recipes.messages import stop_warning
from recipes.runs._async import LegWrites
from recipes.runs._checkpoint import LEG_ENDED, Checkpoint, LegRecord, default_agui_run_id
from recipes.runs._plan import LegEnd, checkpoint_paused, last_text, leg_end, new_interaction
from recipes.runs._results import RunResult, Surface
from recipes.session import AgentSession

if TYPE_CHECKING:
    from recipes.runs._agui import LegTranslator

__all__ = [
    "INTERRUPT_WRITE_BOUND",
    "RUN_ENDED",
    "WATCH_AFTER",
    "agui_run_id",
    "drive_leg",
    "moved_error",
    "record_failed_resumable",
    "watch_run",
]

logger = logging.getLogger("recipes.runs")

T = TypeVar("T")

INTERRUPT_WRITE_BOUND = 5.0
"""Seconds an interrupted leg may take to record that it was interrupted."""


WATCH_AFTER = 1.0
"""Seconds a leg runs before it watches its run for another writer (a cancel, ``runs recover``);
a shorter leg finds out at its last write."""

_WATCH_ROUND = 60.0
"""Seconds one wait of that watch lasts before it looks again on its own."""
_STATUS_CHANGED = StoreEventType.RUN_STATUS_CHANGED.value

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


async def record_failed_resumable(
    store: Store, run: RunRecord, message: str, *, events: Sequence[EventInput] = ()
) -> None:
    """Leave ``run`` ``failed_resumable`` with ``message`` at the version it was claimed at,
    shielded from a cancellation and bounded by ``INTERRUPT_WRITE_BOUND``: for a leg cut short
    or a continuation that failed before its leg recorded anything. When another writer moved
    the run first, what it recorded stands; when the store is gone too, ``runs recover`` finds
    the run later."""
    with anyio.CancelScope(shield=True), anyio.move_on_after(INTERRUPT_WRITE_BOUND):
        try:
            await store.update_run(
                run.id,
                expected_version=run.version,
                status=RunStatus.FAILED_RESUMABLE,
                error=message,
                events=events,
            )
        except ConflictError:
            logger.info("run %s moved on before it could be marked failed_resumable", run.id)
        except Exception:
            logger.exception("could not record that run %s stopped: %s", run.id, message)


def _interrupted_message(run_id: str) -> str:
    return (
        "interrupted before the leg finished (Ctrl-C, SIGTERM or a stopped host); "
        f"continue it with: pi-recipes runs retry {run_id}"
    )


async def record_interrupted(
    store: Store, run: RunRecord, *, events: Sequence[EventInput] = ()
) -> None:
    """Record that a leg of ``run`` (as last written) was cut short by Ctrl-C, SIGTERM or a
    stopping host: ``failed_resumable``, saying so and how to continue it, with the checkpoint
    as last written (a retry does the rest of the leg again). A driver calls it when its leg
    gets a ``BaseException`` that is not an ``Exception``, then re-raises: a run is never left
    ``running`` with no one driving it. Shielded and bounded as
    :func:`record_failed_resumable` is."""
    await record_failed_resumable(store, run, _interrupted_message(run.id), events=events)


async def _interrupted(store: Store, run: RunRecord, leg: LegRecord) -> None:
    """Record that the leg was cut short: ``failed_resumable``, the checkpoint as it was before
    the leg (a retry does the leg again)."""
    message = _interrupted_message(run.id)
    record = leg.model_copy(update={"outcome": "error", "error": message, "code": "interrupted"})
    await record_interrupted(store, run, events=[(LEG_ENDED, record.dump(run.id))])


async def _unstorable(store: Store, run: RunRecord, refusal: UsageError) -> RunError:
    """Record that the store refused where the leg ended (a tool's result or a model's output
    holds a value no store keeps: text that is not valid Unicode, details that are not JSON):
    ``failed_resumable`` at the checkpoint before the leg, so a retry, once the tool is fixed,
    does the leg again. Return the error to raise."""
    message = (
        f"could not store where the run's leg ended: {refusal} (in a tool's result, an ask "
        "or the model's output); fix the tool, then retry the leg"
    )
    await record_failed_resumable(store, run, message)
    return RunError(
        message,
        run_id=run.id,
        reason="unstorable",
        hint=f"retry it with: pi-recipes runs retry {run.id}",
    )


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
    """What a pause on ``interrupts`` waits on, as a host shows it: an ``await_answers`` pause
    stands for the async questions it lists (answered one by one; the await is settled by the
    system)."""
    if not any(i.reason == AWAIT_REASON for i in interrupts):
        return list(interrupts)
    stored = {r.id: r for r in await store.list_interactions(run_id, pending=True)}
    shown: list[AskUserInterrupt] = []
    for interrupt in interrupts:
        if interrupt.reason != AWAIT_REASON:
            shown.append(interrupt)
            continue
        for iid in (interrupt.metadata or {}).get("pending", []):
            if iid in stored and all(s.id != iid for s in shown):
                shown.append(stored[iid].interrupt)
    return shown


async def watch_run(
    store: Store, run_id: str, stop: Callable[[RunRecord], object], work: Awaitable[T]
) -> T:
    """Await ``work`` (what a leg does before it writes its end: an agent session's prompt, a
    graph's walk) while watching ``run_id``, and return (or raise) what ``work`` does.

    When another writer moves the run out of ``running`` meanwhile (``runs cancel``, a host's
    cancel, ``runs recover``), ``stop`` is called once, in this event loop's thread, with the
    run as it now stands; it must make ``work`` end soon, so that its tools stop instead of
    working on for a run that no longer waits for them (abort the agent session, cancel the
    scope ``work`` runs in). The leg's own write then says what happened
    (:func:`moved_error`). Wrap only work that does not move the run itself: the leg's own
    status write would stop it too.

    The watch starts once ``work`` has run :data:`WATCH_AFTER` seconds (a shorter leg finds
    out at its next write): on asyncio a timer starts it (a short leg costs a few
    microseconds); elsewhere (trio) a task group holds it. It waits on the store's
    ``wait_for_events`` (rounds of a minute at most), never polls; should the store fail, the
    watch gives up with a warning and the leg's next write meets the failure.
    """
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # not asyncio
        return await _watched_in_group(store, run_id, stop, work)
    watch: list[asyncio.Task[None]] = []

    def start() -> None:
        watch.append(loop.create_task(_stop_when_moved(store, run_id, stop)))

    timer = loop.call_later(WATCH_AFTER, start)
    try:
        return await work
    finally:
        timer.cancel()
        for task in watch:
            task.cancel()


async def _watched_in_group(
    store: Store, run_id: str, stop: Callable[[RunRecord], object], work: Awaitable[T]
) -> T:
    failure: BaseException | None = None
    done: list[T] = []
    async with anyio.create_task_group() as watching:
        watching.start_soon(_stop_when_moved, store, run_id, stop, WATCH_AFTER)
        try:
            done.append(await work)
        except BaseException as exc:  # raised below: a task group would wrap it in a group
            failure = exc
        finally:
            watching.cancel_scope.cancel()
    if failure is not None:
        raise failure
    return done[0]


async def _stop_when_moved(
    store: Store, run_id: str, stop: Callable[[RunRecord], object], delay: float = 0.0
) -> None:
    await anyio.sleep(delay)
    try:
        seen = await store.list_events(run_id)
        after = seen[-1].seq if seen else 0
        run = await store.get_run(run_id)
        while run.status is RunStatus.RUNNING:
            # Level-triggered: a move committed after the reads above is an event after `after`.
            # The run (its checkpoint may be large: a long graph's) is read again only when its
            # status changed; the leg's own writes, one per step of a graph, change none.
            if changes := await store.wait_for_events(
                run_id, after_seq=after, timeout=_WATCH_ROUND
            ):
                after = changes[-1].seq
                if any(event.type == _STATUS_CHANGED for event in changes):
                    run = await store.get_run(run_id)
    except Exception:  # the leg's own last write meets the same store and says what failed
        logger.warning("run %s: cannot watch the run for a cancel", run_id, exc_info=True)
        return
    try:
        stop(run)
    except Exception:  # never into the leg: it finds out at its next write all the same
        logger.exception("run %s is %s: could not stop its leg", run_id, run.status.value)


def _abort_session(session: AgentSession) -> Callable[[RunRecord], None]:
    """A watch's ``stop`` for a recipe leg: abort the agent session, saying why."""

    def stop(run: RunRecord) -> None:
        session.abort(f"run {run.id} is {run.status.value} now: {run.error or 'moved elsewhere'}")

    return stop


async def moved_error(
    store: Store,
    run_id: str,
    stopped: str = "the agent was stopped and what it did in this leg was not recorded",
) -> ConflictError:
    """The error for a leg whose run another writer moved meanwhile: what the run is now
    (reason ``run_cancelled`` for a cancelled run, ``version`` otherwise), then ``stopped``
    (what the leg stopped and did not record), and for a ``failed_resumable`` run the command
    that retries it. Raise it: the run stays as the other writer left it."""
    run = await store.get_run(run_id)
    reason = "run_cancelled" if run.status is RunStatus.CANCELLED else "version"
    if run.status is RunStatus.CANCELLED:
        what = "was cancelled"
    elif run.status is RunStatus.RUNNING:
        what = "is being run by another process"
    else:
        what = f"was marked {run.status.value} ({run.error or 'by another writer'})"
    message = f"run {run_id} {what} while this process ran it; {stopped}"
    if run.status is RunStatus.FAILED_RESUMABLE:
        message += f"; retry it with: pi-recipes runs retry {run_id}"
    return ConflictError(message, run_id=run_id, reason=reason)


async def drive_leg(
    store: Store,
    run: RunRecord,
    session: AgentSession,
    checkpoint: Checkpoint,
    leg: Awaitable[None],
    surface: Surface,
    writes: LegWrites | None = None,
) -> RunResult:
    """Await ``leg`` (a prompt, a resume or a retry of ``session``) and write where it ended.

    One ``update_run`` records the status, the checkpoint, the leg's interactions and its
    :class:`LegRecord`. The host's live sink gets every AG-UI event as it happens, the closing
    one once it is stored. A failure is recorded, then re-raised with the run's id (and, when
    the run can be retried, the command) set on it. ``writes`` is the leg's share of the run
    with its tools (async questions posted mid-leg): its version and its pending events.
    """
    writes = writes or LegWrites(store, run)
    number = checkpoint.leg + 1
    record = LegRecord(
        run=surface.agui_run_id or agui_run_id(run, number),
        parent=checkpoint.agui_run_id,
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
    checkpoint = checkpoint.model_copy(
        update={
            "messages": session.messages,
            "paused": checkpoint_paused(session.paused),
            "leg": number,
            "agui_run_id": record.run,
            "retries": checkpoint.retries if failed else 0,
        }
    )
    try:
        run = await store.update_run(
            run.id,
            expected_version=writes.run.version,
            status=end.status,
            checkpoint=checkpoint.dump(run.id, run.model_name),
            error=end.error,
            new_interactions=[new_interaction(i) for i in end.interrupts],
            close_open=RUN_ENDED if writes.asks_async and is_terminal(end.status) else None,
            events=[*writes.take(), (LEG_ENDED, record.dump(run.id))],
        )
    except ConflictError as exc:
        if exc.reason != "version":
            raise
        raise await moved_error(store, run.id) from None
    except UsageError as exc:  # a value of the leg no store keeps: never leave it `running`
        raise await _unstorable(store, writes.run, exc) from exc
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
