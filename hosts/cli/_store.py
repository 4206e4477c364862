"""The store a command works on: ``--store`` names a SQLite file or a PostgreSQL URL;
``--engine`` (or ``PI_RECIPES_ENGINE``) an engine that runs the runs itself (Temporal)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from pathlib import Path

import anyio

from interactions import UsageError
from interactions.store import DEFAULT_STORE_PATH, Store, names_postgres
from recipes.runs import ENGINE_ENV

__all__ = ["engine_of", "no_default_store", "open_store", "where_of"]


def engine_of(args: argparse.Namespace, env: Mapping[str, str] | None = None) -> str | None:
    """The engine URL of a command: ``--engine``, else ``PI_RECIPES_ENGINE`` unless ``--store``
    names a store. Raises ``UsageError`` when both flags are given."""
    given = getattr(args, "engine_given", None)
    if given and args.store_given:
        raise UsageError("give --store or --engine, not both")
    if given:
        return str(given)
    if args.store_given:
        return None
    return (os.environ if env is None else env).get(ENGINE_ENV) or None


def where_of(args: argparse.Namespace) -> str | None:
    """What a printed command repeats so it reaches the same runs: the ``--engine`` or the
    ``--store`` given (``None`` for the default, or an engine from the environment)."""
    given: str | None = getattr(args, "engine_given", None) or args.store_given
    return given


async def open_store(
    where: str | None, engine: str | None = None, *, existing: bool = False
) -> Store:
    """The store ``--store`` names: a PostgreSQL URL (``postgresql://...``) or libpq
    ``key=value`` string (``names_postgres``), or a SQLite file
    (default ``.pi-recipes/state.db``); or, with ``engine``, the engine's store. ``existing``
    (the ``runs`` commands, which read runs a run stored): a SQLite file named that does not
    exist is a ``UsageError``, not a new empty store in which no run is ever found."""
    if where is not None and not where.strip():
        raise UsageError("--store needs a SQLite file path or a postgresql:// URL, got ''")
    if engine:
        from recipes.runs import open_engine

        return await open_engine(engine)
    if where and names_postgres(where):
        from interactions.store import open_postgres_store

        return await open_postgres_store(where)
    if where and "://" in where:
        scheme = where.split("://", 1)[0]
        hint = " (an engine goes in --engine)" if scheme == "temporal" else ""
        raise UsageError(
            f"--store {scheme}://… is not a store this pi-recipes can open{hint}; give a SQLite "
            "file path or a postgresql:// URL"
        )
    from interactions.store import open_sqlite_store

    path = Path(where or DEFAULT_STORE_PATH)
    if existing and where and not await _exists_or_misnamed(path):
        raise UsageError(
            f"no store at {where}: nothing was created (a run creates its store, e.g. "
            f"pi-recipes run RECIPE PROMPT --store {where}); check the path"
        )
    return await open_sqlite_store(path)


async def no_default_store(where: str | None, engine: str | None) -> bool:
    """Whether a command given neither ``--store`` nor an engine finds no store at the default
    path (``.pi-recipes/state.db`` under the working folder): a command that only reads must
    then say so, not create an empty store to read nothing from."""
    return where is None and not engine and not await _exists_or_misnamed(DEFAULT_STORE_PATH)


async def _exists_or_misnamed(path: Path) -> bool:
    """Whether ``path`` exists, or sits under a file (the store says what is wrong then)."""
    return await anyio.Path(path).exists() or await anyio.Path(path.parent).is_file()
