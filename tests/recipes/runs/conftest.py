"""Runner tests run against every backend: in-memory, a real SQLite file, and PostgreSQL when
``PI_RECIPES_TEST_POSTGRES`` names a server (a fresh schema per test; skipped, saying so,
without one)."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import anyio
import pytest

from interactions.store import MemoryStore, SQLiteStore, Store, open_sqlite_store

HERE = Path(__file__).parent
RELEASE = str(HERE.parent.parent.parent / "examples" / "release.py")
RECIPES = str(HERE / "recipes_for_tests.py")
PARALLEL = f"{RECIPES}:parallel"
TWO_PAUSES = f"{HERE / 'recipes_for_tests.py'}:approval_then_question"


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    if request.param == "memory":
        async with MemoryStore() as memory:
            yield memory
    elif request.param == "sqlite":
        opened: SQLiteStore = await open_sqlite_store(tmp_path / "state.db")
        async with opened:
            yield opened
    else:
        async with postgres_store("the runner tests") as pg:
            yield pg


@asynccontextmanager
async def postgres_store(tests: str) -> AsyncIterator[Store]:
    """A PostgreSQL store in a fresh schema (dropped after) on ``PI_RECIPES_TEST_POSTGRES``;
    without it, ``tests`` are skipped, saying so."""
    async with postgres_stores(tests, 1) as (pg,):
        yield pg


@asynccontextmanager
async def postgres_stores(tests: str, count: int) -> AsyncIterator[tuple[Store, ...]]:
    """``count`` PostgreSQL stores, each with its own connections (as in as many processes),
    on one fresh schema (see :func:`postgres_store`)."""
    dsn = os.environ.get("PI_RECIPES_TEST_POSTGRES")
    if not dsn:
        pytest.skip(f"set PI_RECIPES_TEST_POSTGRES to run {tests} on PostgreSQL")
    from interactions.store import PostgresStore

    schema = f"pi_test_{uuid.uuid4().hex}"
    try:
        async with AsyncExitStack() as stack:
            stores = [
                await stack.enter_async_context(
                    PostgresStore(dsn, schema=schema, poll_interval=0.2)
                )
                for _ in range(count)
            ]
            yield tuple(stores)
    finally:
        await anyio.to_thread.run_sync(_drop_schema, dsn, schema)


def _drop_schema(dsn: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


QUESTIONS = f"{RECIPES}:questions"
ACT_AFTER_APPROVAL = f"{RECIPES}:act_after_approval"
SLOW_DEPLOY = f"{RECIPES}:slow_deploy"
CUT_SHORT = f"{RECIPES}:cut_short"
UNSTORABLE = f"{RECIPES}:unstorable"
LOOPING = f"{RECIPES}:looping"
ENV_PRINTER = f"{RECIPES}:env_printer"
