"""Records to PostgreSQL rows and back, and the statements :class:`PostgresStore` runs.

Every function takes an open connection (``dict_row`` rows, a UTC session) and runs inside the
caller's transaction, or, for reads, as autocommit statements; none commits. JSON columns are
``json`` holding :func:`canonical_json` text (sent as text, cast to ``json``); timestamps are
``timestamptz``. ``pos`` (an identity column) breaks ties of equal timestamps in insert order.
Writers of a run first lock its row (:func:`lock_run`), which serializes them per run.

A write's transaction is pipelined: its statements (:func:`lock_run` on) are sent at once and
return a :data:`~interactions.store._threaded.Later` that reads the result. The first Later
called waits for every result sent so far (psycopg flushes the pipeline and reads them all);
the others are read from memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from interactions.store._queries import runs_query
from interactions.store._records import (
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
from interactions.store._threaded import Later

if TYPE_CHECKING:  # psycopg is imported only by whoever opens a connection
    from interactions.store._postgres_schema import Conn

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

_RUN = (
    "id, thread_id, kind, ref, agent, model_name, parent_run_id, node_id, status, checkpoint, "
    "version, created_at, updated_at, error"
)
_RUN_HEAD = _RUN.replace("checkpoint", "'{}'::json AS checkpoint")
"""A run without its checkpoint (read as ``{}``): for a write that replaces it."""
_INTERACTION = (
    "run_id, id, node_id, tool_call_id, kind, requested_at, expires_at, descriptor, "
    "answered_at, answer_status, answer_payload, answered_by, answered_via"
)
_EVENT = "run_id, seq, cursor, type, data, at"
_JSON_COLUMNS = {"checkpoint", "descriptor", "answer_payload", "data"}
_ANSWER_COLUMNS = {"answer_status", "answer_payload", "answered_by", "answered_via"}


def _values(columns: str) -> str:
    names = [name.strip() for name in columns.split(",")]
    return ", ".join("%s::json" if name in _JSON_COLUMNS else "%s" for name in names)


def _key(text: str | None) -> str | None:
    """``text`` as a lookup parameter: one holding a NUL (which ``text`` cannot store, so no row
    holds it) becomes ``NULL``, which matches nothing, so the lookup finds nothing, as on the
    other backends, instead of failing."""
    return None if text is None or "\x00" in text else text


def _strict(change: str) -> str:
    """``change`` (an insert or update of at most one row) as a statement that fails when it
    changed no row, aborting the transaction: ``1 / count(*)`` divides by zero. Nothing sent
    after it is applied and the ``COMMIT`` rolls back, with no wait for the server in between;
    :class:`~interactions.store.PostgresStore` raises ``Stale`` for it. No other statement of
    the store divides."""
    return f"WITH changed AS ({change} RETURNING 1) SELECT 1 / count(*) AS changed FROM changed"


# -- runs ---------------------------------------------------------------------------------------


def insert_run(conn: Conn, run: RunRecord, checkpoint_json: str) -> Later[bool]:
    """Insert a new run row (``checkpoint_json``: its checkpoint's canonical text); if the id
    is taken, even concurrently, nothing is written and the transaction fails (see
    :func:`_strict`), so the Later, read or not, never waits for the server: it is ``True``."""
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
        run.created_at,
        run.updated_at,
        run.error,
    )
    conn.execute(
        _strict(f"INSERT INTO runs ({_RUN}) VALUES ({_values(_RUN)}) ON CONFLICT (id) DO NOTHING"),
        params,
    )
    return lambda: True


def _run(row: dict[str, Any]) -> RunRecord:
    return trusted(RunRecord, **row)


def _read_run(row: dict[str, Any] | None, run_id: str) -> RunRecord:
    if row is None:
        raise unknown_run(run_id)
    run: RunRecord = read_row(_run, row, "run", run_id)
    return run


def get_run(conn: Conn, run_id: str, *, checkpoint: bool = True) -> RunRecord:
    """Return the run (``checkpoint=False``: without its checkpoint, read as ``{}``);
    ``UnknownRunError`` if none."""
    columns = _RUN if checkpoint else _RUN_HEAD
    row = conn.execute(f"SELECT {columns} FROM runs WHERE id = %s", [_key(run_id)]).fetchone()
    return _read_run(row, run_id)


def lock_run(conn: Conn, run_id: str, *, checkpoint: bool) -> Later[RunRecord]:
    """Lock the run's row until commit (serializing the run's writers); the Later returns the
    run (``checkpoint=False``: without its checkpoint, read as ``{}``) or raises
    ``UnknownRunError``."""
    columns = _RUN if checkpoint else _RUN_HEAD
    cursor = conn.execute(f"SELECT {columns} FROM runs WHERE id = %s FOR UPDATE", [_key(run_id)])
    return lambda: _read_run(cursor.fetchone(), run_id)


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
    if _key(thread_id) != thread_id or _key(after) != after:
        return []  # no run has such a thread or id
    sql, params = runs_query(
        _RUN, "%s", status=status, thread_id=thread_id, after=after,
        oldest_first=oldest_first, limit=limit,
    )  # fmt: skip
    rows = conn.execute(sql, params)
    return read_rows(_run, rows, "run", lambda row: str(row["id"]))


_UPDATE_RUN = (
    "UPDATE runs SET status = %s, error = %s, checkpoint = COALESCE(%s::json, checkpoint), "
    "version = %s, updated_at = %s WHERE id = %s AND version = %s"
)
_STORE_ANSWER = (
    "UPDATE interactions SET answered_at = %s, answer_status = %s, answer_payload = %s::json, "
    "answered_by = %s, answered_via = %s WHERE run_id = %s AND id = %s AND answer_status IS NULL"
)


def update_run_row(
    conn: Conn, run: RunRecord, *, checkpoint_json: str | None, strict: bool = False
) -> Later[None]:
    """Compare-and-set the run row from ``run.version - 1`` to ``run`` (and ``checkpoint_json``,
    the checkpoint's canonical text, when it changed).

    A caller holding the row lock cannot see the guard fail; if it ever did, the Later raises
    ``ConflictError`` rather than let the caller commit over another writer. ``strict``: the
    guard fails inside the server instead (see :func:`_strict`), for a write decided without
    the lock.
    """
    checkpoint = checkpoint_json  # None: unchanged
    cursor = conn.execute(
        _strict(_UPDATE_RUN) if strict else f"{_UPDATE_RUN} RETURNING 1 AS updated",
        (
            run.status.value,
            run.error,
            checkpoint,
            run.version,
            run.updated_at,
            run.id,
            run.version - 1,
        ),
    )

    def guard() -> None:
        if cursor.fetchone() is None:
            raise run_moved(run.id)

    return guard


# -- interactions -------------------------------------------------------------------------------


def insert_interaction(conn: Conn, record: InteractionRecord) -> None:
    """Insert a new interaction row, with its answer if it already has one."""
    params = (
        record.run_id,
        record.id,
        record.node_id,
        record.tool_call_id,
        record.kind,
        record.requested_at,
        record.expires_at,
        canonical_json(record.descriptor),
        record.answered_at,
        *_answer_params(record.answer),
    )
    conn.execute(
        f"INSERT INTO interactions ({_INTERACTION}) VALUES ({_values(_INTERACTION)})", params
    )


def _answer_params(answer: InteractionAnswer | None) -> tuple[Any, ...]:
    if answer is None:
        return (None, None, None, None)
    return (answer.status, canonical_json(answer.payload), answer.answered_by, answer.via)


def _interaction(row: dict[str, Any]) -> InteractionRecord:
    answer = None
    if row["answer_status"] is not None:
        answer = trusted(
            InteractionAnswer,
            status=row["answer_status"],
            payload=row["answer_payload"],
            answered_by=row["answered_by"],
            via=row["answered_via"],
        )
    fields = {k: v for k, v in row.items() if k not in _ANSWER_COLUMNS}
    return trusted(InteractionRecord, **fields, answer=answer)


def _interaction_key(row: dict[str, Any]) -> str:
    return f"{row['run_id']}/{row['id']}"


def find_interaction(conn: Conn, run_id: str, interaction_id: str) -> InteractionRecord | None:
    """Return the run's interaction with that id, or ``None``."""
    sql = f"SELECT {_INTERACTION} FROM interactions WHERE run_id = %s AND id = %s"
    row = conn.execute(sql, (_key(run_id), _key(interaction_id))).fetchone()
    if row is None:
        return None
    record: InteractionRecord = read_row(_interaction, row, "interaction", interaction_id)
    return record


def find_interactions(
    conn: Conn, run_id: str, ids: Sequence[str] | None
) -> Later[list[InteractionRecord]]:
    """The run's interactions among ``ids`` (``None``: all of them), in request order."""
    where, params = (
        ("", [_key(run_id)])
        if ids is None
        else (" AND id = ANY(%s)", [_key(run_id), [_key(i) for i in ids]])
    )
    cursor = conn.execute(
        f"SELECT {_INTERACTION} FROM interactions WHERE run_id = %s{where} "
        "ORDER BY requested_at, pos",
        params,
    )
    return lambda: read_rows(_interaction, cursor, "interaction", _interaction_key)


def select_interactions(
    conn: Conn, run_id: str | None, pending: bool | None
) -> list[InteractionRecord]:
    """Interactions in request order, maybe of one run, maybe only (un)answered ones."""
    clauses, params = [], []
    if run_id is not None:
        clauses.append("run_id = %s")
        params.append(_key(run_id))
    if pending is not None:
        clauses.append(f"answer_status IS {'' if pending else 'NOT '}NULL")
    where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    sql = f"SELECT {_INTERACTION} FROM interactions {where} ORDER BY requested_at, pos"
    rows = conn.execute(sql, params)
    return read_rows(_interaction, rows, "interaction", _interaction_key)


def store_answer(conn: Conn, record: InteractionRecord, *, strict: bool = False) -> Later[None]:
    """Write ``record``'s first answer; the ``IS NULL`` guard never lets one overwrite another
    (the Later raises ``ConflictError`` if the row had an answer; ``strict``: the guard fails
    inside the server instead, see :func:`_strict`)."""
    cursor = conn.execute(
        _strict(_STORE_ANSWER) if strict else f"{_STORE_ANSWER} RETURNING 1 AS answered",
        (record.answered_at, *_answer_params(record.answer), record.run_id, record.id),
    )

    def guard() -> None:
        if cursor.fetchone() is None:  # impossible under the run lock; refuse, never overwrite
            raise answered_meanwhile(record.run_id, record.id)

    return guard


# -- events -------------------------------------------------------------------------------------


def append_events(
    conn: Conn, run_id: str, events: Sequence[Event], at: datetime, *, channel: str
) -> Later[list[EventRecord]]:
    """Append ``events`` after the run's last seq, stamped ``at``, and NOTIFY ``channel``.

    One statement numbers and inserts them: seqs follow the run's last (the caller holds the
    run's row lock, or created the run in this transaction, so they are gapless); cursors come
    from the ``feed`` row, locked until commit, so they are handed out in commit order (send
    this last, so the lock is held for little more than the commit). With no run it inserts
    nothing (so a :func:`lock_run` sent before it reports the unknown run, not a foreign key).
    The same statement notifies (payload: the run id; once per row, which PostgreSQL folds into
    one notification per transaction); the notification is sent at commit.
    """
    if not events:
        return lambda: []
    cursor = conn.execute(
        """WITH fed AS (UPDATE feed SET last = last + %(n)s RETURNING last),
                prior AS (SELECT COALESCE(MAX(seq), 0) AS last FROM events WHERE run_id = %(run)s),
                added AS (
                    INSERT INTO events (run_id, seq, cursor, type, data, at)
                    SELECT %(run)s, prior.last + e.i, fed.last - %(n)s + e.i, e.type,
                           e.data::json, %(at)s
                    FROM fed, prior,
                         unnest(%(types)s::text[], %(datas)s::text[])
                             WITH ORDINALITY AS e (type, data, i)
                    WHERE EXISTS (SELECT FROM runs WHERE id = %(run)s)
                    RETURNING seq, cursor)
           SELECT seq, cursor, pg_notify(%(channel)s, %(run)s)::text AS notified FROM added""",
        {
            "n": len(events),
            "run": _key(run_id),  # no such run: nothing is inserted, and lock_run says so
            "at": at,
            "types": [type_ for type_, _ in events],
            "datas": [canonical_json(data) for _, data in events],
            "channel": channel,
        },
    )

    def records() -> list[EventRecord]:
        numbers = sorted((int(row["seq"]), int(row["cursor"])) for row in cursor.fetchall())
        return [
            trusted(EventRecord, run_id=run_id, seq=seq, cursor=cur, type=type_, data=data, at=at)
            for (seq, cur), (type_, data) in zip(numbers, events, strict=True)
        ]

    return records


def select_events(conn: Conn, run_id: str, after_seq: int) -> list[EventRecord]:
    """The run's events with ``seq > after_seq``, in order (``UnknownRunError`` if no run)."""
    if conn.execute("SELECT 1 FROM runs WHERE id = %s", [_key(run_id)]).fetchone() is None:
        raise unknown_run(run_id)
    sql = f"SELECT {_EVENT} FROM events WHERE run_id = %s AND seq > %s ORDER BY seq"
    return [trusted(EventRecord, **row) for row in conn.execute(sql, (run_id, after_seq))]


def select_feed(conn: Conn, after: int, limit: int) -> list[EventRecord]:
    """Up to ``limit`` events of every run with ``cursor > after``, in cursor order."""
    sql = f"SELECT {_EVENT} FROM events WHERE cursor > %s ORDER BY cursor LIMIT %s"
    return [trusted(EventRecord, **row) for row in conn.execute(sql, (after, limit))]


def last_cursor(conn: Conn) -> int:
    """The cursor of the store's last committed event (0 when there is none)."""
    row = conn.execute("SELECT COALESCE(MAX(cursor), 0) AS last FROM events").fetchone()
    return int(row["last"]) if row else 0
