"""Opening a PostgreSQL store: connection settings and versioned schema migrations.

The store's tables live in one PostgreSQL schema: ``schema=`` (created if missing), else the
connection's ``current_schema()``. Table ``store_migrations`` holds one row per applied migration;
``MIGRATIONS[i]`` moves a schema from version ``i`` to ``i + 1``. :func:`migrate` applies the
missing ones in one transaction that first takes a transaction-level advisory lock keyed on the
schema name, so processes opening a fresh database together migrate it exactly once; it refuses a
schema written by a newer pi-recipes. To change the schema, append a migration; never edit one.

JSON columns are ``json`` (not ``jsonb``) holding :func:`~interactions.store.canonical_json` text:
``json`` keeps the text as written, so ``1e+20`` stays a float and ``-0.0`` keeps its sign, and a
record read back is exactly what the other backends return. Timestamps are ``timestamptz``, read
in a UTC session.
"""

from __future__ import annotations

import hashlib
import os
from typing import TypeAlias

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.rows import DictRow, dict_row

from interactions._errors import UsageError
from interactions.store._sqlite_schema import StoreSchemaError

__all__ = [
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "TCP_BOUNDS",
    "Conn",
    "bounded_conninfo",
    "channel_name",
    "connect",
    "migrate",
]

Conn: TypeAlias = psycopg.Connection[DictRow]

_Connection: type[Conn]
try:
    from interactions.store._evented import EventedConnection as _Connection

    LOOP_DRIVEN = True
except ImportError:  # greenlet is not installed: the store's calls run in worker threads
    _Connection = psycopg.Connection
    LOOP_DRIVEN = False

TCP_BOUNDS = {
    "keepalives": "1",
    "keepalives_idle": "15",
    "keepalives_interval": "5",
    "keepalives_count": "3",
    "tcp_user_timeout": "30000",
}
"""libpq settings that bound every wait on a server gone without closing the connection (its
machine down, the network cut): after 15 s of silence the client probes, and gives up about
15 s later; data the server leaves unacknowledged for 30 s ends the connection too. A call
waiting then fails (``StoreUnavailableError``) instead of waiting for ever."""


def bounded_conninfo(dsn: str, connect_timeout: int) -> str:
    """``dsn`` with :data:`TCP_BOUNDS` and ``connect_timeout`` (seconds) added where it does not
    set them itself (nor, for the connect timeout, ``PGCONNECT_TIMEOUT``): what the DSN says
    wins, so a DSN can still choose other bounds. Raises psycopg's ``ProgrammingError`` for a
    DSN libpq cannot parse."""
    given = conninfo_to_dict(dsn)
    added = {key: value for key, value in TCP_BOUNDS.items() if key not in given}
    if "connect_timeout" not in given and not os.environ.get("PGCONNECT_TIMEOUT"):
        added["connect_timeout"] = str(connect_timeout)
    return make_conninfo(dsn, **added)


_V1 = (
    """CREATE TABLE runs (
        pos bigint GENERATED ALWAYS AS IDENTITY, id text PRIMARY KEY, thread_id text NOT NULL,
        recipe_ref text NOT NULL, agent text NOT NULL, model_name text NOT NULL,
        status text NOT NULL, checkpoint json NOT NULL, version integer NOT NULL
        CHECK (version >= 1), created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL,
        error text)""",
    "CREATE INDEX runs_by_status ON runs (status, created_at, pos)",
    "CREATE INDEX runs_by_created ON runs (created_at, pos)",
    """CREATE TABLE interactions (
        pos bigint GENERATED ALWAYS AS IDENTITY, run_id text NOT NULL REFERENCES runs (id),
        id text NOT NULL, node_id text NOT NULL, tool_call_id text NOT NULL, kind text NOT NULL,
        requested_at timestamptz NOT NULL, expires_at timestamptz NOT NULL,
        descriptor json NOT NULL, answered_at timestamptz,
        answer_status text CHECK (answer_status IN ('resolved', 'cancelled')),
        answer_payload json, answered_by text, answered_via text,
        PRIMARY KEY (run_id, id),
        CHECK ((answer_status IS NULL) = (answered_at IS NULL)))""",
    "CREATE INDEX interactions_by_requested ON interactions (requested_at, pos)",
    """CREATE TABLE events (
        run_id text NOT NULL REFERENCES runs (id), seq integer NOT NULL CHECK (seq >= 1),
        type text NOT NULL, data json NOT NULL, at timestamptz NOT NULL,
        PRIMARY KEY (run_id, seq))""",
)

_V2 = (
    # Runs of every kind: what drives them, what they belong to.
    "ALTER TABLE runs RENAME COLUMN recipe_ref TO ref",
    "ALTER TABLE runs ADD COLUMN kind text NOT NULL DEFAULT 'recipe'",
    "ALTER TABLE runs ADD COLUMN parent_run_id text",
    "ALTER TABLE runs ADD COLUMN node_id text",
    "CREATE INDEX runs_by_parent ON runs (parent_run_id) WHERE parent_run_id IS NOT NULL",
    # An answer may be 'expired' (the sweep's decline).
    "ALTER TABLE interactions DROP CONSTRAINT interactions_answer_status_check",
    """ALTER TABLE interactions ADD CONSTRAINT interactions_answer_status_check
        CHECK (answer_status IN ('resolved', 'cancelled', 'expired'))""",
    # The store-wide feed: every event gets a cursor in commit order, handed out by one
    # counter row that every appending transaction locks until it commits.
    "CREATE TABLE feed (one boolean PRIMARY KEY DEFAULT true CHECK (one), last bigint NOT NULL)",
    "ALTER TABLE events ADD COLUMN cursor bigint",
    """UPDATE events SET cursor = numbered.n FROM (
        SELECT run_id, seq, row_number() OVER (ORDER BY at, run_id, seq) AS n FROM events
    ) AS numbered WHERE events.run_id = numbered.run_id AND events.seq = numbered.seq""",
    "ALTER TABLE events ALTER COLUMN cursor SET NOT NULL",
    "CREATE UNIQUE INDEX events_by_cursor ON events (cursor)",
    "INSERT INTO feed (last) SELECT COALESCE(MAX(cursor), 0) FROM events",
)

_V3 = (
    # An AG-UI conversation finds its runs by thread.
    "CREATE INDEX runs_by_thread ON runs (thread_id, created_at, pos)",
)

_V4 = (
    # Remembered approval decisions ("approve, and don't ask again"), one per approval.
    """CREATE TABLE decisions (
        pos bigint GENERATED ALWAYS AS IDENTITY, id text PRIMARY KEY,
        run_id text NOT NULL REFERENCES runs (id), interaction_id text NOT NULL,
        thread_id text NOT NULL, tool text NOT NULL,
        action text NOT NULL CHECK (action IN ('allow', 'deny')),
        scope text NOT NULL CHECK (scope IN ('run', 'thread')),
        args json, decided_by text, reason text,
        created_at timestamptz NOT NULL, revoked_at timestamptz, revoked_by text,
        UNIQUE (run_id, interaction_id))""",
    # What a gated call reads: the active decisions of its run, and of its thread.
    """CREATE INDEX decisions_active_by_run ON decisions (run_id, created_at, pos)
        WHERE revoked_at IS NULL""",
    """CREATE INDEX decisions_active_by_thread ON decisions (thread_id, created_at, pos)
        WHERE revoked_at IS NULL""",
    # Listings, newest first, revoked ones too (by run: the unique key's index).
    "CREATE INDEX decisions_by_thread ON decisions (thread_id, created_at, pos)",
    "CREATE INDEX decisions_by_created ON decisions (created_at, pos)",
)

_V5 = (
    # Votes on approvals that need several people: one per person, in the order cast.
    """CREATE TABLE votes (
        pos bigint GENERATED ALWAYS AS IDENTITY, run_id text NOT NULL,
        interaction_id text NOT NULL, voter text NOT NULL,
        status text NOT NULL CHECK (status IN ('resolved', 'cancelled')), payload json NOT NULL,
        approved boolean NOT NULL, via text, at timestamptz NOT NULL,
        UNIQUE (run_id, interaction_id, voter),
        FOREIGN KEY (run_id, interaction_id) REFERENCES interactions (run_id, id))""",
    # An interaction's votes, in the order cast.
    "CREATE INDEX votes_by_interaction ON votes (run_id, interaction_id, pos)",
)

_V6 = (
    # Consumers of the feed (webhook targets): a durable cursor each, leased to one owner.
    """CREATE TABLE consumers (
        name text PRIMARY KEY, cursor bigint NOT NULL CHECK (cursor >= 0),
        owner text NOT NULL, lease_until timestamptz NOT NULL)""",
)

_V7 = (
    # Reminders and escalations: the last notice of each kind per interaction.
    """CREATE TABLE notices (
        run_id text NOT NULL, interaction_id text NOT NULL,
        kind text NOT NULL CHECK (kind IN ('reminded', 'escalated')),
        number bigint NOT NULL CHECK (number >= 1), at timestamptz NOT NULL,
        PRIMARY KEY (run_id, interaction_id, kind),
        FOREIGN KEY (run_id, interaction_id) REFERENCES interactions (run_id, id))""",
)

MIGRATIONS: tuple[tuple[str, ...], ...] = (_V1, _V2, _V3, _V4, _V5, _V6, _V7)
"""Ordered migrations (SQL statements); ``MIGRATIONS[i]`` upgrades version ``i`` to ``i + 1``."""

SCHEMA_VERSION = len(MIGRATIONS)
"""The PostgreSQL schema version this code writes."""


def channel_name(schema: str) -> str:
    """The LISTEN/NOTIFY channel of the store in ``schema`` (at most 63 bytes, PostgreSQL's cap)."""
    name = f"pi_recipes.{schema}"
    if len(name.encode()) <= 63:
        return name
    return "pi_recipes." + hashlib.sha256(schema.encode()).hexdigest()[:40]


def _lock_key(schema: str) -> int:
    digest = hashlib.sha256(f"pi-recipes migrate {schema}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def migrate(conn: Conn, schema: str) -> int:
    """Bring the store in ``schema`` to :data:`SCHEMA_VERSION`; return the version found.

    ``conn`` is in autocommit mode with ``schema`` first on its ``search_path``. Raises
    :class:`StoreSchemaError` for a schema from a newer pi-recipes, or one whose tables were not
    created by pi-recipes. Nothing is changed when it raises.
    """
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", [_lock_key(schema)])
        found = _found_version(conn, schema)
        if found > SCHEMA_VERSION:
            raise StoreSchemaError(
                f"PostgreSQL schema {schema!r} has store schema version {found}, newer than "
                f"{SCHEMA_VERSION} which this pi-recipes understands; upgrade pi-recipes or "
                "use another schema"
            )
        try:
            for version in range(found, SCHEMA_VERSION):
                for statement in MIGRATIONS[version]:
                    conn.execute(statement)
                conn.execute(  # run once per migration: never worth a prepared plan
                    "INSERT INTO store_migrations (version) VALUES (%s)",
                    [version + 1],
                    prepare=False,
                )
        except psycopg.errors.DuplicateTable as exc:
            raise StoreSchemaError(
                f"PostgreSQL schema {schema!r} already holds tables pi-recipes did not create "
                f"({exc.diag.message_primary}); use another schema"
            ) from exc
    return found


def _found_version(conn: Conn, schema: str) -> int:
    """The schema's version; creates the schema and the version table when missing."""
    table = conn.execute(
        "SELECT 1 FROM pg_catalog.pg_tables WHERE schemaname = %s AND tablename = %s",
        [schema, "store_migrations"],
    ).fetchone()
    if table is None:
        if (
            conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", [schema]).fetchone()
            is None
        ):
            conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        conn.execute(
            "CREATE TABLE store_migrations (version integer PRIMARY KEY CHECK (version >= 1), "
            "applied_at timestamptz NOT NULL DEFAULT now())"
        )
    row = conn.execute("SELECT COALESCE(MAX(version), 0) AS v FROM store_migrations").fetchone()
    assert row is not None
    return int(row["v"])


def connect(dsn: str, schema: str | None, *, lock_timeout: float) -> tuple[Conn, str]:
    """Open an autocommit connection to ``dsn`` for the store in ``schema`` and migrate it.

    The session reads timestamps in UTC, plans a prepared statement once, waits at most
    ``lock_timeout`` seconds for a lock, and has ``schema`` (when given) as its
    ``search_path``. Returns the connection and the schema name in use. Raises
    :class:`StoreSchemaError` for a schema this version cannot use, and psycopg's
    ``OperationalError`` when the server cannot be reached.
    """
    if schema is not None and not schema:
        raise UsageError("schema must be a non-empty PostgreSQL schema name, or None")
    conn = _Connection.connect(dsn, autocommit=True, row_factory=dict_row)
    try:
        conn.execute("SET TIME ZONE 'UTC'")
        # A statement psycopg prepared keeps its one (generic) plan: the store's statements
        # look a row up by its key, so no plan depends on the values bound, and the server
        # would otherwise plan the event append again on every write (about 0.15 ms each). A
        # page's size is written into its statement (not bound), so a page is planned for it.
        conn.execute("SET plan_cache_mode = force_generic_plan")
        timeout_ms = f"{max(1, round(lock_timeout * 1000)):d}ms"
        conn.execute("SELECT set_config('lock_timeout', %s, false)", [timeout_ms])
        if schema is not None:
            conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
        row = conn.execute("SELECT current_schema() AS s").fetchone()
        resolved = schema or (row and row["s"])
        if not resolved:
            raise StoreSchemaError(
                "the connection's search_path names no existing schema to hold the store; "
                "pass schema= (it is created if missing)"
            )
        migrate(conn, resolved)
    except BaseException:
        conn.close()
        raise
    return conn, resolved
