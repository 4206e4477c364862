"""The store-wide feed, fanned out: every event of every run, as frames for the hub.

One follower per server (:class:`~hosts._kit.StoreFeed`) follows ``store.watch`` from the
cursor current at start (answers and runs from the CLI, REST, another page or another server
process all arrive here: at once on PostgreSQL, within the SQLite store's poll otherwise); the
kit's :class:`~hosts._kit.Reader` says what each event means, and this module renders it as a
typed frame. The legs this server drives also stream their AG-UI events live
(:meth:`Feed.live`), before the store has them. A follower of one run's events (``?follow=1``)
waits on :meth:`Feed.wait_run`, woken by the same watcher.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import assert_never

import anyio
import anyio.lowlevel
from ag_ui.core import BaseEvent

from hosts._kit import (
    LegEnded,
    News,
    QuestionClosed,
    QuestionOpened,
    QuestionReminded,
    QuestionVoted,
    Reader,
    RunCreated,
    StatusChanged,
    StoreFeed,
    tally_of,
)
from hosts.web._frames import (
    InterruptOpenedFrame,
    InterruptRemindedFrame,
    InterruptResolvedFrame,
    InterruptVotedFrame,
    RunCreatedFrame,
    RunEventFrame,
    RunStatusFrame,
    ServerFrame,
)
from hosts.web._hub import Hub
from hosts.web._views import interaction_view, run_view
from interactions.store import EventRecord, InteractionRecord, RunRecord, Store
from recipes.runs import EventSink, RunView
from recipes.runs.agui import event_json

__all__ = ["Feed"]


class Feed:
    """Follows ``store`` for ``hub``; tells waiters of single runs. ``view`` is what the run's
    driver shows of a run (``Runner.view``): a finished run's status frame carries its
    ``warning`` (an answer cut short by the output limit, a refusal)."""

    def __init__(
        self, store: Store, hub: Hub, view: Callable[[RunRecord], RunView] | None = None
    ) -> None:
        self.store = store
        self.hub = hub
        self.reader = Reader(store, view)
        self.follower = StoreFeed(store, self.handle)
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
        """Follow the store from what comes next until cancelled (reconnecting after an error
        without a gap: :meth:`hosts._kit.StoreFeed.run`)."""
        await self.follower.run(task_status=task_status)

    async def handle(self, event: EventRecord) -> None:
        """Publish the frames ``event`` stands for; wake the waiters of its run. Raises
        ``StoreUnavailableError`` when the store is away (the event is handled again)."""
        try:
            for frame in await self._frames(await self.reader.read(event)):
                self.hub.publish(event.run_id, frame)
                if self.hub.crowded():  # a burst: the clients' senders go first
                    await anyio.lowlevel.checkpoint()
        finally:
            for waiter in self._waiters.get(event.run_id, ()):
                waiter.set()
        await anyio.lowlevel.checkpoint()  # let the clients' senders keep up with a burst

    async def _frames(self, news: News | None) -> list[ServerFrame]:
        match news:
            case None:
                return []
            case RunCreated(run=run):
                return [RunCreatedFrame(run=run_view(run))]
            case StatusChanged():
                status = {"run_id": news.run_id, "kind": news.kind, "from": news.from_,
                          "to": news.to, "error": news.error, "warning": news.warning}  # fmt: skip
                return [RunStatusFrame.model_validate(status)]
            case QuestionOpened(record=record):
                opened = interaction_view(record, await tally_of(self.store, record))
                return [InterruptOpenedFrame(run_id=news.run_id, interaction=opened)]
            case QuestionVoted(record=record, tally=tally):
                return [InterruptVotedFrame(
                    run_id=news.run_id, interaction_id=record.id, voter=news.voter,
                    approved=news.approved, approvals=list(tally.approvals),
                    required_approvals=tally.required,
                )]  # fmt: skip
            case QuestionReminded(record=record):
                if record.answer is not None:  # answered meanwhile: its close says so
                    return []
                return [InterruptRemindedFrame(
                    run_id=news.run_id, interaction_id=record.id, escalated=news.escalated,
                    count=news.count, added=list(news.added), approvers=list(news.approvers),
                )]  # fmt: skip
            case QuestionClosed(record=record):
                return [_resolved(record)]
            case LegEnded(events=events):  # rebuilt from the stored transcript
                return [RunEventFrame(run_id=news.run_id, event=event_json(e), live=False)
                        for e in events]  # fmt: skip
            case _:
                assert_never(news)

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
