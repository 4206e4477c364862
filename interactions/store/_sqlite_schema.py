"""Opening a SQLite store file: connection settings and versioned schema migrations.

The schema version is ``PRAGMA user_version``. ``MIGRATIONS[i]`` moves a file from version ``i``
to ``i + 1``; :func:`migrate` applies the missing ones inside one ``BEGIN IMMEDIATE``
transaction (so processes opening a fresh file together migrate it once) and refuses a file
written by a newer pi-recipes. To change the schema, append a migration; never edit one.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from interactions._errors import StoreUnavailableError, UsageError

__all__ = [
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "StoreSchemaError",
    "connect",
    "damaged",
    "migrate",
    "translate",
]


class StoreSchemaError(UsageError):
    """The store file cannot be used by this version of pi-recipes (newer schema, not SQLite).

    Upgrade pi-recipes, or point the store at another file. Retrying will not help.
    """


_V1 = (
    """CREATE TABLE runs (
        id TEXT PRIMARY KEY, thread_id TEXT NOT NULL, recipe_ref TEXT NOT NULL,
        agent TEXT NOT NULL, model_name TEXT NOT NULL, status TEXT NOT NULL,
        checkpoint TEXT NOT NULL, version INTEGER NOT NULL CHECK (version >= 1),
        created_at TEXT NOT NULL, updated_at TEXT NOT NULL, error TEXT)""",
    "CREATE INDEX runs_by_status ON runs (status, created_at)",
    "CREATE INDEX runs_by_created ON runs (created_at)",
    """CREATE TABLE interactions (
        run_id TEXT NOT NULL REFERENCES runs (id), id TEXT NOT NULL,
        node_id TEXT NOT NULL, tool_call_id TEXT NOT NULL, kind TEXT NOT NULL,
        requested_at TEXT NOT NULL, expires_at TEXT NOT NULL, descriptor TEXT NOT NULL,
        answered_at TEXT, answer_status TEXT CHECK (answer_status IN ('resolved', 'cancelled')),
        answer_payload TEXT, answered_by TEXT, answered_via TEXT,
        PRIMARY KEY (run_id, id))""",
    "CREATE INDEX interactions_by_requested ON interactions (requested_at)",
    """CREATE TABLE events (
        run_id TEXT NOT NULL REFERENCES runs (id), seq INTEGER NOT NULL CHECK (seq >= 1),
        type TEXT NOT NULL, data TEXT NOT NULL, at TEXT NOT NULL,
        PRIMARY KEY (run_id, seq))""",
)


_V2 = (
    # Runs of every kind: what drives them, what they belong to.
    "ALTER TABLE runs RENAME COLUMN recipe_ref TO ref",
    "ALTER TABLE runs ADD COLUMN kind TEXT NOT NULL DEFAULT 'recipe'",
    "ALTER TABLE runs ADD COLUMN parent_run_id TEXT",
    "ALTER TABLE runs ADD COLUMN node_id TEXT",
    "CREATE INDEX runs_by_parent ON runs (parent_run_id) WHERE parent_run_id IS NOT NULL",
    # An answer may be 'expired' (the sweep's decline): SQLite changes a CHECK by a rebuild.
    """CREATE TABLE interactions_v2 (
        run_id TEXT NOT NULL REFERENCES runs (id), id TEXT NOT NULL,
        node_id TEXT NOT NULL, tool_call_id TEXT NOT NULL, kind TEXT NOT NULL,
        requested_at TEXT NOT NULL, expires_at TEXT NOT NULL, descriptor TEXT NOT NULL,
        answered_at TEXT,
        answer_status TEXT CHECK (answer_status IN ('resolved', 'cancelled', 'expired')),
        answer_payload TEXT, answered_by TEXT, answered_via TEXT,
        PRIMARY KEY (run_id, id))""",
    "INSERT INTO interactions_v2 SELECT * FROM interactions ORDER BY rowid",
    "DROP TABLE interactions",
    "ALTER TABLE interactions_v2 RENAME TO interactions",
    "CREATE INDEX interactions_by_requested ON interactions (requested_at)",
)


def _micros(column: str) -> str:
    """SQL turning a v1/v2 timestamp (``YYYY-MM-DDTHH:MM:SS.ffffff+00:00``) into microseconds."""
    return (
        f"(CAST(strftime('%s', substr({column}, 1, 19)) AS INTEGER) * 1000000 "
        f"+ CAST(substr({column}, 21, 6) AS INTEGER))"
    )


_V3 = (
    # Timestamps as integer microseconds since the epoch (UTC): a third of the bytes, same order.
    """CREATE TABLE runs_v3 (
        id TEXT PRIMARY KEY, thread_id TEXT NOT NULL, kind TEXT NOT NULL, ref TEXT NOT NULL,
        agent TEXT NOT NULL, model_name TEXT NOT NULL, parent_run_id TEXT, node_id TEXT,
        status TEXT NOT NULL, checkpoint TEXT NOT NULL,
        version INTEGER NOT NULL CHECK (version >= 1),
        created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, error TEXT)""",
    f"""INSERT INTO runs_v3 SELECT id, thread_id, kind, ref, agent, model_name, parent_run_id,
        node_id, status, checkpoint, version, {_micros("created_at")}, {_micros("updated_at")},
        error FROM runs ORDER BY rowid""",
    """CREATE TABLE interactions_v3 (
        run_id TEXT NOT NULL REFERENCES runs (id), id TEXT NOT NULL,
        node_id TEXT NOT NULL, tool_call_id TEXT NOT NULL, kind TEXT NOT NULL,
        requested_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, descriptor TEXT NOT NULL,
        answered_at INTEGER,
        answer_status TEXT CHECK (answer_status IN ('resolved', 'cancelled', 'expired')),
        answer_payload TEXT, answered_by TEXT, answered_via TEXT,
        PRIMARY KEY (run_id, id))""",
    f"""INSERT INTO interactions_v3 SELECT run_id, id, node_id, tool_call_id, kind,
        {_micros("requested_at")}, {_micros("expires_at")}, descriptor,
        CASE WHEN answered_at IS NULL THEN NULL ELSE {_micros("answered_at")} END,
        answer_status, answer_payload, answered_by, answered_via
        FROM interactions ORDER BY rowid""",
    """CREATE TABLE events_v3 (
        run_id TEXT NOT NULL REFERENCES runs (id), seq INTEGER NOT NULL CHECK (seq >= 1),
        type TEXT NOT NULL, data TEXT NOT NULL, at INTEGER NOT NULL,
        PRIMARY KEY (run_id, seq))""",
    f"""INSERT INTO events_v3 SELECT run_id, seq, type, data, {_micros("at")}
        FROM events ORDER BY rowid""",
    "DROP TABLE events",
    "DROP TABLE interactions",
    "DROP TABLE runs",
    "ALTER TABLE runs_v3 RENAME TO runs",
    "ALTER TABLE interactions_v3 RENAME TO interactions",
    "ALTER TABLE events_v3 RENAME TO events",
    "CREATE INDEX runs_by_status ON runs (status, created_at)",
    "CREATE INDEX runs_by_created ON runs (created_at)",
    "CREATE INDEX runs_by_parent ON runs (parent_run_id) WHERE parent_run_id IS NOT NULL",
    "CREATE INDEX interactions_by_requested ON interactions (requested_at)",
)


def _statements(*sql: str) -> Callable[[sqlite3.Connection], None]:
    def apply(conn: sqlite3.Connection) -> None:
        for statement in sql:
            conn.execute(statement)

    return apply


_V4 = (
    # An AG-UI conversation finds its runs by thread.
    "CREATE INDEX runs_by_thread ON runs (thread_id, created_at)",
)

_V5 = (
    # Runs get a stable integer key (an INTEGER PRIMARY KEY survives VACUUM, a bare rowid may
    # not); events name their run by it and their cursor is an INTEGER PRIMARY KEY too: a
    # fifth of an event's bytes, and a feed cursor no VACUUM renumbers.
    """CREATE TABLE runs_v5 (
        pos INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, thread_id TEXT NOT NULL,
        kind TEXT NOT NULL, ref TEXT NOT NULL, agent TEXT NOT NULL, model_name TEXT NOT NULL,
        parent_run_id TEXT, node_id TEXT, status TEXT NOT NULL, checkpoint TEXT NOT NULL,
        version INTEGER NOT NULL CHECK (version >= 1),
        created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, error TEXT)""",
    """INSERT INTO runs_v5 SELECT rowid, id, thread_id, kind, ref, agent, model_name,
        parent_run_id, node_id, status, checkpoint, version, created_at, updated_at, error
        FROM runs ORDER BY rowid""",
    """CREATE TABLE events_v5 (
        cursor INTEGER PRIMARY KEY, run INTEGER NOT NULL REFERENCES runs (pos),
        seq INTEGER NOT NULL CHECK (seq >= 1), type TEXT NOT NULL, data TEXT NOT NULL,
        at INTEGER NOT NULL, UNIQUE (run, seq))""",
    """INSERT INTO events_v5 SELECT events.rowid, runs_v5.pos, events.seq, events.type,
        events.data, events.at FROM events JOIN runs_v5 ON runs_v5.id = events.run_id
        ORDER BY events.rowid""",
    "DROP TABLE events",
    "DROP TABLE runs",
    "ALTER TABLE runs_v5 RENAME TO runs",
    "ALTER TABLE events_v5 RENAME TO events",
    "CREATE INDEX runs_by_status ON runs (status, created_at)",
    "CREATE INDEX runs_by_created ON runs (created_at)",
    "CREATE INDEX runs_by_parent ON runs (parent_run_id) WHERE parent_run_id IS NOT NULL",
    "CREATE INDEX runs_by_thread ON runs (thread_id, created_at)",
)

_V6 = (
    # Remembered approval decisions ("approve, and don't ask again"), one per approval.
    """CREATE TABLE decisions (
        id TEXT PRIMARY KEY, run_id TEXT NOT NULL REFERENCES runs (id),
        interaction_id TEXT NOT NULL, thread_id TEXT NOT NULL, tool TEXT NOT NULL,
        action TEXT NOT NULL CHECK (action IN ('allow', 'deny')),
        scope TEXT NOT NULL CHECK (scope IN ('run', 'thread')),
        args TEXT, decided_by TEXT, reason TEXT,
        created_at INTEGER NOT NULL, revoked_at INTEGER, revoked_by TEXT,
        UNIQUE (run_id, interaction_id))""",
    # What a gated call reads: the active decisions of its run, and of its thread.
    """CREATE INDEX decisions_active_by_run ON decisions (run_id, created_at)
        WHERE revoked_at IS NULL""",
    """CREATE INDEX decisions_active_by_thread ON decisions (thread_id, created_at)
        WHERE revoked_at IS NULL""",
    # Listings, newest first, revoked ones too (by run: the unique key's index).
    "CREATE INDEX decisions_by_thread ON decisions (thread_id, created_at)",
    "CREATE INDEX decisions_by_created ON decisions (created_at)",
)

_V7 = (
    # Votes on approvals that need several people: one per person, in the order cast.
    """CREATE TABLE votes (
        run_id TEXT NOT NULL, interaction_id TEXT NOT NULL, voter TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('resolved', 'cancelled')), payload TEXT NOT NULL,
        approved INTEGER NOT NULL CHECK (approved IN (0, 1)), via TEXT, at INTEGER NOT NULL,
        UNIQUE (run_id, interaction_id, voter),
        FOREIGN KEY (run_id, interaction_id) REFERENCES interactions (run_id, id))""",
)

_V8 = (
    # Consumers of the feed (webhook targets): a durable cursor each, leased to one owner.
    """CREATE TABLE consumers (
        name TEXT PRIMARY KEY, cursor INTEGER NOT NULL CHECK (cursor >= 0),
        owner TEXT NOT NULL, lease_until INTEGER NOT NULL)""",
)

_V9 = (
    # Reminders and escalations: the last notice of each kind per interaction.
    """CREATE TABLE notices (
        run_id TEXT NOT NULL, interaction_id TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('reminded', 'escalated')),
        number INTEGER NOT NULL CHECK (number >= 1), at INTEGER NOT NULL,
        PRIMARY KEY (run_id, interaction_id, kind),
        FOREIGN KEY (run_id, interaction_id) REFERENCES interactions (run_id, id))""",
)

MIGRATIONS: tuple[Callable[[sqlite3.Connection], None], ...] = (
    _statements(*_V1),
    _statements(*_V2),
    _statements(*_V3),
    _statements(*_V4),
    _statements(*_V5),
    _statements(*_V6),
    _statements(*_V7),
    _statements(*_V8),
    _statements(*_V9),
)
"""Ordered migrations; ``MIGRATIONS[i]`` upgrades a file from version ``i`` to ``i + 1``."""

SCHEMA_VERSION = len(MIGRATIONS)
"""The schema version this code writes."""


def migrate(conn: sqlite3.Connection, where: str) -> int:
    """Bring the file behind ``conn`` (autocommit mode) to :data:`SCHEMA_VERSION`.

    Returns the version found before migrating. A file already at this version is only read
    (no write lock is taken, so a reader never waits behind a long write). Raises
    :class:`StoreSchemaError`, changing nothing, for a file from a newer schema or one that
    holds another application's tables (``where`` names the file in the message).
    """
    found = _check_version(conn, where)
    if found == SCHEMA_VERSION:
        return found
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA foreign_keys = OFF")  # tables are rebuilt (SQLite's own procedure)
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            found = _check_version(conn, where)  # another process may have migrated meanwhile
            for version in range(found, SCHEMA_VERSION):
                MIGRATIONS[version](conn)
            broken = conn.execute("PRAGMA foreign_key_check").fetchall()
            if broken:
                raise StoreSchemaError(f"{where}: migrating left rows without their run: {broken}")
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION:d}")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
    finally:
        conn.execute("PRAGMA foreign_keys = ON")
    return found


def _check_version(conn: sqlite3.Connection, where: str) -> int:
    found = int(conn.execute("PRAGMA user_version").fetchone()[0])
    names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    if (found == 0 and names) or (found > 0 and not names >= _STORE_TABLES):
        # Another application's file (it may number its own user_version, too).
        raise StoreSchemaError(
            f"{where} is not a pi-recipes store (it holds {', '.join(sorted(names)[:5])}; "
            f"user_version {found}); it was left untouched: point --store at another file"
        )
    if found > SCHEMA_VERSION:
        raise StoreSchemaError(
            f"{where} has store schema version {found}, newer than {SCHEMA_VERSION} which "
            "this pi-recipes understands; upgrade pi-recipes or use another store file"
        )
    return found


_STORE_TABLES = {"runs", "interactions", "events"}
"""The tables a store file holds at every schema version."""


def _check_location(path: Path) -> None:
    """Refuse a store path that can never be a file, before anything is created."""
    if path.is_dir():
        raise StoreSchemaError(
            f"{path} is a folder; give the store a file path, e.g. {path}/state.db"
        )
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise StoreSchemaError(
                    f"{path} cannot be created: {parent} is a file, not a folder"
                )
            break


def connect(path: Path, busy_timeout: float) -> sqlite3.Connection:
    """Open ``path`` (creating its folder and file) in autocommit mode: WAL, foreign keys on,
    ``busy_timeout`` seconds to wait for another writer; migrate it if it is behind.

    The connection may be used from any thread (the caller serializes use). Raises
    :class:`StoreSchemaError` for a path or a file this version cannot use, and
    :class:`~interactions.StoreUnavailableError` when the file cannot be opened; nothing is
    created or changed then.
    """
    where = str(path)
    if where != ":memory:":
        _check_location(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreUnavailableError(
                f"cannot create the store's folder {path.parent}: {exc.strerror}", reason="io"
            ) from None
    try:
        conn = sqlite3.connect(
            path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
        )
    except sqlite3.Error as exc:
        raise StoreUnavailableError(
            f"cannot open the store file {path}: {exc}", reason="io"
        ) from None
    try:
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000):d}")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA synchronous = FULL")  # a state change is on disk when committed
        migrate(conn, where)
        conn.execute("PRAGMA busy_timeout = 0")  # the store says when to wait (and for how long)
    except sqlite3.DatabaseError as exc:
        conn.close()
        if (
            isinstance(exc, sqlite3.OperationalError)
            or exc.sqlite_errorcode == sqlite3.SQLITE_CORRUPT
        ):
            raise translate(exc, where) from None  # a damaged page: not "not a database"
        raise StoreSchemaError(f"{path} is not a usable SQLite database: {exc}") from None
    except BaseException:
        conn.close()
        raise
    return conn


def damaged(exc: BaseException) -> bool:
    """Whether ``exc`` is SQLite finding the file damaged (a corrupt page, not a database)."""
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(exc, sqlite3.DatabaseError) and code in (
        sqlite3.SQLITE_CORRUPT,
        sqlite3.SQLITE_NOTADB,
    )


def translate(exc: sqlite3.Error, where: str) -> StoreUnavailableError:
    """A SQLite failure as the typed error a caller can act on."""
    text = str(exc)
    if damaged(exc):
        return StoreUnavailableError(
            f"the store file {where} is damaged ({text}): restore it from a backup, or move it "
            f"aside to start an empty store (`sqlite3 {where} .recover` may save its rows)",
            reason="corrupt",
        )
    if "locked" in text or "busy" in text:
        reason, advice = "busy", "another process held the store's write lock too long; try again"
    elif "readonly" in text or "read-only" in text:
        reason, advice = (
            "read_only",
            "the store file is read-only here; reading works, writing does not",
        )
    else:
        reason, advice = "io", "check the file and its folder"
    return StoreUnavailableError(
        f"the store {where} cannot serve the call ({text}): {advice}", reason=reason
    )
