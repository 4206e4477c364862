"""One way from what a user typed to an open store: :func:`open_store`.

SQLite files and PostgreSQL are built in; every other URL scheme is looked up in a registry:
:func:`register_store_scheme`, then the entry point groups :data:`STORE_ENTRY_POINTS` and
:data:`ENGINE_ENTRY_POINTS` (name: the scheme; object: an async callable ``url -> Store``), so
an engine (the Temporal engine's ``temporal://``) plugs in without this package knowing it.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Literal, cast

import anyio

from interactions._errors import UsageError
from interactions.plugins import installed_plugins, load_plugin
from interactions.store._protocol import Store
from interactions.store._where import names_postgres
from interactions.store.postgres import open_postgres_store
from interactions.store.sqlite import DEFAULT_STORE_PATH, open_sqlite_store

__all__ = [
    "ENGINE_ENTRY_POINTS",
    "STORE_ENTRY_POINTS",
    "SchemeKind",
    "StoreOpener",
    "names_engine",
    "open_store",
    "register_store_scheme",
    "sqlite_path",
    "store_schemes",
]

STORE_ENTRY_POINTS = "pi_recipes.stores"
"""The entry point group of stores by URL scheme (the object is a :data:`StoreOpener`)."""

ENGINE_ENTRY_POINTS = "pi_recipes.engines"
"""The entry point group of engines by URL scheme: stores whose runs an engine's own workers
drive (``recipes.runs.drivers.RunEngine``); hosts take their URLs as ``--engine``, not
``--store``."""

StoreOpener = Callable[[str], Awaitable[Store]]
"""Opens the store a URL of its scheme names (the whole URL is passed); raises ``UsageError``
for a malformed URL, ``StoreUnavailableError`` when what it names cannot be reached."""

SchemeKind = Literal["store", "engine"]

_BUILT_IN: dict[str, SchemeKind] = {"sqlite": "store", "postgresql": "store", "postgres": "store"}
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")
_REGISTERED: dict[str, tuple[StoreOpener, SchemeKind]] = {}
_GROUPS: tuple[tuple[str, SchemeKind], ...] = (
    (STORE_ENTRY_POINTS, "store"),
    (ENGINE_ENTRY_POINTS, "engine"),
)


def register_store_scheme(scheme: str, opener: StoreOpener, *, engine: bool = False) -> None:
    """Make :func:`open_store` open ``scheme://…`` URLs with ``opener`` (replacing an opener
    registered before, or installed through an entry point); ``engine``: the scheme names an
    engine (see :data:`ENGINE_ENTRY_POINTS`). Raises ``UsageError`` for a name that is not a
    URL scheme, or a scheme built in (``sqlite``, ``postgresql``, ``postgres``)."""
    name = scheme.lower()
    if not _SCHEME.fullmatch(f"{name}://"):
        raise UsageError(f"a URL scheme is a letter, then letters, digits, '+', '-' or '.': "
                         f"got {scheme!r}")  # fmt: skip
    if name in _BUILT_IN:
        raise UsageError(f"{name}:// is built in; register another scheme")
    _REGISTERED[name] = (opener, "engine" if engine else "store")


def store_schemes() -> dict[str, SchemeKind]:
    """Every URL scheme :func:`open_store` opens, built in first, then registered and
    installed ones (sorted), each with what it names. Nothing is imported."""
    schemes = dict(_BUILT_IN)
    found: dict[str, SchemeKind] = {}
    for group, kind in _GROUPS:
        for name in installed_plugins(group):
            found.setdefault(name.lower(), kind)
    found.update((name, kind) for name, (_, kind) in _REGISTERED.items())
    return schemes | {name: found[name] for name in sorted(found) if name not in schemes}


def names_engine(url: str) -> bool:
    """Whether ``url`` is the URL of an engine (its scheme is registered or installed as one),
    read without importing or connecting to anything."""
    scheme = _scheme_of(url)
    if scheme is None or scheme in _BUILT_IN:
        return False
    return store_schemes().get(scheme) == "engine"


def sqlite_path(url: str | None) -> Path | None:
    """The SQLite file ``url`` names (:data:`DEFAULT_STORE_PATH` for ``None`` or ``""``), or
    ``None`` when it names a server (PostgreSQL, another scheme). Pure: nothing is opened.

    Raises ``UsageError`` for a location of blanks only, or a ``sqlite:`` URL that is not
    ``sqlite:///PATH``.
    """
    if not url:
        return DEFAULT_STORE_PATH
    if not url.strip():
        raise UsageError(f"a store is a SQLite file path or a URL, got {url!r}")
    if names_postgres(url):
        return None
    scheme = _scheme_of(url)
    if scheme is None:
        return Path(url)
    return _sqlite_url_path(url) if scheme == "sqlite" else None


async def open_store(url: str | None = None, *, must_exist: bool = False) -> Store:
    """Open the store ``url`` names, and return it (close it, or use ``async with``):

    - ``None`` or ``""``: the embedded default, the SQLite file :data:`DEFAULT_STORE_PATH`;
    - a path, or ``sqlite:///PATH`` (``sqlite:////abs/path`` for an absolute one): that SQLite
      file, created unless ``must_exist``;
    - ``postgresql://…``, ``postgres://…`` or a libpq ``key=value`` string (see
      :func:`names_postgres`): PostgreSQL (``pip install 'pi-recipes[postgres]'``);
    - any other ``scheme://…``: the opener registered for the scheme
      (:func:`register_store_scheme`), else installed under it in :data:`STORE_ENTRY_POINTS`
      or :data:`ENGINE_ENTRY_POINTS` (``temporal://HOST:PORT/NAMESPACE``: the Temporal engine).

    ``must_exist`` (a command that reads runs a store holds): a SQLite file that is not there
    is a ``UsageError``, and nothing is created. A server (PostgreSQL, an engine) is opened as
    it is.

    Raises ``UsageError`` for an unknown scheme (naming those it knows), a missing extra
    (naming what to install), a malformed location or a file that is not a store
    (``StoreSchemaError``); ``StoreUnavailableError`` when a server cannot be reached.
    """
    path = sqlite_path(url)
    if path is not None:
        if must_exist and not await _exists_or_misnamed(path):
            raise UsageError(
                f"no store at {url or path}: nothing was created (a store is created by the "
                "first run stored in it); check the path"
            )
        return await open_sqlite_store(path)
    assert url is not None  # sqlite_path gives None for a URL only
    scheme = _scheme_of(url)
    if scheme is None or scheme in _BUILT_IN:  # a PostgreSQL URL or key=value string
        return await open_postgres_store(url)
    opener = _opener(scheme)
    store = await opener(url)
    if not isinstance(store, Store):
        raise UsageError(f"the opener of {scheme}:// gave a {type(store).__name__}, not a Store")
    return store


def _opener(scheme: str) -> StoreOpener:
    """The opener of ``scheme``: registered, else loaded from its entry point."""
    registered = _REGISTERED.get(scheme)
    if registered is not None:
        return registered[0]
    for group, kind in _GROUPS:
        entry = installed_plugins(group).get(scheme)
        if entry is not None:
            opener = load_plugin(entry, what=f"the {scheme}:// {kind}")
            if not callable(opener):
                raise UsageError(f"the entry point of {scheme}:// ({entry.value}) is not callable")
            return cast(StoreOpener, opener)  # an async callable ``url -> Store`` by contract
    raise UsageError(_unknown(scheme))


def _unknown(scheme: str) -> str:
    others = [
        f"{name}:// (an engine)" if kind == "engine" else f"{name}://"
        for name, kind in store_schemes().items()
        if name not in _BUILT_IN
    ]
    kinds = [
        "a SQLite file (a path, or sqlite:///PATH)",
        "postgresql:// or postgres:// URLs",
        *others,
    ]
    known = f"{', '.join(kinds[:-1])} and {kinds[-1]}"
    return (
        f"{scheme}://… is not a store this pi-recipes can open; it opens {known}. Another "
        "scheme needs the package that registers it (an entry point in "
        f"{STORE_ENTRY_POINTS!r} or {ENGINE_ENTRY_POINTS!r})"
    )


def _scheme_of(url: str) -> str | None:
    """The scheme of ``url`` (lower case), or ``None`` for a path or a libpq string."""
    found = _SCHEME.match(url)
    return found[1].lower() if found else None


def _sqlite_url_path(url: str) -> Path:
    """The file of ``sqlite:///PATH``: relative, or absolute with a fourth slash (as
    SQLAlchemy reads it)."""
    rest = url[len("sqlite://") :]
    if not rest.startswith("/") or len(rest) == 1 or "?" in rest or "#" in rest:
        raise UsageError(
            f"a SQLite URL is sqlite:///PATH (sqlite:////abs/path for an absolute one), got {url!r}"
        )
    path = rest[1:]
    if path == ":memory:":
        raise UsageError("a store in memory is MemoryStore; a SQLite store is a file")
    return Path(path)


async def _exists_or_misnamed(path: Path) -> bool:
    """Whether ``path`` exists, or sits under a file (the store says what is wrong then)."""
    return await anyio.Path(path).exists() or await anyio.Path(path.parent).is_file()
