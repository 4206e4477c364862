"""The store a command works on: what ``--store`` or ``--engine`` (or ``PI_RECIPES_ENGINE``)
name, opened with :func:`interactions.store.open_store` as every host opens it."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping

import anyio

from hosts._store import chosen_location
from interactions.store import DEFAULT_STORE_PATH, names_engine

__all__ = ["engine_of", "location_of", "no_default_store", "where_of"]


def location_of(args: argparse.Namespace, env: Mapping[str, str] | None = None) -> str | None:
    """What a command opens: ``--store``, else ``--engine``, else ``PI_RECIPES_ENGINE``
    (``None``: the default store). Raises ``UsageError`` as
    :func:`hosts._store.chosen_location` does, before anything is opened."""
    return chosen_location(
        args.store_given, getattr(args, "engine_given", None), os.environ if env is None else env
    )


def engine_of(args: argparse.Namespace, env: Mapping[str, str] | None = None) -> str | None:
    """The engine URL a command runs on (``--engine`` or ``PI_RECIPES_ENGINE`` unless
    ``--store`` is given), or ``None`` when it works on a store."""
    where = location_of(args, env)
    return where if where is not None and names_engine(where) else None


def where_of(args: argparse.Namespace) -> str | None:
    """What a printed command repeats so it reaches the same runs: the ``--engine`` or the
    ``--store`` given (``None`` for the default, or an engine from the environment)."""
    given: str | None = getattr(args, "engine_given", None) or args.store_given
    return given


async def no_default_store(where: str | None) -> bool:
    """Whether a command whose location is the default (``where`` is ``None``) finds no store
    at the default path (``.pi-recipes/state.db`` under the working folder): a command that
    only reads must then say so, not create an empty store to read nothing from."""
    if where is not None:
        return False
    path = anyio.Path(DEFAULT_STORE_PATH)
    return not (await path.exists() or await path.parent.is_file())
