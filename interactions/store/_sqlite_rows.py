"""The rows of :class:`SQLiteStore`: SQLite's dialect of :class:`~._sql_rows.SqlRows`, and the
statements of a write as SQLite runs them.

JSON columns hold :func:`canonical_json` text; timestamps are integer microseconds since the
epoch (UTC), so their order is time order. Events name their run by its integer key ``pos`` and
their cursor is the table's ``INTEGER PRIMARY KEY``.

In a write (:meth:`SQLiteRows.lock_run` on), nothing is gained by sending early (there is no
server): a statement that writes runs at once and its :data:`~._rows.Later` returns what it
already has, and a guard that fails raises at once; a read runs when its Later is called
(``BEGIN IMMEDIATE`` holds the file, so nothing changes in between but the write's own
statements, sent after its reads).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from interactions.store._records import EventRecord, InteractionRecord, RunRecord, canonical_json
from interactions.store._refusals import answered_meanwhile, run_moved, unknown_run
from interactions.store._rows import Later, Stale
from interactions.store._rules import Event
from interactions.store._sql_codec import appended
from interactions.store._sql_consumers import ConsumerSql
from interactions.store._sql_decisions import DecisionSql
from interactions.store._sql_reminders import ReminderSql
from interactions.store._sql_rows import SqlRows
from interactions.store._sql_votes import VoteSql

__all__ = ["CONSUMERS", "DECISIONS", "REMINDERS", "ROWS", "VOTES", "SQLiteRows"]

Conn = sqlite3.Connection
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _done() -> None:
    """The Later of a write that has nothing left to check."""


class SQLiteRows(SqlRows):
    """The statements :class:`~interactions.store.SQLiteStore` runs (see the module docstring)."""

    mark = "?"
    json_cast = ""
    tie = "rowid"
    events_from = "events JOIN runs ON runs.pos = events.run"
    event_columns = (
        "events.cursor, runs.id AS run_id, events.seq, events.type, events.data, events.at"
    )
    """The cursor is the rowid: the store-wide order (writers are serialized by ``BEGIN
    IMMEDIATE`` and rows are never deleted, so cursor order is commit order)."""
    event_run = "runs.id"

    def time_in(self, value: datetime | None) -> int | None:
        return None if value is None else (value - _EPOCH) // timedelta(microseconds=1)

    def time_out(self, value: Any) -> datetime:
        return _EPOCH + timedelta(microseconds=value)

    def json_out(self, value: Any) -> Any:
        return json.loads(value)

    def key(self, text: str) -> str:
        return text  # SQLite compares any text, a NUL in it too

    def get_run_with_interactions(
        self, conn: Conn, run_id: str
    ) -> tuple[RunRecord, list[InteractionRecord]]:
        """The run and all its interactions in request order, read in one transaction of
        their own: in WAL mode a read transaction sees the file as its first read found it, so
        no writer's commit falls between the two. Raises ``UnknownRunError``."""
        conn.execute("BEGIN")
        try:
            run = self.get_run(conn, run_id)
            return run, self.find_interactions(conn, run_id, None)()
        finally:
            conn.execute("ROLLBACK")  # a read: nothing to keep

    # -- a write's statements -----------------------------------------------------------------

    def lock_run(self, conn: Conn, run_id: str, *, checkpoint: bool) -> Later[RunRecord]:
        """The run, read when the Later is called (as :meth:`get_run`). Nothing to lock: a write
        runs in ``BEGIN IMMEDIATE``, which already holds the file's write lock."""
        return lambda: self.get_run(conn, run_id, checkpoint=checkpoint)

    def find_interactions(
        self, conn: Conn, run_id: str, ids: Sequence[str] | None
    ) -> Later[list[InteractionRecord]]:
        """The run's interactions among ``ids`` (``None``: all of them), in request order, read
        when the Later is called."""

        def read() -> list[InteractionRecord]:
            where = "" if ids is None else f" AND id IN ({', '.join('?' for _ in ids)})"
            sql = f"{self.interactions_sql} WHERE run_id = ?{where} {self.request_order}"
            return self.interactions(conn.execute(sql, (run_id, *(ids or ()))))

        return read

    def insert_run(self, conn: Conn, run: RunRecord, checkpoint_json: str) -> Later[bool]:
        """Insert a new run row (``checkpoint_json``: its checkpoint's canonical text); the Later
        is ``False`` (nothing written) if the id is taken. Under ``BEGIN IMMEDIATE`` no other
        writer comes between."""
        inserted = conn.execute(self.insert_run_sql, self.run_values(run, checkpoint_json))
        taken = inserted.rowcount != 1
        return lambda: not taken

    def update_run_row(
        self, conn: Conn, run: RunRecord, *, checkpoint_json: str | None, strict: bool = False
    ) -> Later[None]:
        """Compare-and-set the run row from ``run.version - 1`` to ``run`` (and its checkpoint's
        canonical text, when it changed). Under ``BEGIN IMMEDIATE``, held since the run was
        read, the guard cannot fail; if it ever did: ``ConflictError`` at once. ``strict`` (a
        write decided without reading the run): ``Stale`` at once instead."""
        cursor = conn.execute(self.update_run_sql, self.update_values(run, checkpoint_json))
        if cursor.rowcount != 1:
            if strict:
                raise Stale
            raise run_moved(run.id)
        return _done

    def store_answer(
        self, conn: Conn, record: InteractionRecord, *, strict: bool = False
    ) -> Later[None]:
        """Write ``record``'s first answer; the guard never lets one overwrite another
        (``ConflictError`` at once if the row had an answer; ``Stale`` when ``strict``: a write
        decided without reading the interaction)."""
        cursor = conn.execute(self.store_answer_sql, self.answer_values(record))
        if cursor.rowcount != 1:  # impossible under BEGIN IMMEDIATE; refuse rather than overwrite
            if strict:
                raise Stale
            raise answered_meanwhile(record.run_id, record.id)
        return _done

    def append_events(
        self, conn: Conn, run_id: str, events: Sequence[Event], at: datetime, *, channel: str = ""
    ) -> Later[list[EventRecord]]:
        """Append ``events`` after the run's last seq, stamped ``at``; the Later returns their
        records. ``UnknownRunError`` at once if there is no run.

        Each event is one ``INSERT ... SELECT`` that numbers it: the run's next seq, the store's
        next cursor (the writer holds the lock, so both are free and gapless); with no run it
        inserts nothing. ``channel`` is ignored: SQLite has no notifications (waiters of other
        processes poll).
        """
        if not events:
            if conn.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone() is None:
                raise unknown_run(run_id)
            return lambda: []
        stamp = self.time_in(at)
        added = conn.executemany(
            _APPEND_EVENT, [(type_, canonical_json(data), stamp, run_id) for type_, data in events]
        ).rowcount
        if added != len(events):
            raise unknown_run(run_id)

        def records() -> list[EventRecord]:  # built only for a caller that reads them
            last_cursor, last_seq = conn.execute(_LAST_APPENDED).fetchone()
            n = len(events)  # the last n cursors and seqs are the ones just appended
            numbers = [(last_seq - n + i, last_cursor - n + i) for i in range(1, n + 1)]
            return appended(run_id, numbers, events, at)

        return records


_APPEND_EVENT = """INSERT INTO events (cursor, run, seq, type, data, at)
    SELECT (SELECT COALESCE(MAX(cursor), 0) FROM events) + 1, pos,
           COALESCE((SELECT MAX(seq) FROM events WHERE run = pos), 0) + 1, ?, ?, ?
    FROM runs WHERE id = ?"""
_LAST_APPENDED = "SELECT cursor, seq FROM events WHERE cursor = last_insert_rowid()"
"""The last event this connection appended (read in the appending transaction)."""

ROWS = SQLiteRows()
"""The rows :class:`~interactions.store.SQLiteStore` reads and writes."""

DECISIONS = DecisionSql(ROWS, lock_runs=False)
"""The statements of the decisions it keeps."""

VOTES = VoteSql(ROWS)
"""The statements of the votes it keeps."""

CONSUMERS = ConsumerSql(ROWS, lock_rows=False)
"""The statements of the consumers of its feed."""

REMINDERS = ReminderSql(ROWS)
"""The statements of reminders and escalations in this dialect."""
