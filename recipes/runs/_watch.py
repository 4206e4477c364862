"""Watching a run while one of its legs works: another writer (a cancel, ``runs recover``) that
moves the run out of ``running`` stops the leg's work, so its tools do not work on for a run
that no longer waits for them. Level-triggered on the store's events, bounded, never a poll.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio

from interactions.store import RunRecord, RunStatus, Store, StoreEventType

__all__ = ["WATCH_AFTER", "watch_run"]

logger = logging.getLogger("recipes.runs")

T = TypeVar("T")

WATCH_AFTER = 1.0
"""Seconds a leg runs before it watches its run for another writer (a cancel, ``runs recover``);
a shorter leg finds out at its last write."""

_WATCH_ROUND = 60.0
"""Seconds one wait of that watch lasts before it looks again on its own."""
_STATUS_CHANGED = StoreEventType.RUN_STATUS_CHANGED.value


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
