"""The store-wide feed, fanned out: every event of every run, as frames for the hub.

One watcher per server follows ``store.watch`` from the cursor current at start (answers and
runs from the CLI, REST, another page or another server process all arrive here: at once on
PostgreSQL, within the SQLite store's poll otherwise) and turns each stored event into a typed
frame. The legs this server drives also stream their AG-UI events live (:meth:`Feed.live`),
before the store has them. A follower of one run's events (``?follow=1``) waits on
:meth:`Feed.wait_run`, woken by the same watcher.
"""

from __future__ import annotations

import logging
import math
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import anyio
import anyio.lowlevel
from ag_ui.core import BaseEvent

from hosts.web._frames import (
    InterruptOpenedFrame,
    InterruptResolvedFrame,
    RunCreatedFrame,
    RunEventFrame,
    RunStatusFrame,
    ServerFrame,
)
from hosts.web._hub import Hub
from hosts.web._views import interaction_view, run_view
from interactions import PiRecipesError
from interactions.errors import StoreUnavailableError
from interactions.store import EventRecord, InteractionRecord, RunRecord, Store, StoreEventType
from recipes.runs import EventSink, RunView
from recipes.runs.agui import event_json, leg_agui_events

__all__ = ["Feed"]

logger = logging.getLogger("hosts.web")

_KINDS_KEPT = 4096
_RETRY = (0.2, 5.0)


class Feed:
    """Follows ``store`` for ``hub``; tells waiters of single runs. ``view`` is what the run's
    driver shows of a run (``Runner.view``): a finished run's status frame carries its
    ``warning`` (an answer cut short by the output limit, a refusal)."""

    def __init__(
        self, store: Store, hub: Hub, view: Callable[[RunRecord], RunView] | None = None
    ) -> None:
        self.store = store
        self.hub = hub
        self.view = view
        self.cursor = 0
        self._kinds: OrderedDict[str, str] = OrderedDict()
        self._waiters: dict[str, set[anyio.Event]] = {}
        self.stopping = False
        """Set by :meth:`stop`: the server is shutting down."""
        self.stopped = anyio.Event()
        """Set by :meth:`stop`, for what waits on something else meanwhile (a leg's events)."""

    def stop(self) -> None:
        """The server is shutting down: wake every waiter for good (a followed event stream
        then ends at once, its client reconnecting with ``Last-Event-ID``), rather than keep
        the shutdown waiting for its grace period to run out."""
        self.stopping = True
        self.stopped.set()
        for waiters in self._waiters.values():
            for event in waiters:
                event.set()

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Follow the store until cancelled (reconnecting after an error without a gap)."""
        self.cursor = await self.store.latest_cursor()
        task_status.started()
        delay = _RETRY[0]
        while True:
            try:
                async with self.store.watch(after=self.cursor) as events:
                    async for event in events:
                        await self.handle(event)
                        self.cursor = event.cursor
                        delay = _RETRY[0]
            except Exception as exc:  # the database went away: the feed outlives it
                logger.warning("the store feed failed (%s); retrying in %.1f s", exc, delay)
                await anyio.sleep(delay)
                delay = min(delay * 2, _RETRY[1])

    async def handle(self, event: EventRecord) -> None:
        """Publish the frame ``event`` stands for; wake the waiters of its run."""
        for frame in await self._frames(event):
            self.hub.publish(event.run_id, frame)
        for waiter in self._waiters.get(event.run_id, ()):
            waiter.set()
        await anyio.lowlevel.checkpoint()  # let the clients' senders keep up with a burst

    async def _frames(self, event: EventRecord) -> list[ServerFrame]:
        data, run_id = event.data, event.run_id
        try:
            if event.type == StoreEventType.RUN_CREATED:
                run = await self.store.get_run(run_id)
                self._remember(run_id, run.kind)
                return [RunCreatedFrame(run=run_view(run))]
            if event.type == StoreEventType.RUN_STATUS_CHANGED:
                status = {
                    "run_id": run_id,
                    "kind": await self._kind(run_id),
                    "from": data.get("from"),
                    "to": data["to"],
                    "error": data.get("error"),
                    "warning": await self._warning(run_id, data["to"]),
                }
                return [RunStatusFrame.model_validate(status)]
            if event.type == StoreEventType.INTERACTION_REQUESTED:
                record = await self.store.get_interaction(run_id, data["interaction_id"])
                return [InterruptOpenedFrame(run_id=run_id, interaction=interaction_view(record))]
            if event.type == StoreEventType.INTERACTION_ANSWERED:
                record = await self.store.get_interaction(run_id, data["interaction_id"])
                return [] if record.answer is None else [_resolved(record)]
            # a leg of a recipe run ended: its AG-UI events, rebuilt from the stored transcript
            events = await leg_agui_events(self.store, event)
        except StoreUnavailableError:
            raise  # the store is away for now: the feed follows again from this event
        except (PiRecipesError, KeyError, ValueError) as exc:  # ValueError: pydantic's too
            logger.warning("skipped store event %s of %s: %s", event.type, run_id, exc)
            return []
        except Exception:  # a driver's bug: skipped, so the feed never sticks on one event
            logger.exception("skipped store event %s of %s", event.type, run_id)
            return []
        return [RunEventFrame(run_id=run_id, event=event_json(e), live=False) for e in events]

    def live(self, run_id: str) -> EventSink:
        """A live sink for a leg of ``run_id`` driven here: its AG-UI events as ``run.event``
        frames (``live: true``), the moment they happen."""

        def on_event(event: BaseEvent) -> None:
            self.hub.publish(
                run_id, RunEventFrame(run_id=run_id, event=event_json(event), live=True)
            )

        return on_event

    @contextmanager
    def listening(self, run_id: str) -> Iterator[anyio.Event]:
        """An event set when the feed next sees an event of ``run_id`` (register it *before*
        reading the store, so nothing slips between the read and the wait)."""
        event = anyio.Event()
        self._waiters.setdefault(run_id, set()).add(event)
        try:
            yield event
        finally:
            waiters = self._waiters.get(run_id, set())
            waiters.discard(event)
            if not waiters:
                self._waiters.pop(run_id, None)

    async def wait_run(self, rung: anyio.Event, timeout: float) -> bool:
        """Wait (at most ``timeout`` seconds) for ``rung``; return whether it was set."""
        with anyio.move_on_after(timeout if timeout >= 0 else math.inf):
            await rung.wait()
        return rung.is_set()

    async def _warning(self, run_id: str, to: object) -> str | None:
        """Why a run that just finished may not have said all it had to (else ``None``)."""
        if to != "finished" or self.view is None:
            return None
        run = await self.store.get_run(run_id)
        return self.view(run).warning if run.status == to else None

    async def _kind(self, run_id: str) -> str:
        kind = self._kinds.get(run_id)
        if kind is None:
            kind = (await self.store.get_run(run_id)).kind
            self._remember(run_id, kind)
        return kind

    def _remember(self, run_id: str, kind: str) -> None:
        self._kinds[run_id] = kind
        self._kinds.move_to_end(run_id)
        while len(self._kinds) > _KINDS_KEPT:
            self._kinds.popitem(last=False)


def _resolved(record: InteractionRecord) -> InterruptResolvedFrame:
    answer = record.answer
    assert answer is not None
    return InterruptResolvedFrame(
        run_id=record.run_id,
        interaction_id=record.id,
        status=answer.status,
        payload=answer.payload,
        answered_by=answer.answered_by,
        via=answer.via,
        answered_at=record.answered_at,
    )
