"""PostgreSQL helpers for pi-recipes' side: reachability, fresh schemas, sizes, transactions.

Every statement runs on its own short autocommit connection, beside the store's.

Transactions per cycle (metric 7) are read from ``pg_stat_database.xact_commit`` of a private
database created for the count and dropped after it, so nobody else's activity (other
engineers' tests share the server's ``test`` database) lands in it. A backend adds its counts
to ``pg_stat_database`` when it exits at the latest, and it leaves ``pg_stat_activity`` after
that: so :func:`xact_commits` first waits (bounded) until no backend is connected to the
database, then reads the counter from a connection to another database.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

DEFAULT_URL = "postgresql://postgres@127.0.0.1:5432/test"


def unreachable(url: str) -> str | None:
    """Why ``url`` cannot be used (psycopg missing, server down), or ``None`` if it can."""
    try:
        import psycopg
    except ImportError:
        return "psycopg is not installed (pip install -r benchmarks/compare/requirements.txt)"
    try:
        with psycopg.connect(url, connect_timeout=3) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        return f"cannot reach {url}: {str(exc).strip().splitlines()[0]}"
    return None


def sql(url: str, statement: str, *params: Any) -> list[tuple[Any, ...]]:
    """Run one statement on a fresh autocommit connection; return its rows."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        cursor = conn.execute(statement, params)
        return cursor.fetchall() if cursor.description else []


def new_schema_name() -> str:
    """A schema name nobody uses (the store creates the schema)."""
    return f"pi_bench_{uuid.uuid4().hex[:16]}"


def drop_schema(url: str, schema: str) -> None:
    sql(url, f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def schema_bytes(url: str, schema: str) -> int:
    """The bytes of every table of ``schema``, with its indexes and TOAST (the files' sizes)."""
    rows = sql(
        url,
        "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
        "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relkind = 'r'",
        schema,
    )
    return int(rows[0][0])


@contextmanager
def private_database(url: str) -> Iterator[tuple[str, str]]:
    """Create a database nobody else uses; yield (its URL, its name); drop it afterwards."""
    from psycopg.conninfo import make_conninfo

    name = f"pi_bench_{uuid.uuid4().hex[:16]}"
    sql(url, f'CREATE DATABASE "{name}"')
    try:
        yield make_conninfo(url, dbname=name), name
    finally:
        sql(url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def xact_commits(url: str, database: str, *, timeout: float = 30.0) -> int:
    """``xact_commit`` of ``database`` once no backend is connected to it (read through
    ``url``, another database). Raises ``TimeoutError`` if backends stay past ``timeout``."""
    deadline = time.monotonic() + timeout
    while sql(url, "SELECT count(*) FROM pg_stat_activity WHERE datname = %s", database)[0][0]:
        if time.monotonic() > deadline:
            raise TimeoutError(f"backends stayed connected to {database} for {timeout} s")
        time.sleep(0.02)
    rows = sql(url, "SELECT xact_commit FROM pg_stat_database WHERE datname = %s", database)
    return int(rows[0][0])
