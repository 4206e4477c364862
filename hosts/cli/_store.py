"""The store a command works on: ``--store`` names a SQLite file or a PostgreSQL URL."""

from __future__ import annotations

from pathlib import Path

from interactions import UsageError
from interactions.store import DEFAULT_STORE_PATH, Store

__all__ = ["open_store"]


async def open_store(where: str | None) -> Store:
    """The store ``--store`` names: a PostgreSQL URL (``postgresql://...``) or a SQLite file
    (default ``.pi-recipes/state.db``)."""
    if where and where.startswith(("postgresql://", "postgres://")):
        from interactions.store import open_postgres_store

        return await open_postgres_store(where)
    if where and "://" in where:
        scheme = where.split("://", 1)[0]
        raise UsageError(
            f"--store {scheme}://… is not a store this pi-recipes can open; give a SQLite file "
            "path or a postgresql:// URL"
        )
    from interactions.store import open_sqlite_store

    return await open_sqlite_store(Path(where or DEFAULT_STORE_PATH))
