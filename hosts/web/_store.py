"""The store ``--store`` names (a SQLite file, default ``.pi-recipes/state.db``, or a PostgreSQL
URL, as for the command line), and the folder the server keeps its token in."""

from __future__ import annotations

from pathlib import Path

from interactions.store import DEFAULT_STORE_PATH, Store

__all__ = ["is_postgres", "open_store", "store_folder"]


def is_postgres(where: str | None) -> bool:
    """Whether ``where`` names a PostgreSQL database."""
    return bool(where) and str(where).startswith(("postgresql://", "postgres://"))


async def open_store(where: str | None) -> Store:
    """Open the store ``where`` names (``UsageError``/``StoreSchemaError`` when it can't)."""
    if is_postgres(where):
        from interactions.store import open_postgres_store

        assert where is not None
        return await open_postgres_store(where)
    from interactions.store import open_sqlite_store

    return await open_sqlite_store(Path(where or DEFAULT_STORE_PATH))


def store_folder(where: str | None) -> Path:
    """The folder of a SQLite store's file; for PostgreSQL, ``.pi-recipes`` here."""
    if is_postgres(where):
        return DEFAULT_STORE_PATH.parent
    return Path(where or DEFAULT_STORE_PATH).parent
