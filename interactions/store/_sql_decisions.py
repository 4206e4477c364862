"""Remembered decisions over a SQL backend: the statements (:class:`DecisionSql`, written once
over a :class:`~._sql_codec.SqlCodec` for SQLite and PostgreSQL) and the store's methods
(:class:`SqlDecisions`), each write one transaction with its audit event.

A write locks the run its event is appended to (PostgreSQL: the run's row, ``FOR UPDATE``;
SQLite: ``BEGIN IMMEDIATE`` holds the file), so racing writers of one run's decisions
serialize: the second reads what the first committed and writes nothing. A revocation finds
the decision's run in the statement that locks it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from interactions._errors import ConflictError
from interactions.store._decision_base import DecisionsBase
from interactions.store._decisions import (
    DecisionRecord,
    DecisionsQuery,
    NewDecision,
    plan_remember,
    plan_revoke,
)
from interactions.store._records import read_row, read_rows, trusted
from interactions.store._refusals import decision_id_taken
from interactions.store._rows import Later, Rows
from interactions.store._sql_codec import SqlCodec
from interactions.store._threaded import ConnT, ThreadedStore

__all__ = ["DECISION", "DecisionSql", "SqlDecisions"]

DECISION = (
    "id, run_id, interaction_id, thread_id, tool, action, scope, args, decided_by, reason, "
    "created_at, revoked_at, revoked_by"
)


class DecisionSql:
    """The statements of decisions in the dialect of ``codec`` (a backend's rows).
    ``lock_runs``: a revocation locks the decision's run row (PostgreSQL; SQLite's writer holds
    the file already)."""

    def __init__(self, codec: SqlCodec, *, lock_runs: bool) -> None:
        self._codec = codec
        self._lock_runs = lock_runs
        m, j = codec.mark, f"{codec.mark}{codec.json_cast}"
        marks = ", ".join(j if name == "args" else m for name in DECISION.split(", "))
        self._insert = (
            f"INSERT INTO decisions ({DECISION}) VALUES ({marks}) "
            "ON CONFLICT DO NOTHING RETURNING id"
        )
        self._select = f"SELECT {DECISION} FROM decisions"
        self._revoke = (
            f"UPDATE decisions SET revoked_at = {m}, revoked_by = {m} "
            f"WHERE id = {m} AND revoked_at IS NULL RETURNING id"
        )
        self._lock_run_of = (
            f"SELECT 1 AS locked FROM runs WHERE id = (SELECT run_id FROM decisions WHERE id = {m})"
            " FOR UPDATE"
        )
        self._for = (
            f"{self._select} WHERE revoked_at IS NULL AND ((scope = 'run' AND run_id = {m}) "
            f"OR (scope = 'thread' AND thread_id = {m})) ORDER BY created_at, {codec.tie}"
        )

    # -- rows to records ----------------------------------------------------------------------

    def read(self, row: Any) -> DecisionRecord:
        """The decision a row of :data:`DECISION` holds."""
        fields = self._codec._fields(row, ("created_at", "revoked_at"), ("args",))
        return trusted(DecisionRecord, **fields)

    def _all(self, rows: Any) -> list[DecisionRecord]:
        return read_rows(self.read, rows, "decision", lambda row: str(row["id"]))

    def _one(self, row: Any | None) -> DecisionRecord | None:
        if row is None:
            return None
        record: DecisionRecord = read_row(self.read, row, "decision", str(row["id"]))
        return record

    # -- reads --------------------------------------------------------------------------------

    def select_for(self, conn: Any, run_id: str, thread_id: str) -> list[DecisionRecord]:
        """The active decisions applying in run ``run_id`` of thread ``thread_id``, oldest
        first: one statement."""
        key = self._codec.key
        return self._all(conn.execute(self._for, [key(run_id), key(thread_id)]))

    def select(self, conn: Any, query: DecisionsQuery) -> list[DecisionRecord]:
        """The decisions ``query`` asks for, newest first."""
        m, key = self._codec.mark, self._codec.key
        clauses: list[str] = []
        params: list[Any] = []
        for column, value in (("run_id", query.run_id), ("thread_id", query.thread_id)):
            if value is not None:
                if key(value) is None:
                    return []  # no decision holds such an id
                clauses.append(f"{column} = {m}")
                params.append(key(value))
        if not query.include_revoked:
            clauses.append("revoked_at IS NULL")
        where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
        tie = self._codec.tie
        sql = f"{self._select}{where} ORDER BY created_at DESC, {tie} DESC LIMIT {query.limit:d}"
        return self._all(conn.execute(sql, params))

    # -- a write's statements -----------------------------------------------------------------

    def find_pair(
        self, conn: Any, run_id: str, interaction_id: str
    ) -> Later[DecisionRecord | None]:
        """The decision of that approval, if any (sent now, read when the Later is called)."""
        key = self._codec.key
        sql = f"{self._select} WHERE run_id = {self._codec.mark} AND interaction_id = "
        cursor = conn.execute(f"{sql}{self._codec.mark}", [key(run_id), key(interaction_id)])
        return lambda: self._one(cursor.fetchone())

    def lock_and_find(self, conn: Any, decision_id: str) -> Later[DecisionRecord | None]:
        """Lock the run of decision ``decision_id`` (where the backend locks runs), then read
        the decision as it is once the lock is held."""
        key = self._codec.key(decision_id)
        locked = conn.execute(self._lock_run_of, [key]) if self._lock_runs else None
        cursor = conn.execute(f"{self._select} WHERE id = {self._codec.mark}", [key])

        def read() -> DecisionRecord | None:
            if locked is not None:
                locked.fetchall()
            return self._one(cursor.fetchone())

        return read

    def insert(self, conn: Any, record: DecisionRecord, args_json: str | None) -> Later[None]:
        """Insert ``record`` (``args_json``: its args' canonical text); the Later raises
        ``ConflictError`` if nothing was inserted: under the run's lock only an id held by
        another approval's decision can cause that."""
        time_in = self._codec.time_in
        values = (
            record.id,
            record.run_id,
            record.interaction_id,
            record.thread_id,
            record.tool,
            record.action,
            record.scope,
            args_json,
            record.decided_by,
            record.reason,
            time_in(record.created_at),
            time_in(record.revoked_at),
            record.revoked_by,
        )
        cursor = conn.execute(self._insert, values)

        def guard() -> None:
            if not cursor.fetchall():
                raise decision_id_taken(record.id)

        return guard

    def revoke(self, conn: Any, record: DecisionRecord) -> Later[None]:
        """Mark ``record`` revoked as it says; the Later raises ``ConflictError`` if it was
        revoked meanwhile (impossible under the run's lock; refused rather than overwritten)."""
        params = (self._codec.time_in(record.revoked_at), record.revoked_by, record.id)
        cursor = conn.execute(self._revoke, params)

        def guard() -> None:
            if not cursor.fetchall():
                raise ConflictError(
                    f"decision {record.id!r} was revoked concurrently; it stays revoked",
                    run_id=record.run_id,
                    reason="already_revoked",
                )

        return guard


class SqlDecisions(ThreadedStore[ConnT], DecisionsBase):
    """The :class:`~interactions.store.DecisionStore` over a SQL backend (see the module
    docstring). The store sets ``_rows``, ``_decision_sql`` and ``_channel``."""

    _rows: Rows[ConnT]
    _decision_sql: DecisionSql
    _channel: str

    async def _remember_decision(
        self, new: NewDecision, args_json: str | None, now: datetime | None
    ) -> tuple[DecisionRecord, bool]:
        rows, sql = self._rows, self._decision_sql

        def tx(conn: ConnT) -> tuple[DecisionRecord, bool]:
            locked = rows.lock_run(conn, new.run_id, checkpoint=False)
            found = sql.find_pair(conn, new.run_id, new.interaction_id)
            locked()  # no run: UnknownRunError, nothing written
            at = now or self._clock()
            record, event = plan_remember(new, found(), at)
            if event is None:
                return record, False
            sql.insert(conn, record, args_json)()
            rows.append_events(conn, new.run_id, [event], at, channel=self._channel)
            return record, True

        return await self._write(tx)

    async def _decisions_for(self, run_id: str, thread_id: str) -> list[DecisionRecord]:
        sql = self._decision_sql
        return await self._read(lambda conn: sql.select_for(conn, run_id, thread_id))

    async def _list_decisions(self, query: DecisionsQuery) -> list[DecisionRecord]:
        sql = self._decision_sql
        return await self._read(lambda conn: sql.select(conn, query))

    async def _revoke_decision(
        self, decision_id: str, revoked_by: str | None, now: datetime | None
    ) -> tuple[DecisionRecord, bool]:
        rows, sql = self._rows, self._decision_sql

        def tx(conn: ConnT) -> tuple[DecisionRecord, bool]:
            stored = sql.lock_and_find(conn, decision_id)()
            at = now or self._clock()
            record, event = plan_revoke(decision_id, stored, revoked_by, at)
            if event is None:
                return record, False
            sql.revoke(conn, record)()
            rows.append_events(conn, record.run_id, [event], at, channel=self._channel)
            return record, True

        return await self._write(tx)
