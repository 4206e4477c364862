"""The rows of :class:`PostgresStore`: PostgreSQL's dialect of :class:`~._sql_rows.SqlRows`,
and the statements of a write as PostgreSQL runs them.

Connections give ``dict_row`` rows in a UTC session; reads run as autocommit statements. JSON
columns are ``json`` holding :func:`canonical_json` text (sent as text, cast to ``json``);
timestamps are ``timestamptz``. ``pos`` (an identity column) breaks ties of equal timestamps in
insert order. Writers of a run first lock its row (:meth:`PostgresRows.lock_run`), which
serializes them per run.

A write's transaction is pipelined: its statements (:meth:`PostgresRows.lock_run` on) are sent
at once and return a :data:`~._rows.Later` that reads the result. The first Later called waits
for every result sent so far (psycopg flushes the pipeline and reads them all); the others are
read from memory.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from interactions.store._records import EventRecord, InteractionRecord, RunRecord, canonical_json
from interactions.store._refusals import answered_meanwhile, run_moved
from interactions.store._rows import Later
from interactions.store._rules import Event
from interactions.store._sql_codec import INTERACTION, RUN, appended
from interactions.store._sql_consumers import ConsumerSql
from interactions.store._sql_decisions import DecisionSql
from interactions.store._sql_reminders import ReminderSql
from interactions.store._sql_rows import SqlRows
from interactions.store._sql_votes import VoteSql

if TYPE_CHECKING:  # psycopg is imported only by whoever opens a connection
    from interactions.store._postgres_schema import Conn

__all__ = ["CONSUMERS", "DECISIONS", "REMINDERS", "ROWS", "VOTES", "PostgresRows"]


def _strict(change: str) -> str:
    """``change`` (an insert or update of at most one row) as a statement that fails when it
    changed no row, aborting the transaction: ``1 / count(*)`` divides by zero. Nothing sent
    after it is applied and the ``COMMIT`` rolls back, with no wait for the server in between;
    :class:`~interactions.store.PostgresStore` raises ``Stale`` for it. No other statement of
    the store divides."""
    return f"WITH changed AS ({change} RETURNING 1) SELECT 1 / count(*) AS changed FROM changed"


class PostgresRows(SqlRows):
    """The statements :class:`~interactions.store.PostgresStore` runs (see the module
    docstring)."""

    mark = "%s"
    json_cast = "::json"
    tie = "pos"
    events_from = "events"
    event_columns = "events.run_id, events.seq, events.cursor, events.type, events.data, events.at"
    event_run = "events.run_id"

    def time_in(self, value: datetime | None) -> datetime | None:
        return value

    def time_out(self, value: Any) -> Any:
        return value  # timestamptz is read as an aware datetime

    def json_out(self, value: Any) -> Any:
        return value  # json is parsed by the driver

    def key(self, text: str) -> str | None:
        """``text``, or ``NULL`` for text holding a NUL (which ``text`` cannot store, so no row
        holds it): the lookup then finds nothing, as on the other backends, instead of
        failing."""
        return None if "\x00" in text else text

    def get_run_with_interactions(
        self, conn: Conn, run_id: str
    ) -> tuple[RunRecord, list[InteractionRecord]]:
        """The run and all its interactions in request order, in one statement: one wait for
        the server, and one snapshot of the database, so no commit falls between the two. The
        interactions come as one JSON array of their rows (the run's row, checkpoint and all,
        is sent once). Raises ``UnknownRunError``."""
        row = conn.execute(_RUN_WITH_INTERACTIONS, [self.key(run_id)]).fetchone()
        found = [] if row is None else row.pop("interactions")
        return self.one_run(row, run_id), self.interactions(found)

    # -- a write's statements -----------------------------------------------------------------

    def lock_run(self, conn: Conn, run_id: str, *, checkpoint: bool) -> Later[RunRecord]:
        """Lock the run's row until commit (serializing the run's writers); the Later returns
        the run (``checkpoint=False``: without its checkpoint, read as ``{}``) or raises
        ``UnknownRunError``."""
        columns = RUN if checkpoint else self.run_head
        sql = f"SELECT {columns} FROM runs WHERE id = %s FOR UPDATE"
        cursor = conn.execute(sql, [self.key(run_id)])
        return lambda: self.one_run(cursor.fetchone(), run_id)

    def find_interactions(
        self, conn: Conn, run_id: str, ids: Sequence[str] | None
    ) -> Later[list[InteractionRecord]]:
        """The run's interactions among ``ids`` (``None``: all of them), in request order."""
        where, params = (
            ("", [self.key(run_id)])
            if ids is None
            else (" AND id = ANY(%s)", [self.key(run_id), [self.key(i) for i in ids]])
        )
        sql = f"{self.interactions_sql} WHERE run_id = %s{where} {self.request_order}"
        cursor = conn.execute(sql, params)
        return lambda: self.interactions(cursor)

    def insert_run(self, conn: Conn, run: RunRecord, checkpoint_json: str) -> Later[bool]:
        """Insert a new run row (``checkpoint_json``: its checkpoint's canonical text); if the
        id is taken, even concurrently, nothing is written and the transaction fails (see
        :func:`_strict`), so the Later, read or not, never waits for the server: it is
        ``True``."""
        conn.execute(_strict(self.insert_run_sql), self.run_values(run, checkpoint_json))
        return lambda: True

    def update_run_row(
        self, conn: Conn, run: RunRecord, *, checkpoint_json: str | None, strict: bool = False
    ) -> Later[None]:
        """Compare-and-set the run row from ``run.version - 1`` to ``run`` (and its checkpoint's
        canonical text, when it changed).

        A caller holding the row lock cannot see the guard fail; if it ever did, the Later
        raises ``ConflictError`` rather than let the caller commit over another writer.
        ``strict``: the guard fails inside the server instead (see :func:`_strict`), for a
        write decided without the lock.
        """
        sql = self.update_run_sql
        sql = _strict(sql) if strict else f"{sql} RETURNING 1 AS updated"
        cursor = conn.execute(sql, self.update_values(run, checkpoint_json))

        def guard() -> None:
            if cursor.fetchone() is None:
                raise run_moved(run.id)

        return guard

    def store_answer(
        self, conn: Conn, record: InteractionRecord, *, strict: bool = False
    ) -> Later[None]:
        """Write ``record``'s first answer; the guard never lets one overwrite another (the
        Later raises ``ConflictError`` if the row had an answer; ``strict``: the guard fails
        inside the server instead, see :func:`_strict`)."""
        sql = self.store_answer_sql
        sql = _strict(sql) if strict else f"{sql} RETURNING 1 AS answered"
        cursor = conn.execute(sql, self.answer_values(record))

        def guard() -> None:
            if cursor.fetchone() is None:  # impossible under the run lock; refuse, never overwrite
                raise answered_meanwhile(record.run_id, record.id)

        return guard

    def append_events(
        self, conn: Conn, run_id: str, events: Sequence[Event], at: datetime, *, channel: str
    ) -> Later[list[EventRecord]]:
        """Append ``events`` after the run's last seq, stamped ``at``, and NOTIFY ``channel``.

        One statement numbers and inserts them: seqs follow the run's last (the caller holds
        the run's row lock, or created the run in this transaction, so they are gapless);
        cursors come from the ``feed`` row, locked until commit, so they are handed out in
        commit order (send this last, so the lock is held for little more than the commit).
        With no run it inserts nothing (so a :meth:`lock_run` sent before it reports the
        unknown run, not a foreign key). The same statement notifies (payload: the run id; once
        per row, which PostgreSQL folds into one notification per transaction); the
        notification is sent at commit.
        """
        if not events:
            return lambda: []
        cursor = conn.execute(
            _APPEND_EVENTS,
            {
                "n": len(events),
                "run": self.key(run_id),  # no such run: nothing is inserted, and lock_run says so
                "at": at,
                "events": _pairs.encode([[t, canonical_json(d)] for t, d in events]),
                "channel": channel,
            },
        )

        def records() -> list[EventRecord]:
            numbers = sorted((int(row["seq"]), int(row["cursor"])) for row in cursor.fetchall())
            return appended(run_id, numbers, events, at)

        return records


_pairs = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
"""The events of an append as one JSON text, ``[[type, data's canonical text], ...]``: a text
array would be escaped element by element on the way out (a regular expression each), and the
data go as strings so they keep their canonical text (``\\u0000`` and all) into ``json``."""

_APPEND_EVENTS = """WITH fed AS (UPDATE feed SET last = last + %(n)s RETURNING last),
        prior AS (SELECT COALESCE(MAX(seq), 0) AS last FROM events WHERE run_id = %(run)s),
        added AS (
            INSERT INTO events (run_id, seq, cursor, type, data, at)
            SELECT %(run)s, prior.last + e.i, fed.last - %(n)s + e.i, e.pair ->> 0,
                   (e.pair ->> 1)::json, %(at)s
            FROM fed, prior,
                 json_array_elements(%(events)s::json) WITH ORDINALITY AS e (pair, i)
            WHERE EXISTS (SELECT FROM runs WHERE id = %(run)s)
            RETURNING seq, cursor)
   SELECT seq, cursor, pg_notify(%(channel)s, %(run)s)::text AS notified FROM added"""

_RUN_WITH_INTERACTIONS = f"""SELECT {RUN}, (
        SELECT COALESCE(json_agg(json_build_object({
    ", ".join(f"'{name}', i.{name}" for name in INTERACTION.split(", "))
}) ORDER BY i.requested_at, i.pos), '[]')
        FROM interactions AS i WHERE i.run_id = runs.id) AS interactions
    FROM runs WHERE id = %s"""
"""A run's row with its interactions' rows as a JSON array (timestamps as ISO 8601 text, JSON
columns as they are kept), in request order."""

ROWS = PostgresRows()
"""The rows :class:`~interactions.store.PostgresStore` reads and writes."""

DECISIONS = DecisionSql(ROWS, lock_runs=True)
"""The statements of the decisions it keeps."""

VOTES = VoteSql(ROWS)
"""The statements of the votes it keeps."""

CONSUMERS = ConsumerSql(ROWS, lock_rows=True)
"""The statements of the consumers of its feed."""

REMINDERS = ReminderSql(ROWS)
"""The statements of reminders and escalations in this dialect."""
