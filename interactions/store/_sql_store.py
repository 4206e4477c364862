"""The Store's reads and writes over a SQL backend's rows: what SQLite and PostgreSQL share.

:class:`SqlStore` decides with :mod:`._rules` and runs a :class:`~._rows.Rows` (``_sqlite_rows``,
``_postgres_rows``) on the connection :class:`~._threaded.ThreadedStore` owns, every write in
one transaction.

A write sends everything it reads before it asks for any result, decides, then sends its
guarded writes before it checks any guard, and its events last: a backend that pipelines
(PostgreSQL) waits for the server once for the reads, once for the guards, and once for the
commit, which the events travel with. ``update_run`` may also decide on what the store last
wrote of the run (:class:`~interactions.store._last_written.LastWritten`) and send it all at
once with guards that fail the transaction (:meth:`SqlStore._send_decided`): for PostgreSQL one
wait for the server, for SQLite no read; a decision on what the store holds only when a guard
finds the run moved on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from interactions._errors import PiRecipesError
from interactions.store._audit_base import AuditBase
from interactions.store._checks import position
from interactions.store._last_written import LastWritten, Written
from interactions.store._queries import InteractionsQuery, RunsQuery
from interactions.store._records import (
    EventInput,
    EventRecord,
    InteractionAnswer,
    InteractionRecord,
    NewRun,
    RunRecord,
    canonical_json,
    check_event_inputs,
)
from interactions.store._refusals import run_taken, unknown_interaction
from interactions.store._rows import Rows, Stale
from interactions.store._rules import (
    RunChange,
    UpdatePlan,
    new_run_record,
    plan_answer,
    plan_update,
)
from interactions.store._sql_consumers import ConsumerSql, SqlConsumers
from interactions.store._sql_decisions import DecisionSql, SqlDecisions
from interactions.store._sql_reminders import ReminderSql, SqlReminders
from interactions.store._sql_votes import SqlVotes, VoteSql
from interactions.store._threaded import ConnT

__all__ = ["SqlStore"]

Decide = Callable[[RunRecord, Sequence[InteractionRecord], datetime], UpdatePlan]
"""An update's decision on the run and its interactions as read (or remembered), at a time."""


class SqlStore(
    SqlDecisions[ConnT], SqlVotes[ConnT], SqlConsumers[ConnT], SqlReminders[ConnT], AuditBase
):
    """The :class:`~interactions.store.Store` over ``rows`` (see the module docstring).

    ``_channel`` is handed to ``Rows.append_events`` (the backend sets it when it has one, e.g.
    on connecting). ``decisions`` are the statements of remembered decisions in the backend's
    dialect (:class:`~._sql_decisions.SqlDecisions` runs them), ``votes`` those of votes
    (:class:`~._sql_votes.SqlVotes` runs them), ``consumers`` those of the feed's consumers
    (:class:`~._sql_consumers.SqlConsumers` runs them), ``reminders`` those of reminders and
    escalations (:class:`~._sql_reminders.SqlReminders` runs them).
    """

    def __init__(
        self,
        rows: Rows[ConnT],
        decisions: DecisionSql,
        votes: VoteSql,
        consumers: ConsumerSql,
        reminders: ReminderSql,
        *,
        poll_interval: float,
        clock: Callable[[], datetime],
    ) -> None:
        super().__init__(poll_interval=poll_interval, clock=clock)
        self._rows = rows
        self._decision_sql = decisions
        self._vote_sql = votes
        self._consumer_sql = consumers
        self._reminder_sql = reminders
        self._channel = ""
        self._written = LastWritten()  # what update_run may decide on without reading first

    # -- runs ---------------------------------------------------------------------------------

    async def _create_run(self, new: NewRun) -> RunRecord:
        rows = self._rows
        checkpoint_json = canonical_json(new.checkpoint)  # written, and measured, once

        def tx(conn: ConnT) -> RunRecord:
            run, event = new_run_record(new, self._clock())
            if not rows.insert_run(conn, run, checkpoint_json)():
                raise run_taken(new.id)
            rows.append_events(conn, run.id, [event], run.created_at, channel=self._channel)
            return run

        try:
            run = await self._write(tx, durable=False)  # made durable by the run's next write
        except Stale:
            raise run_taken(new.id) from None
        self._written.keep(run, [], size=len(checkpoint_json))
        self._bell.ring(run.id)
        return run

    async def get_run(self, run_id: str) -> RunRecord:
        run = await self._read(lambda conn: self._rows.get_run(conn, run_id))
        self._written.read_run(run)
        return run

    async def get_run_with_interactions(
        self, run_id: str
    ) -> tuple[RunRecord, list[InteractionRecord]]:
        run, interactions = await self._read(
            lambda conn: self._rows.get_run_with_interactions(conn, run_id)
        )
        self._written.read_together(run, interactions)
        return run, interactions

    async def _list_runs(self, query: RunsQuery) -> list[RunRecord]:
        return await self._read(lambda conn: self._rows.select_runs(conn, query))

    async def _update_run(
        self, run_id: str, change: RunChange, now: datetime | None, durable: bool
    ) -> RunRecord:
        def decide(run: RunRecord, stored: Sequence[InteractionRecord], at: datetime) -> UpdatePlan:
            return plan_update(run, change, stored, at)

        written = self._written.at(run_id, change.expected_version)
        if written is not None:
            updated = await self._update_as_written(written, decide, now, durable)
            if updated is not None:
                return updated

        rows = self._rows

        def tx(conn: ConnT) -> tuple[UpdatePlan, list[InteractionRecord]]:
            # What the decision reads, sent together: the run, and all its interactions (what
            # close_open closes, and what the store remembers for the next update).
            locked = rows.lock_run(conn, run_id, checkpoint=change.checkpoint is None)
            found = rows.find_interactions(conn, run_id, None)
            run = locked()
            stored = found()
            at = now or self._clock()
            plan = decide(run, stored, at)
            # The guarded writes, sent together, then their guards; the events go with the commit.
            guards = [rows.update_run_row(conn, plan.run, checkpoint_json=plan.checkpoint_json)]
            for record in plan.inserts:
                rows.insert_interaction(conn, record)
            guards += [rows.store_answer(conn, record) for record in plan.answered]
            for guard in guards:
                guard()
            rows.append_events(conn, run_id, plan.events, at, channel=self._channel)
            return plan, stored

        plan, stored = await self._write(tx, durable=durable)
        size = None if plan.checkpoint_json is None else len(plan.checkpoint_json)
        self._written.keep(plan.run, [*stored, *plan.inserts, *plan.answered], size)
        return plan.run

    async def _update_as_written(
        self, written: Written, decide: Decide, now: datetime | None, durable: bool
    ) -> RunRecord | None:
        """Update the run as decided on what this store last wrote of it, without reading it
        first: the guards fail the transaction if the run moved on since (on PostgreSQL, the
        write is one wait for the server instead of three). ``None``: not written; decide on
        what the store holds (a refusal, too, is left to that decision, on data that cannot be
        behind).
        """
        at = now or self._clock()
        try:
            plan = decide(written.run, written.in_request_order(), at)
        except PiRecipesError:
            return None

        def tx(conn: ConnT) -> None:
            self._send_decided(conn, plan, at)

        try:
            await self._write(tx, durable=durable)
        except Stale:
            self._written.forget(plan.run.id)
            return None
        interactions = [*written.interactions.values(), *plan.inserts, *plan.answered]
        size = written.size if plan.checkpoint_json is None else len(plan.checkpoint_json)
        if size is None:  # a run read, with the checkpoint it was read with: still unmeasured
            self._written.keep_unmeasured(plan.run, interactions)
        else:
            self._written.keep(plan.run, interactions, size)
        return plan.run

    def _send_decided(self, conn: ConnT, plan: UpdatePlan, at: datetime) -> None:
        """Send the writes of ``plan`` (the run's row, new interactions, answers, then the
        events stamped ``at``), decided without reading the run: with strict guards, so the
        transaction raises :class:`Stale` and writes nothing if the run's version moved or an
        interaction it answers was answered."""
        rows = self._rows
        rows.update_run_row(conn, plan.run, checkpoint_json=plan.checkpoint_json, strict=True)
        for record in plan.inserts:
            rows.insert_interaction(conn, record)
        for record in plan.answered:
            rows.store_answer(conn, record, strict=True)
        rows.append_events(conn, plan.run.id, plan.events, at, channel=self._channel)

    # -- interactions -------------------------------------------------------------------------

    async def get_interaction(self, run_id: str, interaction_id: str) -> InteractionRecord:
        record = await self._read(
            lambda conn: self._rows.find_interaction(conn, run_id, interaction_id)
        )
        if record is None:
            raise unknown_interaction(run_id, interaction_id)
        return record

    async def list_interactions(
        self, run_id: str | None = None, *, pending: bool | None = None
    ) -> list[InteractionRecord]:
        def read(conn: ConnT) -> list[InteractionRecord]:
            found = self._rows.select_interactions(conn, run_id, pending)
            if run_id is not None and not found:
                self._rows.get_run(conn, run_id, checkpoint=False)  # unknown: refused, not []
            return found

        found = await self._read(read)
        if run_id is not None and pending is None:
            self._written.read_interactions(run_id, found)
        return found

    async def _page_interactions(self, query: InteractionsQuery) -> list[InteractionRecord]:
        return await self._read(lambda conn: self._rows.page_interactions(conn, query))

    async def _answer(
        self, run_id: str, interaction_id: str, answer: InteractionAnswer, now: datetime | None
    ) -> tuple[InteractionRecord, bool]:
        rows = self._rows

        def tx(conn: ConnT) -> tuple[InteractionRecord, bool]:
            at = now or self._clock()
            rows.lock_run(conn, run_id, checkpoint=False)  # no run: no interaction, refused below
            found = rows.find_interactions(conn, run_id, [interaction_id])()
            record, event = plan_answer(run_id, interaction_id, next(iter(found), None), answer, at)
            if event is None:
                return record, False
            rows.store_answer(conn, record)()
            rows.append_events(conn, run_id, [event], at, channel=self._channel)
            return record, True

        record, stored_now = await self._write(tx)
        if stored_now:
            self._written.answered(record)
        return record, stored_now

    # -- events -------------------------------------------------------------------------------

    async def _append_events(
        self, run_id: str, events: Sequence[EventInput]
    ) -> list[EventRecord]:
        checked = check_event_inputs(events)

        def tx(conn: ConnT) -> list[EventRecord]:
            locked = self._rows.lock_run(conn, run_id, checkpoint=False)
            appended = self._rows.append_events(
                conn, run_id, checked, self._clock(), channel=self._channel
            )
            locked()  # no run: UnknownRunError, and nothing was appended
            return appended()

        appended = await self._write(tx)
        if appended:
            self._bell.ring(run_id)
        return appended

    async def list_events(self, run_id: str, after_seq: int = 0) -> list[EventRecord]:
        after_seq = position("after_seq", after_seq)
        return await self._read(lambda conn: self._rows.select_events(conn, run_id, after_seq))

    async def latest_cursor(self) -> int:
        return await self._read(self._rows.last_cursor)

    async def _feed_after(self, cursor: int) -> list[EventRecord]:
        return await self._read(lambda conn: self._rows.select_feed(conn, cursor, 500))
