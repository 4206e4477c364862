"""``open_store(url)``: every kind of location a user types, opened one way, and what it refuses.

Real SQLite files and a real PostgreSQL (``PI_RECIPES_TEST_POSTGRES``); the Temporal engine's
``temporal://`` through its installed entry point (that it reaches a running engine is shown by
the command line's Temporal tests); a scheme of the test's own through
:func:`register_store_scheme`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from interactions import UsageError
from interactions.errors import StoreUnavailableError
from interactions.store import (
    DEFAULT_STORE_PATH,
    MemoryStore,
    PostgresStore,
    SQLiteStore,
    Store,
    StoreSchemaError,
    names_engine,
    open_store,
    register_store_scheme,
    sqlite_path,
    store_schemes,
)
from interactions.testing.store_conformance import new_run

POSTGRES = os.environ.get("PI_RECIPES_TEST_POSTGRES", "")


def _left_in(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir())


async def _run_ids(store: Store) -> list[str]:
    async with store:
        return [run.id for run in await store.list_runs()]


async def _store_a_run(store: Store) -> str:
    async with store:
        return (await store.create_run(new_run())).id


# -- SQLite ---------------------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("url", [None, ""])
async def test_no_location_is_the_default_sqlite_file(
    url: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    store = await open_store(url)
    assert isinstance(store, SQLiteStore)
    run_id = await _store_a_run(store)
    assert (tmp_path / DEFAULT_STORE_PATH).is_file()
    assert await _run_ids(await open_store(str(DEFAULT_STORE_PATH))) == [run_id]


@pytest.mark.anyio
async def test_a_path_and_sqlite_urls_name_one_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    run_id = await _store_a_run(await open_store("runs.db"))
    assert (tmp_path / "runs.db").is_file()
    for url in ("sqlite:///runs.db", f"sqlite:///{tmp_path}/runs.db", "SQLite:///runs.db"):
        assert await _run_ids(await open_store(url)) == [run_id], url
    assert await _run_ids(await open_store("runs.db", must_exist=True)) == [run_id]


@pytest.mark.anyio
@pytest.mark.parametrize(
    "url", ["nowhere/state.db", "sqlite:///nowhere/state.db", None], ids=["path", "url", "default"]
)
async def test_must_exist_refuses_a_missing_file_and_creates_nothing(
    url: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match=r"^no store at .*state\.db: nothing was created"):
        await open_store(url, must_exist=True)
    assert _left_in(tmp_path) == []


@pytest.mark.anyio
async def test_must_exist_leaves_a_misnamed_path_to_the_store_to_explain(tmp_path: Path) -> None:
    """A path under a file: not "no store there" but what is wrong with it."""
    (tmp_path / "a-file").write_text("x")
    with pytest.raises(UsageError, match="is a file, not a folder"):
        await open_store(str(tmp_path / "a-file" / "state.db"), must_exist=True)


@pytest.mark.anyio
async def test_a_file_of_another_application_is_refused_untouched(tmp_path: Path) -> None:
    other = tmp_path / "notes.db"
    other.write_bytes(b"not a database at all, but the user's notes")
    with pytest.raises(StoreSchemaError):
        await open_store(str(other))
    assert other.read_bytes() == b"not a database at all, but the user's notes"


BAD_LOCATIONS = [
    ("   ", "a store is a SQLite file path or a URL"),
    ("sqlite://host/runs.db", "a SQLite URL is sqlite:///PATH"),
    ("sqlite:///", "a SQLite URL is sqlite:///PATH"),
    ("sqlite:///runs.db?mode=ro", "a SQLite URL is sqlite:///PATH"),
    ("sqlite:///:memory:", "MemoryStore"),
    ("mysql://root:hunter2@db/x", "mysql://… is not a store this pi-recipes can open"),
    ("ftp://x", "ftp://… is not a store this pi-recipes can open"),
]


@pytest.mark.anyio
@pytest.mark.parametrize(("url", "said"), BAD_LOCATIONS)
async def test_a_location_that_cannot_work_is_a_usage_error_and_creates_nothing(
    url: str, said: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError) as raised:
        await open_store(url)
    assert said in str(raised.value)
    assert "hunter2" not in str(raised.value)
    assert _left_in(tmp_path) == []


@pytest.mark.anyio
async def test_an_unknown_scheme_names_the_schemes_it_knows() -> None:
    with pytest.raises(UsageError) as raised:
        await open_store("redis://127.0.0.1/0")
    said = str(raised.value)
    for known in ("sqlite:///PATH", "postgresql://", "postgres://", "temporal:// (an engine)"):
        assert known in said
    assert "'pi_recipes.stores'" in said and "'pi_recipes.engines'" in said


@pytest.mark.parametrize(
    ("url", "path"),
    [
        (None, DEFAULT_STORE_PATH),
        ("", DEFAULT_STORE_PATH),
        ("runs.db", Path("runs.db")),
        ("sqlite:///data/runs.db", Path("data/runs.db")),
        ("sqlite:////srv/runs.db", Path("/srv/runs.db")),
        ("postgresql://db/runs", None),
        ("host=db dbname=runs", None),
        ("temporal://127.0.0.1:7233/default", None),
    ],
)
def test_sqlite_path_reads_the_file_a_location_names(url: str | None, path: Path | None) -> None:
    assert sqlite_path(url) == path


# -- PostgreSQL -----------------------------------------------------------------------------------


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """The test server's URL, its search path a schema nobody uses (dropped after)."""
    if not POSTGRES:
        pytest.skip("set PI_RECIPES_TEST_POSTGRES to run the PostgreSQL store tests")
    import psycopg

    schema = f"pi_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(POSTGRES, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
        try:
            sep = "&" if "?" in POSTGRES else "?"
            yield f"{POSTGRES}{sep}options={quote(f'-csearch_path={schema}')}"
        finally:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


@pytest.mark.anyio
async def test_postgresql_urls_and_libpq_strings_open_postgres(
    postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    monkeypatch.chdir(tmp_path)
    store = await open_store(postgres_url)
    assert isinstance(store, PostgresStore)
    run_id = await _store_a_run(store)
    as_postgres = "postgres://" + postgres_url.split("://", 1)[1]
    assert await _run_ids(await open_store(as_postgres, must_exist=True)) == [run_id]
    key_value = make_conninfo("", **conninfo_to_dict(postgres_url))  # host=… options=…
    assert "://" not in key_value
    assert await _run_ids(await open_store(key_value)) == [run_id]
    assert _left_in(tmp_path) == [], "nothing went to a local file"


@pytest.mark.anyio
async def test_an_unreachable_postgres_is_unavailable_and_hides_its_password() -> None:
    with pytest.raises(StoreUnavailableError) as raised:
        await open_store("postgresql://nobody:hunter2pw@127.0.0.1:1/none")
    assert "hunter2pw" not in str(raised.value)


def _fresh_python(script: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


MISSING = """
import sys
sys.modules[{module!r}] = None  # as if the extra were not installed
import anyio
from interactions import UsageError
from interactions.store import open_store
try:
    anyio.run(open_store, {url!r})
except UsageError as exc:
    print(exc)
"""


@pytest.mark.parametrize(
    ("module", "url", "said"),
    [
        (
            "psycopg",
            "postgresql://nobody@127.0.0.1:1/none",
            "pip install 'pi-recipes[postgres]'",
        ),
        (
            "temporalio",
            "temporal://127.0.0.1:1/default",
            "the temporal:// engine needs temporalio: pip install 'pi-recipes[temporal]'",
        ),
    ],
)
def test_a_missing_extra_says_what_to_install(
    module: str, url: str, said: str, tmp_path: Path
) -> None:
    done = _fresh_python(MISSING.format(module=module, url=url), tmp_path)
    assert done.returncode == 0, done.stderr
    assert said in done.stdout
    assert _left_in(tmp_path) == []


# -- schemes other packages register ------------------------------------------------------------


def test_the_temporal_engine_is_installed_as_an_engine() -> None:
    """pi-recipes' own entry point: known without importing the engine or connecting."""
    assert store_schemes()["temporal"] == "engine"
    assert names_engine("temporal://127.0.0.1:7233/default")
    assert names_engine("TEMPORAL://127.0.0.1:7233/default")
    for store in ("runs.db", "sqlite:///runs.db", "postgresql://db/x", "host=db", "x://y"):
        assert not names_engine(store), store


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the Temporal SDK runs on asyncio
async def test_an_unreachable_engine_is_unavailable() -> None:
    with pytest.raises(StoreUnavailableError, match=r"cannot reach Temporal at 127\.0\.0\.1:1"):
        await open_store("temporal://127.0.0.1:1/default")


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_malformed_engine_url_is_the_engines_usage_error() -> None:
    with pytest.raises(UsageError, match="needs HOST:PORT"):
        await open_store("temporal://nohost/default")


@pytest.mark.anyio
async def test_a_registered_scheme_opens_through_its_opener() -> None:
    scheme = f"pitest-{uuid.uuid4().hex[:8]}"
    given: list[str] = []
    memory = MemoryStore()

    async def opener(url: str) -> Store:
        given.append(url)
        return memory

    assert scheme not in store_schemes()
    register_store_scheme(scheme, opener)
    assert store_schemes()[scheme] == "store"
    assert not names_engine(f"{scheme}://somewhere")
    assert await open_store(f"{scheme}://somewhere/x?y=1") is memory
    assert given == [f"{scheme}://somewhere/x?y=1"], "the whole URL reaches the opener"

    register_store_scheme(scheme, opener, engine=True)
    assert store_schemes()[scheme] == "engine"
    assert names_engine(f"{scheme}://somewhere")
    with pytest.raises(UsageError) as raised:
        await open_store("nothing-registered://x")
    assert f"{scheme}:// (an engine)" in str(raised.value)


@pytest.mark.anyio
async def test_an_opener_that_gives_no_store_is_refused() -> None:
    scheme = f"pitest-{uuid.uuid4().hex[:8]}"

    async def opener(url: str) -> Store:
        return "not a store"  # type: ignore[return-value]

    register_store_scheme(scheme, opener)
    with pytest.raises(UsageError, match=f"the opener of {scheme}:// gave a str, not a Store"):
        await open_store(f"{scheme}://x")


@pytest.mark.parametrize("scheme", ["sqlite", "PostgreSQL", "postgres", "", "9lives", "a b", "x/y"])
def test_a_scheme_that_cannot_be_registered(scheme: str) -> None:
    async def opener(url: str) -> Store:
        return MemoryStore()

    before = store_schemes()
    with pytest.raises(UsageError):
        register_store_scheme(scheme, opener)
    assert store_schemes() == before
