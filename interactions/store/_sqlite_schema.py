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

from interactions._errors import UsageError

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "StoreSchemaError", "connect", "migrate"]


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


def _statements(*sql: str) -> Callable[[sqlite3.Connection], None]:
    def apply(conn: sqlite3.Connection) -> None:
        for statement in sql:
            conn.execute(statement)

    return apply


MIGRATIONS: tuple[Callable[[sqlite3.Connection], None], ...] = (
    _statements(*_V1),
    _statements(*_V2),
)
"""Ordered migrations; ``MIGRATIONS[i]`` upgrades a file from version ``i`` to ``i + 1``."""

SCHEMA_VERSION = len(MIGRATIONS)
"""The schema version this code writes."""


def migrate(conn: sqlite3.Connection, where: str) -> int:
    """Bring the file behind ``conn`` (autocommit mode) to :data:`SCHEMA_VERSION`.

    Returns the version found before migrating. Raises :class:`StoreSchemaError` for a file
    from a newer schema (``where`` names the file in the message).
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        found = int(conn.execute("PRAGMA user_version").fetchone()[0])
        if found > SCHEMA_VERSION:
            raise StoreSchemaError(
                f"{where} has store schema version {found}, newer than {SCHEMA_VERSION} which "
                "this pi-recipes understands; upgrade pi-recipes or use another store file"
            )
        for version in range(found, SCHEMA_VERSION):
            MIGRATIONS[version](conn)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION:d}")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return found


def connect(path: Path, busy_timeout: float) -> sqlite3.Connection:
    """Open ``path`` (creating its directory) in autocommit mode, WAL, foreign keys on,
    ``busy_timeout`` seconds to wait for another writer, and migrate it.

    The connection may be used from any thread (the caller serializes use). Raises
    :class:`StoreSchemaError` for a file this version cannot use.
    """
    if str(path) != ":memory:":
        path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(
        path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
    )
    try:
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000):d}")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA journal_mode = WAL")
        migrate(conn, str(path))
    except sqlite3.DatabaseError as exc:
        conn.close()
        if isinstance(exc, sqlite3.OperationalError):
            raise
        raise StoreSchemaError(f"{path} is not a usable SQLite database: {exc}") from exc
    except BaseException:
        conn.close()
        raise
    return conn
