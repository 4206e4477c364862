"""Votes over a SQL backend: the statements (:class:`VoteSql`, written once over a
:class:`~._sql_codec.SqlCodec` for SQLite and PostgreSQL) and the store's methods
(:class:`SqlVotes`), each vote one transaction with its audit events.

A vote locks its run first (PostgreSQL: the run's row, ``FOR UPDATE``; SQLite: ``BEGIN
IMMEDIATE`` holds the file), then reads the interaction and its votes, so racing voters of one
run serialize: each decides on what the ones before it committed, a person's vote is stored
once, and the approval is settled once. The table's unique key ``(run_id, interaction_id,
voter)`` is the second line.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from interactions._errors import ConflictError
from interactions.store._last_written import LastWritten
from interactions.store._records import InteractionRecord, canonical_json, read_rows, trusted
from interactions.store._rows import Later, Rows
from interactions.store._sql_codec import SqlCodec
from interactions.store._threaded import ConnT, ThreadedStore
from interactions.store._vote_base import VotesBase
from interactions.store._votes import NewVote, VoteOutcome, VoteRecord, plan_vote

__all__ = ["VOTE", "SqlVotes", "VoteSql"]

VOTE = "run_id, interaction_id, voter, status, payload, approved, via, at"


class VoteSql:
    """The statements of votes in the dialect of ``codec`` (a backend's rows)."""

    def __init__(self, codec: SqlCodec) -> None:
        self._codec = codec
        m, j = codec.mark, f"{codec.mark}{codec.json_cast}"
        marks = ", ".join(j if name == "payload" else m for name in VOTE.split(", "))
        self._insert = (
            f"INSERT INTO votes ({VOTE}) VALUES ({marks}) ON CONFLICT DO NOTHING RETURNING voter"
        )
        self._select = (
            f"SELECT {VOTE} FROM votes WHERE run_id = {m} AND interaction_id = {m} "
            f"ORDER BY {codec.tie}"
        )

    def read(self, row: Any) -> VoteRecord:
        """The vote a row of :data:`VOTE` holds."""
        fields = self._codec._fields(row, ("at",), ("payload",))
        fields["approved"] = bool(fields["approved"])
        return trusted(VoteRecord, **fields)

    def select(self, conn: Any, run_id: str, interaction_id: str) -> list[VoteRecord]:
        """The interaction's votes in the order they were cast."""
        return self.find(conn, run_id, interaction_id)()

    def find(self, conn: Any, run_id: str, interaction_id: str) -> Later[list[VoteRecord]]:
        """The interaction's votes in the order they were cast (sent now, read when the Later
        is called)."""
        key = self._codec.key
        cursor = conn.execute(self._select, [key(run_id), key(interaction_id)])
        return lambda: read_rows(self.read, cursor, "vote", lambda row: str(row["voter"]))

    def insert(self, conn: Any, vote: VoteRecord) -> Later[None]:
        """Insert ``vote``; the Later raises ``ConflictError`` (reason ``already_voted``) if
        nothing was inserted: under the run's lock no other writer can have stored it."""
        values = (
            vote.run_id,
            vote.interaction_id,
            vote.voter,
            vote.status,
            canonical_json(vote.payload),
            vote.approved,
            vote.via,
            self._codec.time_in(vote.at),
        )
        cursor = conn.execute(self._insert, values)

        def guard() -> None:
            if not cursor.fetchall():
                raise ConflictError(
                    f"{vote.voter} voted on {vote.interaction_id!r} concurrently; the first "
                    "vote stands",
                    run_id=vote.run_id,
                    interaction_id=vote.interaction_id,
                    reason="already_voted",
                )

        return guard


class SqlVotes(ThreadedStore[ConnT], VotesBase):
    """The :class:`~interactions.store.VoteStore` over a SQL backend (see the module
    docstring). The store sets ``_rows``, ``_vote_sql``, ``_channel`` and ``_written``."""

    _rows: Rows[ConnT]
    _vote_sql: VoteSql
    _channel: str
    _written: LastWritten

    async def _cast_vote(
        self,
        run_id: str,
        interaction_id: str,
        vote: NewVote,
        required: int,
        now: datetime | None,
    ) -> tuple[InteractionRecord, VoteOutcome]:
        rows, sql = self._rows, self._vote_sql

        def tx(conn: ConnT) -> tuple[InteractionRecord, VoteOutcome, bool]:
            locked = rows.lock_run(conn, run_id, checkpoint=False)
            found = rows.find_interactions(conn, run_id, [interaction_id])
            votes = sql.find(conn, run_id, interaction_id)
            run = locked()  # no run: UnknownRunError, nothing written
            at = now or self._clock()
            stored = next(iter(found()), None)
            plan = plan_vote(run, interaction_id, stored, votes(), vote, required=required, now=at)
            if plan.vote is None:
                return plan.record, plan.outcome, False
            guards = [sql.insert(conn, plan.vote)]
            if plan.answered is not None:
                guards.append(rows.store_answer(conn, plan.answered))
            if plan.run is not None:
                guards.append(rows.update_run_row(conn, plan.run, checkpoint_json=None))
            for guard in guards:
                guard()
            rows.append_events(conn, run_id, plan.events, at, channel=self._channel)
            return plan.record, plan.outcome, plan.run is not None

        record, outcome, moved = await self._write(tx)
        if moved:
            self._written.forget(run_id)  # the run's version moved on: read it again
        elif outcome.counted and outcome.settled:
            self._written.answered(record)
        return record, outcome

    async def _list_votes(self, run_id: str, interaction_id: str) -> list[VoteRecord]:
        sql = self._vote_sql
        return await self._read(lambda conn: sql.select(conn, run_id, interaction_id))
