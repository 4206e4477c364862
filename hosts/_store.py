"""What a host's ``--store`` and ``--engine`` (or ``PI_RECIPES_ENGINE``) name, read alike by
every host and command and checked before anything is opened or created; the host then opens
it with :func:`interactions.store.open_store`."""

from __future__ import annotations

from collections.abc import Mapping

from interactions import UsageError
from interactions.store import names_engine, store_schemes
from recipes.runs import ENGINE_ENV

__all__ = ["chosen_location"]


def chosen_location(store: str | None, engine: str | None, env: Mapping[str, str]) -> str | None:
    """The store or engine a host works on: ``--store``, else ``--engine``, else
    ``PI_RECIPES_ENGINE`` from ``env``; ``None`` is the default store (a SQLite file).

    Raises ``UsageError`` for both flags at once, an empty flag, an engine's URL given as
    ``--store`` and a store given as ``--engine`` (or in ``PI_RECIPES_ENGINE``). Secrets a URL
    may hold are never quoted.
    """
    if store is not None and engine is not None:
        raise UsageError("give --store or --engine, not both")
    if store is not None:
        if not store.strip():
            raise UsageError(
                f"--store needs a SQLite file path or a postgresql:// URL, got {store!r}"
            )
        if names_engine(store):
            raise UsageError(
                f"--store {_scheme(store)}://… names an engine, not a store: give it as "
                f"--engine (or set {ENGINE_ENV})"
            )
        return store
    if engine is not None:
        return _engine(engine, "--engine")
    from_env = env.get(ENGINE_ENV)
    return _engine(from_env, ENGINE_ENV) if from_env else None


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
