"""Records to SQLite rows and back, and the statements :class:`SQLiteStore` runs.

Every function takes an open connection and runs inside the caller's transaction (or, for
reads, SQLite's implicit one); none commits. JSON columns hold :func:`canonical_json` text;
timestamps are fixed-width UTC ISO text, so text order is time order.

In a write (:func:`lock_run` on), nothing is gained by sending early (there is no server): a
statement that writes runs at once and its :data:`~interactions.store._threaded.Later` returns
what it already has; a read runs when its Later is called (``BEGIN IMMEDIATE`` holds the file,
so nothing changes in between but the write's own statements, sent after its reads).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from interactions.store._queries import runs_query
from interactions.store._records import (
    TRUSTED,
    EventRecord,
    InteractionAnswer,
    InteractionRecord,
    RunRecord,
    canonical_json,
    read_row,
    read_rows,
    trusted,
)
from interactions.store._refusals import answered_meanwhile, run_moved, unknown_run
from interactions.store._rules import Event
from interactions.store._status import RunStatus
from interactions.store._threaded import Later, Stale

__all__ = [
    "append_events",
    "find_interaction",
    "find_interactions",
    "get_run",
    "insert_interaction",
    "insert_run",
    "last_cursor",
    "lock_run",
    "select_events",
    "select_feed",
    "select_interactions",
    "select_runs",
    "store_answer",
    "update_run_row",
]

Conn = sqlite3.Connection
_RUN = (
    "id, thread_id, kind, ref, agent, model_name, parent_run_id, node_id, status, checkpoint, "
    "version, created_at, updated_at, error"
)
_RUN_HEAD = _RUN.replace("checkpoint", "'{}' AS checkpoint")
"""A run without its checkpoint (read as ``{}``): for a write that replaces it."""
_INTERACTION = (
    "run_id, id, node_id, tool_call_id, kind, requested_at, expires_at, descriptor, "
    "answered_at, answer_status, answer_payload, answered_by, answered_via"
)
_EVENT = "run, seq, type, data, at"
_EVENT_OUT = "events.cursor, runs.id AS run_id, events.seq, events.type, events.data, events.at"
"""Events as read back (joined to their run's id): the cursor (the rowid) is the store-wide
order (writers are serialized by ``BEGIN IMMEDIATE`` and rows are never deleted, so cursor
order is commit order)."""


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _ts(value: datetime | None) -> int | None:
    """A timestamp as the integer microseconds since the epoch the file keeps."""
    return None if value is None else (value - _EPOCH) // timedelta(microseconds=1)


def _at(micros: int) -> datetime:
    return _EPOCH + timedelta(microseconds=micros)


def _dt(micros: int | None) -> datetime | None:
    return None if micros is None else _at(micros)


def _marks(columns: str) -> str:
    return ", ".join("?" for _ in columns.split(","))


_INSERT_RUN = f"INSERT INTO runs ({_RUN}) VALUES ({_marks(_RUN)}) ON CONFLICT (id) DO NOTHING"
_INSERT_INTERACTION = f"INSERT INTO interactions ({_INTERACTION}) VALUES ({_marks(_INTERACTION)})"


# -- runs ---------------------------------------------------------------------------------------


def insert_run(conn: Conn, run: RunRecord, checkpoint_json: str) -> Later[bool]:
    """Insert a new run row (``checkpoint_json``: its checkpoint's canonical text); the Later
    is ``False`` (nothing written) if the id is taken.

    Under ``BEGIN IMMEDIATE`` no other writer comes between; a taken id is left as it is
    (``ON CONFLICT (id) DO NOTHING``).
    """
    params = (
        run.id,
        run.thread_id,
        run.kind,
        run.ref,
        run.agent,
        run.model_name,
        run.parent_run_id,
        run.node_id,
        run.status.value,
        checkpoint_json,
        run.version,
        _ts(run.created_at),
        _ts(run.updated_at),
        run.error,
    )
    inserted = conn.execute(_INSERT_RUN, params).rowcount == 1
    return lambda: inserted


def _run(row: sqlite3.Row) -> RunRecord:
    return RunRecord.model_validate(
        {
            **dict(row),
            "checkpoint": json.loads(row["checkpoint"]),
            "created_at": _dt(row["created_at"]),
            "updated_at": _dt(row["updated_at"]),
        },
        context=TRUSTED,
    )


def get_run(conn: Conn, run_id: str, *, checkpoint: bool = True) -> RunRecord:
    """Return the run (``checkpoint=False``: without its checkpoint, read as ``{}``); raise
    ``UnknownRunError`` if there is none."""
    columns = _RUN if checkpoint else _RUN_HEAD
    row = conn.execute(f"SELECT {columns} FROM runs WHERE id = ?", (run_id,)).fetchone()
    if row is None:
        raise unknown_run(run_id)
    run: RunRecord = read_row(_run, row, "run", run_id)
    return run


def lock_run(conn: Conn, run_id: str, *, checkpoint: bool) -> Later[RunRecord]:
    """The run, read when the Later is called (as :func:`get_run`). Nothing to lock: a write
    runs in ``BEGIN IMMEDIATE``, which already holds the file's write lock."""
    return lambda: get_run(conn, run_id, checkpoint=checkpoint)


def select_runs(
    conn: Conn,
    status: RunStatus | None,
    limit: int,
    oldest_first: bool,
    after: str | None,
    thread_id: str | None = None,
) -> list[RunRecord]:
    """Up to ``limit`` runs (see :func:`~interactions.store._queries.runs_query`). Unreadable
    rows are skipped with a warning."""
    sql, params = runs_query(
        _RUN, "?", status=status, thread_id=thread_id, after=after,
        oldest_first=oldest_first, limit=limit,
    )  # fmt: skip
    rows = conn.execute(sql, params)
    return read_rows(_run, rows, "run", lambda row: str(row["id"]))


def update_run_row(
    conn: Conn, run: RunRecord, *, checkpoint_json: str | None, strict: bool = False
) -> Later[None]:
    """Compare-and-set the run row from ``run.version - 1`` to ``run`` (and ``checkpoint_json``,
    the checkpoint's canonical text, when it changed). Under ``BEGIN IMMEDIATE``, held since the
    run was read, the guard cannot fail; if it ever did: ``ConflictError`` at once. ``strict``
    (a write decided without reading the run): ``Stale`` at once instead."""
    cursor = conn.execute(
        "UPDATE runs SET status = ?, error = ?, checkpoint = COALESCE(?, checkpoint), "
        "version = ?, updated_at = ? WHERE id = ? AND version = ?",
        (
            run.status.value,
            run.error,
            checkpoint_json,  # None: unchanged
            run.version,
            _ts(run.updated_at),
            run.id,
            run.version - 1,
        ),
    )
    if cursor.rowcount != 1:
        if strict:
            raise Stale
        raise run_moved(run.id)
    return _done


def _done() -> None:
    """The Later of a write that has nothing left to check."""


# -- interactions -------------------------------------------------------------------------------


def insert_interaction(conn: Conn, record: InteractionRecord) -> None:
    """Insert a new interaction row, with its answer if it already has one."""
    answer = record.answer
    params = (
        record.run_id,
        record.id,
        record.node_id,
        record.tool_call_id,
        record.kind,
        _ts(record.requested_at),
        _ts(record.expires_at),
        canonical_json(record.descriptor),
        _ts(record.answered_at),
        *_answer_params(answer),
    )
    conn.execute(_INSERT_INTERACTION, params)


def _answer_params(answer: InteractionAnswer | None) -> tuple[Any, ...]:
    if answer is None:
        return (None, None, None, None)
    return (answer.status, canonical_json(answer.payload), answer.answered_by, answer.via)


def _interaction(row: sqlite3.Row) -> InteractionRecord:
    answer = None
    if row["answer_status"] is not None:
        answer = trusted(
            InteractionAnswer,
            status=row["answer_status"],
            payload=json.loads(row["answer_payload"]),
            answered_by=row["answered_by"],
            via=row["answered_via"],
        )
    return trusted(
        InteractionRecord,
        id=row["id"],
        run_id=row["run_id"],
        node_id=row["node_id"],
        tool_call_id=row["tool_call_id"],
        kind=row["kind"],
        requested_at=_at(row["requested_at"]),
        expires_at=_at(row["expires_at"]),
        answered_at=_dt(row["answered_at"]),
        descriptor=json.loads(row["descriptor"]),
        answer=answer,
    )


def _interaction_key(row: sqlite3.Row) -> str:
    return f"{row['run_id']}/{row['id']}"


def find_interaction(conn: Conn, run_id: str, interaction_id: str) -> InteractionRecord | None:
    """Return the run's interaction with that id, or ``None``."""
    sql = f"SELECT {_INTERACTION} FROM interactions WHERE run_id = ? AND id = ?"
    row = conn.execute(sql, (run_id, interaction_id)).fetchone()
    if row is None:
        return None
    record: InteractionRecord = read_row(_interaction, row, "interaction", interaction_id)
    return record


def find_interactions(
    conn: Conn, run_id: str, ids: Sequence[str] | None
) -> Later[list[InteractionRecord]]:
    """The run's interactions among ``ids`` (``None``: all of them), in request order, read when
    the Later is called."""

    def read() -> list[InteractionRecord]:
        where = "" if ids is None else f" AND id IN ({', '.join('?' for _ in ids)})"
        sql = (
            f"SELECT {_INTERACTION} FROM interactions WHERE run_id = ?{where} "
            "ORDER BY requested_at, rowid"
        )
        rows = conn.execute(sql, (run_id, *(ids or ())))
        return read_rows(_interaction, rows, "interaction", _interaction_key)

    return read


def select_interactions(
    conn: Conn, run_id: str | None, pending: bool | None
) -> list[InteractionRecord]:
    """Interactions in request order, maybe of one run, maybe only (un)answered ones."""
    clauses, params = [], []
    if run_id is not None:
        clauses.append("run_id = ?")
        params.append(run_id)
    if pending is not None:
        clauses.append(f"answer_status IS {'' if pending else 'NOT '}NULL")
    where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    sql = f"SELECT {_INTERACTION} FROM interactions {where} ORDER BY requested_at, rowid"
    rows = conn.execute(sql, params)
    return read_rows(_interaction, rows, "interaction", _interaction_key)


def store_answer(conn: Conn, record: InteractionRecord, *, strict: bool = False) -> Later[None]:
    """Write ``record``'s first answer; the ``IS NULL`` guard never lets one overwrite another
    (``ConflictError`` at once if the row had an answer; ``Stale`` when ``strict``: a write
    decided without reading the interaction)."""
    cursor = conn.execute(
        "UPDATE interactions SET answered_at = ?, answer_status = ?, answer_payload = ?, "
        "answered_by = ?, answered_via = ? WHERE run_id = ? AND id = ? AND answer_status IS NULL",
        (_ts(record.answered_at), *_answer_params(record.answer), record.run_id, record.id),
    )
    if strict and cursor.rowcount != 1:
        raise Stale
    if cursor.rowcount != 1:  # impossible under BEGIN IMMEDIATE; refuse rather than overwrite
        raise answered_meanwhile(record.run_id, record.id)
    return _done


# -- events -------------------------------------------------------------------------------------


def append_events(
    conn: Conn, run_id: str, events: Sequence[Event], at: datetime, *, channel: str = ""
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
    stamp = _ts(at)
    added = conn.executemany(
        _APPEND_EVENT, [(type_, canonical_json(data), stamp, run_id) for type_, data in events]
    ).rowcount
    if added != len(events):
        raise unknown_run(run_id)

    def records() -> list[EventRecord]:  # built only for a caller that reads them
        last_cursor, last_seq = conn.execute(_LAST_APPENDED).fetchone()
        cursor, seq = last_cursor - len(events), last_seq - len(events)  # before the first
        return [
            trusted(
                EventRecord, run_id=run_id, seq=seq + i, cursor=cursor + i, type=t, data=d, at=at
            )
            for i, (t, d) in enumerate(events, start=1)
        ]

    return records


_APPEND_EVENT = f"""INSERT INTO events (cursor, {_EVENT})
    SELECT (SELECT COALESCE(MAX(cursor), 0) FROM events) + 1, pos,
           COALESCE((SELECT MAX(seq) FROM events WHERE run = pos), 0) + 1, ?, ?, ?
    FROM runs WHERE id = ?"""
_LAST_APPENDED = "SELECT cursor, seq FROM events WHERE cursor = last_insert_rowid()"
"""The last event this connection appended (read in the appending transaction)."""


def _event(row: sqlite3.Row) -> EventRecord:
    return trusted(
        EventRecord,
        run_id=row["run_id"],
        seq=row["seq"],
        cursor=row["cursor"],
        type=row["type"],
        data=json.loads(row["data"]),
        at=_at(row["at"]),
    )


def select_events(conn: Conn, run_id: str, after_seq: int) -> list[EventRecord]:
    """The run's events with ``seq > after_seq``, in order (``UnknownRunError`` if no run)."""
    sql = (
        f"SELECT {_EVENT_OUT} FROM runs JOIN events ON events.run = runs.pos "
        "WHERE runs.id = ? AND events.seq > ? ORDER BY events.seq"
    )
    found = [_event(row) for row in conn.execute(sql, (run_id, after_seq))]
    if not found:
        get_run(conn, run_id, checkpoint=False)  # an unknown run is refused, not empty
    return found


def select_feed(conn: Conn, after: int, limit: int) -> list[EventRecord]:
    """Up to ``limit`` events of every run with ``cursor > after``, in cursor order."""
    sql = (
        f"SELECT {_EVENT_OUT} FROM events JOIN runs ON runs.pos = events.run "
        "WHERE events.cursor > ? ORDER BY events.cursor LIMIT ?"
    )
    return [_event(row) for row in conn.execute(sql, (after, limit))]


def last_cursor(conn: Conn) -> int:
    """The cursor of the store's last event (0 when there is none)."""
    return int(conn.execute("SELECT COALESCE(MAX(cursor), 0) FROM events").fetchone()[0])
