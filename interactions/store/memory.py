"""An in-memory :class:`~interactions.store.Store`: the same contract, nothing on disk.

A public test helper (and a reference for backend authors): runners and hosts test against it
without a file. Its state lives in plain dicts guarded by a ``threading.Lock``; every method
does its whole read-decide-write under the lock with no ``await`` inside, so each call is
atomic, and every record handed out is a deep copy, so callers cannot change stored state.
What every store of this package does alike around that (the arguments, the doorbell, the
waits and the feed) is :class:`~interactions.store._base.StoreBase`'s.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from datetime import datetime

import anyio.lowlevel

from interactions._errors import UsageError
from interactions.store._audit_base import AuditBase
from interactions.store._checks import position
from interactions.store._consumer_base import ConsumersBase
from interactions.store._consumers import ConsumerState, plan_advance, plan_lease
from interactions.store._decision_base import DecisionsBase
from interactions.store._decisions import (
    DecisionRecord,
    DecisionsQuery,
    NewDecision,
    applies,
    decision_id,
    plan_remember,
    plan_revoke,
    select_decisions,
)
from interactions.store._queries import InteractionsQuery, RunsQuery
from interactions.store._records import (
    EventInput,
    EventRecord,
    InteractionAnswer,
    InteractionRecord,
    NewRun,
    RunRecord,
    check_event_inputs,
    utc_now,
)
from interactions.store._refusals import (
    decision_id_taken,
    run_taken,
    unknown_interaction,
    unknown_run,
)
from interactions.store._reminder_base import RemindersBase
from interactions.store._reminders import plan_notice
from interactions.store._rules import Event, RunChange, new_run_record, plan_answer, plan_update
from interactions.store._vote_base import VotesBase
from interactions.store._votes import NewVote, VoteOutcome, VoteRecord, plan_vote

__all__ = ["MemoryStore"]


class MemoryStore(DecisionsBase, VotesBase, ConsumersBase, RemindersBase, AuditBase):
    """A :class:`~interactions.store.Store` kept in this process's memory.

    ``clock`` supplies "now" when a method is not given ``now`` (default: UTC wall clock).
    """

    def __init__(self, *, clock: Callable[[], datetime] = utc_now) -> None:
        super().__init__(clock=clock)
        self._lock = threading.Lock()
        self._closed = False
        self._runs: dict[str, RunRecord] = {}
        self._interactions: dict[tuple[str, str], InteractionRecord] = {}
        self._ids_of_run: dict[str, list[str]] = {}  # each run's interaction ids, as inserted
        self._events: dict[str, list[EventRecord]] = {}
        self._feed: list[EventRecord] = []
        self._decisions: dict[str, DecisionRecord] = {}  # by id, in insertion order
        self._votes: dict[tuple[str, str], list[VoteRecord]] = {}  # in the order cast
        self._consumers: dict[str, ConsumerState] = {}
        self._notices: dict[tuple[str, str, str], int] = {}  # the last number of each kind

    # -- runs ---------------------------------------------------------------------------------

    async def _create_run(self, new: NewRun) -> RunRecord:
        await self._enter()
        with self._lock:
            if new.id in self._runs:
                raise run_taken(new.id)
            run, event = new_run_record(new, self._clock())
            self._runs[run.id] = run
            self._events[run.id] = []
            self._store_events(self._new_events(run.id, [event], run.created_at))
        self._bell.ring(run.id)
        return run.model_copy(deep=True)

    async def get_run(self, run_id: str) -> RunRecord:
        await self._enter()
        with self._lock:
            return self._run(run_id).model_copy(deep=True)

    async def get_run_with_interactions(
        self, run_id: str
    ) -> tuple[RunRecord, list[InteractionRecord]]:
        await self._enter()
        with self._lock:
            run = self._run(run_id).model_copy(deep=True)
            return run, [record.model_copy(deep=True) for record in self._of_run(run_id)]

    async def _list_runs(self, query: RunsQuery) -> list[RunRecord]:
        await self._enter()
        with self._lock:
            ordered = list(enumerate(self._runs.values()))
        ordered.sort(key=lambda pair: (pair[1].created_at, pair[0]), reverse=not query.oldest_first)
        runs = [run for _, run in ordered]
        if query.after is not None:
            ids = [run.id for run in runs]
            runs = runs[ids.index(query.after) + 1 :] if query.after in ids else []
        answered = None
        if query.answered_by is not None:
            with self._lock:
                answered = {
                    r.run_id
                    for r in self._interactions.values()
                    if r.answer is not None and r.answer.answered_by == query.answered_by
                } | {
                    run_id
                    for (run_id, _), cast in self._votes.items()
                    if any(v.voter == query.answered_by for v in cast)
                }
        runs = [
            run
            for run in runs
            if (query.status is None or run.status == query.status)
            and (query.thread_id is None or run.thread_id == query.thread_id)
            and (query.kind is None or run.kind == query.kind)
            and (query.ref is None or run.ref == query.ref)
            and (answered is None or run.id in answered)
        ]
        return [run.model_copy(deep=True) for run in runs[: query.limit]]

    async def _update_run(
        self,
        run_id: str,
        change: RunChange,
        now: datetime | None,
        durable: bool,  # nothing to flush: memory is never durable
    ) -> RunRecord:
        await self._enter()
        with self._lock:
            now = now or self._clock()
            plan = plan_update(self._run(run_id), change, self._of_run(run_id), now)
            new_events = self._new_events(run_id, plan.events, now)
            self._runs[run_id] = plan.run
            for record in (*plan.inserts, *plan.answered):
                self._put_interaction(record)
            self._store_events(new_events)
        return plan.run.model_copy(deep=True)

    # -- interactions -------------------------------------------------------------------------

    async def get_interaction(self, run_id: str, interaction_id: str) -> InteractionRecord:
        await self._enter()
        with self._lock:
            record = self._interactions.get((run_id, interaction_id))
        if record is None:
            raise unknown_interaction(run_id, interaction_id)
        return record.model_copy(deep=True)

    async def list_interactions(
        self, run_id: str | None = None, *, pending: bool | None = None
    ) -> list[InteractionRecord]:
        await self._enter()
        with self._lock:
            if run_id is not None:
                self._run(run_id)
            ordered = list(enumerate(self._interactions.values()))
        ordered.sort(key=lambda pair: (pair[1].requested_at, pair[0]))
        return [
            record.model_copy(deep=True)
            for _, record in ordered
            if (run_id is None or record.run_id == run_id)
            and (pending is None or record.pending == pending)
        ]

    async def _page_interactions(self, query: InteractionsQuery) -> list[InteractionRecord]:
        await self._enter()
        with self._lock:  # insertion order breaks ties of requested_at, as SQL's row order does
            keyed = [((r.requested_at, i), r) for i, r in enumerate(self._interactions.values())]
            start = None
            if query.after is not None:
                found = self._interactions.get(query.after)
                if found is None:
                    return []
                start = next(key for key, record in keyed if record is found)
        keyed.sort(key=lambda pair: pair[0])
        page = [
            record.model_copy(deep=True)
            for key, record in keyed
            if (start is None or key > start)
            and (query.since is None or record.requested_at >= query.since)
            and (query.until is None or record.requested_at < query.until)
        ]
        return page[: query.limit]

    async def _answer(
        self, run_id: str, interaction_id: str, answer: InteractionAnswer, now: datetime | None
    ) -> tuple[InteractionRecord, bool]:
        await self._enter()
        with self._lock:
            now = now or self._clock()
            stored = self._interactions.get((run_id, interaction_id))
            record, event = plan_answer(run_id, interaction_id, stored, answer, now)
            if event is not None:
                new_events = self._new_events(run_id, [event], now)
                self._put_interaction(record)
                self._store_events(new_events)
        return record.model_copy(deep=True), event is not None

    # -- events -------------------------------------------------------------------------------

    async def _append_events(
        self, run_id: str, events: Sequence[EventInput]
    ) -> list[EventRecord]:
        await self._enter()
        checked = check_event_inputs(events)
        with self._lock:
            self._run(run_id)
            appended = self._new_events(run_id, checked, self._clock())
            self._store_events(appended)
        if appended:
            self._bell.ring(run_id)
        return [event.model_copy(deep=True) for event in appended]

    async def list_events(self, run_id: str, after_seq: int = 0) -> list[EventRecord]:
        await self._enter()
        with self._lock:
            self._run(run_id)
            # seq n sits at index n - 1: no gaps, no deletes.
            found = self._events[run_id][position("after_seq", after_seq) :]
        return [event.model_copy(deep=True) for event in found]

    async def latest_cursor(self) -> int:
        await self._enter()
        with self._lock:
            return self._feed[-1].cursor if self._feed else 0

    async def _feed_after(self, cursor: int) -> list[EventRecord]:
        await self._enter()
        with self._lock:
            # cursor n sits at index n - 1: one counter, no deletes.
            return [event.model_copy(deep=True) for event in self._feed[cursor : cursor + 500]]

    # -- decisions ----------------------------------------------------------------------------

    async def _remember_decision(
        self, new: NewDecision, args_json: str | None, now: datetime | None
    ) -> tuple[DecisionRecord, bool]:
        await self._enter()
        with self._lock:
            now = now or self._clock()
            self._run(new.run_id)
            stored = self._decisions.get(decision_id(new.run_id, new.interaction_id))
            pair = (new.run_id, new.interaction_id)
            if stored is not None and (stored.run_id, stored.interaction_id) != pair:
                raise decision_id_taken(stored.id)  # another approval's id: 48 bits collided
            record, event = plan_remember(new, stored, now)
            if event is not None:
                new_events = self._new_events(new.run_id, [event], now)
                self._decisions[record.id] = record
                self._store_events(new_events)
        return record.model_copy(deep=True), event is not None

    async def _decisions_for(self, run_id: str, thread_id: str) -> list[DecisionRecord]:
        await self._enter()
        with self._lock:
            found = [
                record.model_copy(deep=True)
                for record in self._decisions.values()
                if record.active and applies(record, run_id, thread_id)
            ]
        return sorted(found, key=lambda record: record.created_at)  # stable: ties keep insertion

    async def _list_decisions(self, query: DecisionsQuery) -> list[DecisionRecord]:
        await self._enter()
        with self._lock:
            found = select_decisions(self._decisions.values(), query)
            return [record.model_copy(deep=True) for record in found]

    async def _revoke_decision(
        self, decision_id: str, revoked_by: str | None, now: datetime | None
    ) -> tuple[DecisionRecord, bool]:
        await self._enter()
        with self._lock:
            now = now or self._clock()
            stored = self._decisions.get(decision_id)
            record, event = plan_revoke(decision_id, stored, revoked_by, now)
            if event is not None:
                new_events = self._new_events(record.run_id, [event], now)
                self._decisions[record.id] = record
                self._store_events(new_events)
        return record.model_copy(deep=True), event is not None

    # -- votes --------------------------------------------------------------------------------

    async def _cast_vote(
        self,
        run_id: str,
        interaction_id: str,
        vote: NewVote,
        required: int,
        now: datetime | None,
    ) -> tuple[InteractionRecord, VoteOutcome]:
        await self._enter()
        with self._lock:
            now = now or self._clock()
            run = self._run(run_id)
            key = (run_id, interaction_id)
            stored = self._interactions.get(key)
            plan = plan_vote(
                run, interaction_id, stored, self._votes.get(key, []), vote,
                required=required, now=now,
            )  # fmt: skip
            if plan.vote is not None:
                new_events = self._new_events(run_id, plan.events, now)
                self._votes.setdefault(key, []).append(plan.vote)
                if plan.answered is not None:
                    self._put_interaction(plan.answered)
                if plan.run is not None:
                    self._runs[run_id] = plan.run
                self._store_events(new_events)
        return plan.record.model_copy(deep=True), plan.outcome

    async def _list_votes(self, run_id: str, interaction_id: str) -> list[VoteRecord]:
        await self._enter()
        with self._lock:
            return [v.model_copy(deep=True) for v in self._votes.get((run_id, interaction_id), [])]

    # -- consumers of the feed ----------------------------------------------------------------

    async def _lease_consumer(
        self, name: str, owner: str, lease: float, start: int, now: datetime | None
    ) -> int | None:
        await self._enter()
        with self._lock:
            state = plan_lease(
                self._consumers.get(name), name, owner, lease, start, now or self._clock()
            )
            if state is None:
                return None
            self._consumers[name] = state
            return state.cursor

    async def _advance_consumer(
        self, name: str, owner: str, cursor: int, now: datetime | None
    ) -> None:
        await self._enter()
        with self._lock:
            state = plan_advance(
                self._consumers.get(name), name, owner, cursor, now or self._clock()
            )
            if state is not None:
                self._consumers[name] = state

    # -- reminders and escalations ------------------------------------------------------------

    async def _record_reminder(
        self,
        run_id: str,
        interaction_id: str,
        kind: str,
        number: int,
        event: Event,
        now: datetime | None,
    ) -> EventRecord | None:
        await self._enter()
        with self._lock:
            now = now or self._clock()
            run = self._run(run_id)
            stored = self._interactions.get((run_id, interaction_id))
            key = (run_id, interaction_id, kind)
            if not plan_notice(run, interaction_id, stored, self._notices.get(key, 0), number,
                               now):  # fmt: skip
                return None
            [written] = self._new_events(run_id, [event], now)
            self._notices[key] = number
            self._store_events([written])
        return written.model_copy(deep=True)

    # -- lifecycle ----------------------------------------------------------------------------

    async def close(self) -> None:
        self._closed = True

    # -- helpers (call with the lock held) ----------------------------------------------------

    async def _enter(self) -> None:
        await anyio.lowlevel.checkpoint()
        if self._closed:
            raise UsageError("this MemoryStore is closed; create a new one")

    def _run(self, run_id: str) -> RunRecord:
        run = self._runs.get(run_id)
        if run is None:
            raise unknown_run(run_id)
        return run

    def _of_run(self, run_id: str) -> list[InteractionRecord]:
        """The run's interactions in request order (``requested_at``, then insertion)."""
        records = (self._interactions[(run_id, i)] for i in self._ids_of_run.get(run_id, ()))
        return sorted(records, key=lambda record: record.requested_at)

    def _put_interaction(self, record: InteractionRecord) -> None:
        """Store ``record`` (new, or replacing the run's one of the same id)."""
        key = (record.run_id, record.id)
        if key not in self._interactions:
            self._ids_of_run.setdefault(record.run_id, []).append(record.id)
        self._interactions[key] = record

    def _new_events(self, run_id: str, events: Sequence[Event], now: datetime) -> list[EventRecord]:
        """Build (not store) the records for ``events``, numbered after the run's last seq and
        the store's last cursor."""
        start = len(self._events[run_id]) + 1
        first = (self._feed[-1].cursor if self._feed else 0) + 1
        return [
            EventRecord(
                run_id=run_id, seq=start + i, cursor=first + i, type=type_, data=data, at=now
            )
            for i, (type_, data) in enumerate(events)
        ]

    def _store_events(self, events: Sequence[EventRecord]) -> None:
        for event in events:
            self._events[event.run_id].append(event)
            self._feed.append(event)
