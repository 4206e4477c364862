"""The store ``--store`` names (a SQLite file, default ``.pi-recipes/state.db``, or a PostgreSQL
URL, as for the command line) or the engine ``--engine`` names (Temporal), and the folder the
server keeps its token in."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from interactions import UsageError
from interactions.store import DEFAULT_STORE_PATH, Store, names_postgres
from recipes.runs import ENGINE_ENV

__all__ = ["engine_of", "is_postgres", "open_store", "store_folder"]


def is_postgres(where: str | None) -> bool:
    """Whether ``where`` names a PostgreSQL database (a URL, or a libpq connection string)."""
    return bool(where) and names_postgres(str(where))


def engine_of(engine: str | None, where: str | None, env: Mapping[str, str]) -> str | None:
    """The engine to serve: ``--engine``, else ``PI_RECIPES_ENGINE`` unless ``--store`` is
    given (``UsageError`` for both flags)."""
    if engine and where:
        raise UsageError("give --store or --engine, not both")
    if engine or where:
        return engine
    return env.get(ENGINE_ENV) or None


async def open_store(where: str | None, engine: str | None = None) -> Store:
    """Open the store ``where`` names, or the engine ``engine`` names (``UsageError``/
    ``StoreSchemaError``/``StoreUnavailableError`` when it can't)."""
    if engine:
        from recipes.runs import open_engine

        return await open_engine(engine)
    if is_postgres(where):
        from interactions.store import open_postgres_store

        assert where is not None
        return await open_postgres_store(where)
    from interactions.store import open_sqlite_store

    return await open_sqlite_store(Path(where or DEFAULT_STORE_PATH))


def store_folder(where: str | None, engine: str | None = None) -> Path:
    """The folder of a SQLite store's file; for PostgreSQL or an engine, ``.pi-recipes``
    here."""
    if engine or is_postgres(where):
        return DEFAULT_STORE_PATH.parent
    return Path(where or DEFAULT_STORE_PATH).parent
