"""The Store as its callers see it, written once for the stores of this package.

:class:`StoreBase` takes the arguments of the methods that take more than a run id (and checks
them), scrubs every write of the process's credentials (the one place a run's checkpoint, error,
events and questions pass on their way to any of these stores: a key a model echoed, a tool printed
or an error quoted is stored as ``***``), rings the in-process doorbell after a write that changed
something, and runs the bounded waits (:meth:`~StoreBase.wait_for_events`,
:meth:`~StoreBase.watch`). What a store keeps, and how it makes a write atomic, differs for a
reason, and each says it through the hooks below: :class:`~interactions.store.MemoryStore` decides
and writes under a lock, with no ``await`` in between; the SQL stores (``_sql_store``) run rows in
one transaction. The Temporal engine's store implements the protocol on its own: its reads are a
workflow's query, its writes the runner's.
"""

from __future__ import annotations

import functools
import math
import os
from abc import abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import aclosing, asynccontextmanager
from datetime import datetime
from typing import Any, TypeVar

from interactions._secrets import Secrets
from interactions.store._changes import ChangeWatch
from interactions.store._checks import check_limit, check_timeout, position
from interactions.store._doorbell import ANY_RUN, Doorbell, wait_level
from interactions.store._protocol import Store
from interactions.store._queries import RunsQuery
from interactions.store._records import (
    EventInput,
    EventRecord,
    InteractionAnswer,
    InteractionRecord,
    NewInteraction,
    NewRun,
    RunRecord,
)
from interactions.store._rules import RunChange
from interactions.store._status import RunStatus

__all__ = ["StoreBase"]

T = TypeVar("T")

_WATCH_ROUND = 3600.0
"""Seconds one round of a watch waits before it looks again on its own."""


class StoreBase(Store):
    """The :class:`~interactions.store.Store` methods every store of this package shares (see
    the module docstring). ``clock`` supplies "now" when a method is not given ``now``;
    ``poll_interval`` is how often a waiter reads the store anyway (``inf``: only when rung, for
    a store no other process writes). ``secrets`` are scrubbed out of every text written
    (default: the credentials of the process's environment when the store is made)."""

    def __init__(
        self,
        *,
        clock: Callable[[], datetime],
        poll_interval: float = math.inf,
        secrets: Secrets | None = None,
    ) -> None:
        self._clock = clock
        self._poll_interval = poll_interval
        self._bell = Doorbell()
        self._changes: ChangeWatch | None = None  # how a store others write sees their commits
        self._secrets = Secrets.from_env(os.environ) if secrets is None else secrets

    async def create_run(self, new: NewRun) -> RunRecord:
        scrubbed = self._secrets.scrub_value(new.checkpoint)
        if scrubbed is not new.checkpoint:
            new = new.model_copy(update={"checkpoint": scrubbed})
        return await self._create_run(new)

    async def append_events(self, run_id: str, events: Sequence[EventInput]) -> list[EventRecord]:
        return await self._append_events(run_id, self._scrubbed_events(events))

    def _scrubbed_events(self, events: Sequence[EventInput]) -> Sequence[EventInput]:
        scrub = self._secrets.scrub_value
        return [(kind, scrub(payload)) for kind, payload in events] if self._secrets else events

    async def list_runs(
        self,
        status: RunStatus | None = None,
        limit: int = 100,
        *,
        oldest_first: bool = False,
        after: str | None = None,
        thread_id: str | None = None,
        kind: str | None = None,
        ref: str | None = None,
        answered_by: str | None = None,
    ) -> list[RunRecord]:
        check_limit(limit)
        query = RunsQuery(status, limit, oldest_first, after, thread_id, kind, ref, answered_by)
        return await self._list_runs(query)

    async def update_run(
        self,
        run_id: str,
        *,
        expected_version: int,
        status: RunStatus | None = None,
        checkpoint: Mapping[str, Any] | None = None,
        error: str | None = None,
        new_interactions: Sequence[NewInteraction] = (),
        answers: Mapping[str, InteractionAnswer] | None = None,
        close_open: InteractionAnswer | None = None,
        events: Sequence[EventInput] = (),
        now: datetime | None = None,
        durable: bool = True,
    ) -> RunRecord:
        if self._secrets:  # what a model, a tool or an error wrote may quote a credential
            scrub = self._secrets.scrub_value
            checkpoint = scrub(checkpoint)
            error = scrub(error)
            new_interactions = [
                asked.model_copy(update={"descriptor": scrub(asked.descriptor)})
                for asked in new_interactions
            ]
            events = self._scrubbed_events(events)
        change = RunChange(
            expected_version, status, checkpoint, error, new_interactions, answers, close_open,
            events,
        )  # fmt: skip
        updated = await self._update_run(run_id, change, now, durable)
        self._bell.ring(run_id)
        return updated

    async def answer_interaction(
        self,
        run_id: str,
        interaction_id: str,
        answer: InteractionAnswer,
        *,
        now: datetime | None = None,
    ) -> tuple[InteractionRecord, bool]:
        record, stored = await self._answer(run_id, interaction_id, answer, now)
        if stored:
            self._bell.ring(run_id)
        return record, stored

    async def wait_for_events(
        self, run_id: str, *, after_seq: int, timeout: float
    ) -> list[EventRecord]:
        check_timeout(timeout)
        async with self._waiting(run_id):
            return await self._wait(run_id, lambda: self.list_events(run_id, after_seq), timeout)

    @asynccontextmanager
    async def watch(self, *, after: int = 0) -> AsyncIterator[AsyncIterator[EventRecord]]:
        feed = self._follow(position("after", after))
        async with aclosing(feed), self._waiting(ANY_RUN):
            yield feed

    async def _follow(self, after: int) -> AsyncGenerator[EventRecord, None]:
        # A wait is bounded; a watch is not: it waits in bounded rounds until cancelled.
        cursor = after
        while True:
            found = await self._wait(
                ANY_RUN, functools.partial(self._feed_after, cursor), _WATCH_ROUND
            )
            for event in found:
                cursor = event.cursor
                yield event

    async def _wait(
        self, run_id: str, check: Callable[[], Awaitable[list[T]]], timeout: float
    ) -> list[T]:
        """``check()``'s first non-empty result, looked for on every ring of ``run_id``, every
        :attr:`_poll_interval` and whenever :attr:`_changes` wakes it (``[]`` after ``timeout``)."""
        return await wait_level(
            self._bell,
            run_id,
            check,
            timeout=timeout,
            poll_interval=self._poll_interval,
            changes=self._changes,
        )

    # -- what each store says -----------------------------------------------------------------

    @abstractmethod
    async def _create_run(self, new: NewRun) -> RunRecord:
        """Create the run ``new`` (scrubbed), as :meth:`create_run` says."""

    @abstractmethod
    async def _append_events(self, run_id: str, events: Sequence[EventInput]) -> list[EventRecord]:
        """Append ``events`` (scrubbed), as :meth:`append_events` says."""

    @abstractmethod
    async def _list_runs(self, query: RunsQuery) -> list[RunRecord]:
        """The runs ``query`` asks for (its limit checked)."""

    @abstractmethod
    async def _update_run(
        self, run_id: str, change: RunChange, now: datetime | None, durable: bool
    ) -> RunRecord:
        """Make ``change`` in one atomic write (as :meth:`update_run` says) and return the run."""

    @abstractmethod
    async def _answer(
        self, run_id: str, interaction_id: str, answer: InteractionAnswer, now: datetime | None
    ) -> tuple[InteractionRecord, bool]:
        """Store the first answer, as :meth:`answer_interaction` says."""

    @abstractmethod
    async def _feed_after(self, cursor: int) -> list[EventRecord]:
        """Up to a page of the store's events after ``cursor``, in cursor order."""

    @asynccontextmanager
    async def _waiting(self, run_id: str) -> AsyncIterator[None]:
        """Be ready to see other processes' writes to ``run_id`` while this waits."""
        yield
