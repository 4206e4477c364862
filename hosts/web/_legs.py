"""Legs the workers drive while a request watches: started, streamed, or refused.

A request (an AG-UI call, ``POST /api/runs``, a resume) hands the runner's call to the workers
and waits for its first AG-UI event: a refusal found before it (a conflict, an unknown id, an
expired interrupt, a payload off the schema, a recipe that does not load) is raised to the
request, which answers with an HTTP error; after it, the events stream. Every event also goes
live to the WebSocket clients. The leg goes on if the request goes away: the store is the
source of truth.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio
from ag_ui.core import BaseEvent
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from hosts._kit import Job, Ticket, Workers
from hosts.web._errors import Busy
from hosts.web._feed import Feed
from recipes.runs import RunResult, Surface

__all__ = ["LegCall", "WatchedLeg"]

LegCall = Callable[[Surface], Awaitable[RunResult]]
"""A runner call driving one leg with the surface it is given (``runner.start``, ``resume``...)."""


class WatchedLeg:
    """One leg of ``run_id`` driven by the workers and watched by a request.

    With ``buffer`` > 0 its AG-UI events are kept for the request in :attr:`events` (at most
    ``buffer`` unread; past that :attr:`overflowed` is set and the stream ends early).
    ``agui_run_id`` is the AG-UI run id the client chose for the leg.
    """

    def __init__(
        self, feed: Feed, run_id: str, *, agui_run_id: str | None = None, buffer: int = 0
    ) -> None:
        self.run_id = run_id
        self.result: RunResult | None = None
        self.error: BaseException | None = None
        self.seen = 0
        self.overflowed = False
        self.done = anyio.Event()
        self._first = anyio.Event()
        self._live = feed.live(run_id)
        self._send: MemoryObjectSendStream[BaseEvent] | None = None
        self.events: MemoryObjectReceiveStream[BaseEvent] | None = None
        if buffer > 0:
            self._send, self.events = anyio.create_memory_object_stream[BaseEvent](buffer)
        self.surface = Surface(on_event=self._on_event, agui_run_id=agui_run_id)

    def _on_event(self, event: BaseEvent) -> None:
        self.seen += 1
        self._live(event)
        if self._send is not None:
            try:
                self._send.send_nowait(event)
            except anyio.WouldBlock:
                self.overflowed = True
                self._send.close()
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                pass  # the request went away; the leg goes on
        self._first.set()

    def job(self, call: LegCall) -> Job:
        """The worker's job: run ``call`` with this leg's surface, keeping its outcome."""

        async def run() -> None:
            try:
                self.result = await call(self.surface)
            except Exception as exc:
                self.error = exc
                raise
            finally:
                if self._send is not None:
                    self._send.close()
                self._first.set()
                self.done.set()

        return run

    def submit(self, workers: Workers, call: LegCall) -> Ticket:
        """Hand ``call`` to the workers (:class:`Busy` when none is free nor queued)."""
        return workers.submit(self.job(call), name=f"leg of {self.run_id}")

    async def started(self, ticket: Ticket, *, timeout: float) -> None:
        """Wait for the leg's first event (or its end).

        Raises :class:`Busy` when no worker took it within ``timeout`` seconds (it is then
        abandoned, never run), and the leg's own error when it failed before any event: the
        request reports it, nothing was written.
        """
        with anyio.move_on_after(timeout):
            await ticket.begun.wait()
        if not ticket.begun.is_set() and ticket.abandon():
            raise Busy(f"no worker was free within {timeout:g} s; try again shortly")
        await self._first.wait()
        if self.seen == 0 and self.error is not None:
            raise self.error
