"""The statements both SQL backends run alike: written once, over :class:`~._sql_codec.SqlCodec`.

``_sqlite_rows`` and ``_postgres_rows`` subclass :class:`SqlRows` with their dialect and the
rest, which differs for a reason: how a write's statements travel and are guarded (run at once
under SQLite's file lock, or pipelined under PostgreSQL's row locks), and how events are
numbered (SQLite's writer holds the file; PostgreSQL hands out cursors from a locked row).

Every method takes an open connection and runs inside the caller's transaction (or, for reads,
the driver's implicit one); none commits.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from interactions.store._queries import InteractionsQuery, RunsQuery, runs_query
from interactions.store._records import (
    EventRecord,
    InteractionRecord,
    RunRecord,
    read_row,
    read_rows,
)
from interactions.store._sql_codec import RUN, SqlCodec

__all__ = ["Executes", "SqlRows"]


class Executes(Protocol):
    """What the shared statements need of a connection (``sqlite3`` and psycopg both have it):
    run a statement and return a cursor whose rows read by column name."""

    def execute(self, query: str, params: Sequence[Any] = ..., /) -> Any: ...


class SqlRows(SqlCodec):
    """The reads (and the insert of an interaction) both SQL backends run alike."""

    def get_run(self, conn: Executes, run_id: str, *, checkpoint: bool = True) -> RunRecord:
        """Return the run (``checkpoint=False``: without its checkpoint, read as ``{}``); raise
        ``UnknownRunError`` if there is none."""
        columns = RUN if checkpoint else self.run_head
        sql = f"SELECT {columns} FROM runs WHERE id = {self.mark}"
        return self.one_run(conn.execute(sql, [self.key(run_id)]).fetchone(), run_id)

    def select_runs(self, conn: Executes, query: RunsQuery) -> list[RunRecord]:
        """The runs ``query`` asks for (see :func:`~interactions.store._queries.runs_query`).
        Unreadable rows are skipped with a warning."""
        if any(text is not None and self.key(text) is None for text in query.texts()):
            return []  # no run has such a thread, id, kind, ref or answerer
        sql, params = runs_query(RUN, self.mark, query)
        rows = conn.execute(sql, params)
        return read_rows(self.read_run, rows, "run", lambda row: str(row["id"]))

    def find_interaction(
        self, conn: Executes, run_id: str, interaction_id: str
    ) -> InteractionRecord | None:
        """Return the run's interaction with that id, or ``None``."""
        sql = f"{self.interactions_sql} WHERE run_id = {self.mark} AND id = {self.mark}"
        row = conn.execute(sql, [self.key(run_id), self.key(interaction_id)]).fetchone()
        if row is None:
            return None
        record: InteractionRecord = read_row(self.read_interaction, row, "interaction", row["id"])
        return record

    def select_interactions(
        self, conn: Executes, run_id: str | None, pending: bool | None
    ) -> list[InteractionRecord]:
        """Interactions in request order, maybe of one run, maybe only (un)answered ones."""
        clauses, params = [], []
        if run_id is not None:
            clauses.append(f"run_id = {self.mark}")
            params.append(self.key(run_id))
        if pending is not None:
            clauses.append(f"answer_status IS {'' if pending else 'NOT '}NULL")
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        return self.interactions(
            conn.execute(f"{self.interactions_sql} {where} {self.request_order}", params)
        )

    def page_interactions(
        self, conn: Executes, query: InteractionsQuery
    ) -> list[InteractionRecord]:
        """The page of every run's interactions ``query`` asks for, in request order (ties
        by :attr:`tie`). Unreadable rows are skipped with a warning."""
        m, clauses, params = self.mark, [], []
        if query.since is not None:
            clauses.append(f"requested_at >= {m}")
            params.append(self.time_in(query.since))
        if query.until is not None:
            clauses.append(f"requested_at < {m}")
            params.append(self.time_in(query.until))
        if query.after is not None:
            keys = [self.key(text) for text in query.after]
            if None in keys:
                return []  # no interaction has such an id
            start = (
                f"(SELECT requested_at, {self.tie} FROM interactions "
                f"WHERE run_id = {m} AND id = {m})"
            )
            clauses.append(f"(requested_at, {self.tie}) > {start}")
            params += keys
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        sql = f"{self.interactions_sql} {where} {self.request_order} LIMIT {query.limit:d}"
        return self.interactions(conn.execute(sql, params))

    def insert_interaction(self, conn: Executes, record: InteractionRecord) -> None:
        """Insert a new interaction row, with its answer if it already has one."""
        conn.execute(self.insert_interaction_sql, self.interaction_values(record))

    def select_events(self, conn: Executes, run_id: str, after_seq: int) -> list[EventRecord]:
        """The run's events with ``seq > after_seq``, in order (``UnknownRunError`` if no run)."""
        sql = (
            f"{self.events_sql} WHERE {self.event_run} = {self.mark} AND events.seq > {self.mark} "
            "ORDER BY events.seq"
        )
        found = [self.read_event(row) for row in conn.execute(sql, [self.key(run_id), after_seq])]
        if not found:
            self.get_run(conn, run_id, checkpoint=False)  # an unknown run is refused, not empty
        return found

    def select_feed(self, conn: Executes, after: int, limit: int) -> list[EventRecord]:
        """Up to ``limit`` events of every run with ``cursor > after``, in cursor order."""
        sql = (
            f"{self.events_sql} WHERE events.cursor > {self.mark} "
            f"ORDER BY events.cursor LIMIT {limit:d}"
        )
        return [self.read_event(row) for row in conn.execute(sql, [after])]

    def last_cursor(self, conn: Executes) -> int:
        """The cursor of the store's last committed event (0 when there is none)."""
        row = conn.execute("SELECT COALESCE(MAX(cursor), 0) AS last FROM events", []).fetchone()
        return int(row["last"])
