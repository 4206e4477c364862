"""Owners racing for one consumer from separate store instances (each its own connection, as
separate servers on one store have): one wins, the SQLite file's and PostgreSQL's locks decide.
The contract itself is :class:`~interactions.testing.store_conformance.ConsumersConformance`,
run by each backend's test module."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AsyncExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import pytest

from interactions.store import ConsumerStore, SQLiteStore
from interactions.store.postgres import PostgresStore

DSN = os.environ.get("PI_RECIPES_TEST_POSTGRES", "")
OWNERS = 8
T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)

Opener = Callable[[], ConsumerStore]


@pytest.fixture(params=["sqlite", "postgres"])
def open_one(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    """Opens another store instance on one shared store."""
    if request.param == "sqlite":
        yield lambda: SQLiteStore(tmp_path / "state.db")
        return
    if not DSN:
        pytest.skip("set PI_RECIPES_TEST_POSTGRES to run the PostgreSQL store tests")
    import psycopg

    schema = f"pi_test_{uuid.uuid4().hex}"
    yield lambda: PostgresStore(DSN, schema=schema)
    with psycopg.connect(DSN, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@pytest.fixture
async def stores(open_one: Opener) -> AsyncIterator[list[ConsumerStore]]:
    async with AsyncExitStack() as stack:
        opened = [await stack.enter_async_context(open_one()) for _ in range(OWNERS)]  # type: ignore[arg-type]
        yield opened


async def _race(stores: list[ConsumerStore], at: datetime) -> dict[int, int | None]:
    got: dict[int, int | None] = {}

    async def lease(i: int) -> None:
        got[i] = await stores[i].lease_consumer("hook", f"server-{i}", lease=30, now=at)

    with anyio.fail_after(20):
        async with anyio.create_task_group() as tg:
            for i in range(len(stores)):
                tg.start_soon(lease, i)
    return got


@pytest.mark.anyio
async def test_owners_on_separate_connections_race_for_a_consumer_and_one_wins(
    stores: list[ConsumerStore],
) -> None:
    got = await _race(stores, T0)
    winners = [i for i, cursor in got.items() if cursor is not None]
    assert len(winners) == 1 and got[winners[0]] == 0, got
    first = winners[0]
    await stores[first].advance_consumer("hook", f"server-{first}", 3, now=T0)
    got = await _race(stores, T0 + timedelta(seconds=31))  # the winner's lease lapsed
    winners = [i for i, cursor in got.items() if cursor is not None]
    assert len(winners) == 1 and got[winners[0]] == 3, got
