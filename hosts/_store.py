"""What a host's ``--store`` and ``--engine`` (or ``PI_RECIPES_ENGINE``) name, read alike by
every host and command and checked before anything is opened or created; the host then opens
it with :func:`interactions.store.open_store`."""

from __future__ import annotations

from collections.abc import Mapping

from interactions import UsageError
from interactions.store import names_engine, store_schemes
from recipes.runs import ENGINE_ENV

__all__ = ["STORE_ENV", "chosen_location"]

STORE_ENV = "PI_RECIPES_STORE"
"""The environment variable naming the store every command and host works on when no
``--store`` or ``--engine`` is given: a SQLite file or a ``postgresql://`` URL."""


def chosen_location(store: str | None, engine: str | None, env: Mapping[str, str]) -> str | None:
    """The store or engine a host works on: ``--store``, else ``--engine``, else
    ``PI_RECIPES_STORE`` or ``PI_RECIPES_ENGINE`` from ``env``; ``None`` is the default store
    (a SQLite file).

    Raises ``UsageError`` for both flags at once (or both variables), an empty flag, an
    engine's URL given as ``--store`` (or in ``PI_RECIPES_STORE``) and a store given as
    ``--engine`` (or in ``PI_RECIPES_ENGINE``). Secrets a URL may hold are never quoted.
    """
    if store is not None and engine is not None:
        raise UsageError("give --store or --engine, not both")
    if store is not None:
        return _store(store, "--store")
    if engine is not None:
        return _engine(engine, "--engine")
    store_env, engine_env = env.get(STORE_ENV), env.get(ENGINE_ENV)
    if store_env and engine_env:
        raise UsageError(
            f"{STORE_ENV} and {ENGINE_ENV} are both set: unset one (or give --store or --engine)"
        )
    if store_env:
        return _store(store_env, STORE_ENV)
    return _engine(engine_env, ENGINE_ENV) if engine_env else None


def _store(location: str, source: str) -> str:
    """``location``, checked to name a store (``source`` says where it was given)."""
    if not location.strip():
        raise UsageError(
            f"{source} needs a SQLite file path or a postgresql:// URL, got {location!r}"
        )
    if names_engine(location):
        raise UsageError(
            f"{source} {_scheme(location)}://… names an engine, not a store: give it as "
            f"--engine (or set {ENGINE_ENV})"
        )
    return location


def _engine(url: str, source: str) -> str:
    """``url``, checked to name an engine (``source`` says where it was given)."""
    if names_engine(url):
        return url
    schemes = store_schemes()
    engines = ", ".join(f"{name}://…" for name, kind in schemes.items() if kind == "engine")
    known = f"engines: {engines}" if engines else "no engine is installed"
    scheme = _scheme(url) if "://" in url else None
    if not url.strip():
        raise UsageError(f"{source} needs an engine's URL ({known}), got {url!r}")
    if scheme is None or scheme in schemes:
        raise UsageError(f"{source} names a store, not an engine: give it as --store ({known})")
    raise UsageError(
        f"{source} {scheme}://… is not an engine this pi-recipes knows ({known}; another needs "
        "the package that registers its scheme)"
    )


def _scheme(url: str) -> str:
    return url.partition("://")[0].lower()
