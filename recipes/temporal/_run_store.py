"""A run's own store, inside its workflow: the in-memory store on the workflow's clock.

The workflow holds one run in a :class:`~interactions.store.MemoryStore` whose clock is
``workflow.now()``, so the unchanged runner writes to it by the same rules as every store
(compare-and-set, the status table, the audit events) and a replay rebuilds it exactly. After
each write the store keeps a plain copy of the run (:attr:`RunStore.state`) for the update
validators and the query, which cannot await, and publishes the run's search attributes
(:data:`SEARCH_ATTRIBUTES`) so listings need no worker.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from temporalio import workflow
from temporalio.common import SearchAttributeKey, SearchAttributeUpdate

from interactions.async_questions import open_for_pause
from interactions.reminders import next_due, reached_of
from interactions.store import (
    EventInput,
    EventRecord,
    InteractionRecord,
    MemoryStore,
    NewRun,
    RunRecord,
    RunStatus,
    is_terminal,
)

__all__ = ["SEARCH_ATTRIBUTES", "RunState", "RunStore"]

STATUS = SearchAttributeKey.for_keyword("PiRunStatus")
KIND = SearchAttributeKey.for_keyword("PiRunKind")
THREAD = SearchAttributeKey.for_keyword("PiThreadId")
OPEN = SearchAttributeKey.for_keyword_list("PiOpenInteractions")
UPDATED = SearchAttributeKey.for_datetime("PiUpdatedAt")
NEXT_EXPIRY = SearchAttributeKey.for_datetime("PiNextExpiry")

SEARCH_ATTRIBUTES: Mapping[str, str] = {
    STATUS.name: "Keyword",
    KIND.name: "Keyword",
    THREAD.name: "Keyword",
    OPEN.name: "KeywordList",
    UPDATED.name: "Datetime",
    NEXT_EXPIRY.name: "Datetime",
}
"""The search attributes of a run's workflow, by name and type (registered on the namespace by
the worker): its status, kind, AG-UI thread, open interactions, last change and next expiry."""


@dataclass
class RunState:
    """The run as last written: what validators and queries read without awaiting."""

    run: RunRecord | None = None
    interactions: dict[str, InteractionRecord] = field(default_factory=dict)
    events: list[EventRecord] = field(default_factory=list)
    changes: int = 0
    """Writes so far (an answer does not move the run's version; this counts it too)."""

    def open_ids(self) -> list[str]:
        """Every question no one has answered yet: what a pause waits on, and the async
        questions of a running run (``PiOpenInteractions``, what listings of open questions
        read)."""
        return [r.id for r in self.interactions.values() if r.pending]

    def next_notice(self) -> datetime | None:
        """When the earliest reminder or escalation of an open question is due (``None``:
        none to come): the timer that writes it (``interactions.reminders.remind_due``)."""
        if self.run is None or is_terminal(self.run.status):
            return None
        due = [
            when
            for record in self.interactions.values()
            if record.pending
            for when in [next_due(record, reached_of(self.events, record.id))]
            if when is not None
        ]
        return min(due) if due else None

    def next_expiry(self) -> datetime | None:
        """When the earliest question a paused run waits for expires (``None``: nothing to
        expire): its open blocking ones, and the async ones an ``await_answers`` waits for,
        as the runner's sweep settles them."""
        if self.run is None or self.run.status is not RunStatus.PAUSED_WAITING_HUMAN:
            return None
        due = [r.expires_at for r in open_for_pause(list(self.interactions.values()))]
        return min(due) if due else None


class RunStore(MemoryStore):
    """The store of the one run of a workflow (see the module docstring). Its writes are the
    memory store's, their arguments passed on as given, each followed by a sync of
    :attr:`state`."""

    def __init__(self, run_id: str) -> None:
        super().__init__(clock=workflow.now)
        self.run_id = run_id
        self.state = RunState()
        self._published: dict[str, Any] = {}

    async def create_run(self, new: NewRun) -> RunRecord:
        run = await super().create_run(new)
        await self._sync()
        return run

    async def update_run(self, run_id: str, **changes: Any) -> RunRecord:
        run = await super().update_run(run_id, **changes)
        await self._sync()
        return run

    async def answer_interaction(
        self, run_id: str, *args: Any, **kwargs: Any
    ) -> tuple[InteractionRecord, bool]:
        done = await super().answer_interaction(run_id, *args, **kwargs)
        if done[1]:
            await self._sync()
        return done

    async def append_events(self, run_id: str, events: Sequence[EventInput]) -> list[EventRecord]:
        appended = await super().append_events(run_id, events)
        await self._sync()
        return appended

    async def record_reminder(
        self, run_id: str, *args: Any, **kwargs: Any
    ) -> EventRecord | None:
        written = await super().record_reminder(run_id, *args, **kwargs)
        if written is not None:
            await self._sync()
        return written

    async def _sync(self) -> None:
        state = self.state
        state.run = await super().get_run(self.run_id)
        state.interactions = {r.id: r for r in await super().list_interactions(self.run_id)}
        state.events += await super().list_events(self.run_id, len(state.events))
        state.changes += 1
        self._publish()

    def _publish(self) -> None:
        run = self.state.run
        assert run is not None
        wanted: dict[str, Any] = {
            STATUS.name: run.status.value,
            KIND.name: run.kind,
            THREAD.name: run.thread_id,
            OPEN.name: self.state.open_ids() or None,  # none: unset, so queries can tell
            UPDATED.name: run.updated_at,
            NEXT_EXPIRY.name: self.state.next_expiry(),
        }
        keys: dict[str, SearchAttributeKey[Any]] = {
            k.name: k for k in (STATUS, KIND, THREAD, OPEN, UPDATED, NEXT_EXPIRY)
        }
        changes: list[SearchAttributeUpdate[Any]] = []
        for name, value in wanted.items():
            if self._published.get(name) == value:
                continue
            key = keys[name]
            changes.append(key.value_unset() if value is None else key.value_set(value))
            self._published[name] = value
        workflow.upsert_search_attributes(changes)
