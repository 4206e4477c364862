"""Reminders and escalations over a SQL backend: the statements (:class:`ReminderSql`, written
once over a :class:`~._sql_codec.SqlCodec` for SQLite and PostgreSQL) and the store's method
(:class:`SqlReminders`), each notice one transaction with its event.

A notice locks its run first (PostgreSQL: the run's row, ``FOR UPDATE``; SQLite: ``BEGIN
IMMEDIATE`` holds the file), then reads the interaction and the last notice of its kind, so
racing sweeps of one run serialize: each decides on what the ones before it committed, and a
notice is written once. The table's primary key ``(run_id, interaction_id, kind)`` is the
second line: an insert that finds the row taken writes nothing.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from interactions.store._records import EventRecord
from interactions.store._reminder_base import RemindersBase
from interactions.store._reminders import plan_notice
from interactions.store._rows import Rows
from interactions.store._rules import Event
from interactions.store._sql_codec import SqlCodec
from interactions.store._threaded import ConnT, ThreadedStore

__all__ = ["ReminderSql", "SqlReminders"]


class ReminderSql:
    """The statements of notices in the dialect of ``codec``; ``lock_rows``: read ``FOR
    UPDATE`` (PostgreSQL; SQLite's writer holds the whole file)."""

    def __init__(self, codec: SqlCodec) -> None:
        self._codec = codec
        m = codec.mark
        self._select = (
            f"SELECT number FROM notices WHERE run_id = {m} AND interaction_id = {m} AND "
            f"kind = {m}"
        )
        self._insert = (
            f"INSERT INTO notices (run_id, interaction_id, kind, number, at) VALUES ({m}, {m}, "
            f"{m}, {m}, {m}) ON CONFLICT DO NOTHING RETURNING number"
        )
        self._update = (
            f"UPDATE notices SET number = {m}, at = {m} WHERE run_id = {m} AND interaction_id = "
            f"{m} AND kind = {m} AND number < {m} RETURNING number"
        )

    def last(self, conn: Any, run_id: str, interaction_id: str, kind: str) -> int:
        """The number of the last notice of ``kind`` stored (``0``: none)."""
        row = conn.execute(self._select, [run_id, interaction_id, kind]).fetchone()
        return 0 if row is None else int(row["number"])

    def store(
        self, conn: Any, run_id: str, interaction_id: str, kind: str, number: int, first: bool,
        at: datetime,
    ) -> bool:
        """Store notice ``number`` (``first``: no row yet); whether a row was written."""
        when = self._codec.time_in(at)
        if first:
            values: tuple[Any, ...] = (run_id, interaction_id, kind, number, when)
            return bool(conn.execute(self._insert, values).fetchall())
        values = (number, when, run_id, interaction_id, kind, number)
        return bool(conn.execute(self._update, values).fetchall())


class SqlReminders(ThreadedStore[ConnT], RemindersBase):
    """The :class:`~interactions.store.ReminderStore` over a SQL backend (see the module
    docstring). The store sets ``_rows``, ``_reminder_sql`` and ``_channel``."""

    _rows: Rows[ConnT]
    _reminder_sql: ReminderSql
    _channel: str

    async def _record_reminder(
        self,
        run_id: str,
        interaction_id: str,
        kind: str,
        number: int,
        event: Event,
        now: datetime | None,
    ) -> EventRecord | None:
        rows, sql = self._rows, self._reminder_sql

        def tx(conn: ConnT) -> EventRecord | None:
            locked = rows.lock_run(conn, run_id, checkpoint=False)
            found = rows.find_interactions(conn, run_id, [interaction_id])
            run = locked()  # no run: UnknownRunError, nothing written
            at = now or self._clock()
            stored = next(iter(found()), None)
            last = sql.last(conn, run_id, interaction_id, kind)
            if not plan_notice(run, interaction_id, stored, last, number, at):
                return None
            if not sql.store(conn, run_id, interaction_id, kind, number, last == 0, at):
                return None  # a racing writer stored it first (the key holds)
            [written] = rows.append_events(conn, run_id, [event], at, channel=self._channel)()
            return written

        return await self._write(tx)
