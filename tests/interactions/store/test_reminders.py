"""Sweeps racing to write one reminder from separate store instances (each its own connection,
as separate servers on one store have): it is written once, the SQLite file's and PostgreSQL's
locks decide. The contract itself is
:class:`~interactions.testing.store_conformance.RemindersConformance`, run by each backend's
test module."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AsyncExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import pytest

from interactions.store import ReminderStore, RunStatus, SQLiteStore, Store
from interactions.store.postgres import PostgresStore
from interactions.testing.store_conformance import new_interaction, new_run

DSN = os.environ.get("PI_RECIPES_TEST_POSTGRES", "")
SERVERS = 6
T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)

Opener = Callable[[], Store]


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
async def stores(open_one: Opener) -> AsyncIterator[list[Store]]:
    async with AsyncExitStack() as stack:
        yield [await stack.enter_async_context(open_one()) for _ in range(SERVERS)]


@pytest.mark.anyio
async def test_sweeps_on_separate_connections_write_a_reminder_once(
    stores: list[Store],
) -> None:
    first = stores[0]
    run = await first.create_run(new_run())
    await first.update_run(
        run.id, expected_version=run.version, status=RunStatus.PAUSED_WAITING_HUMAN,
        new_interactions=[new_interaction("int-a", requested_at=T0,
                                          expires_at=T0 + timedelta(days=1))],
        now=T0,
    )  # fmt: skip
    got: dict[int, bool] = {}

    async def remind(i: int, number: int) -> None:
        store = stores[i]
        assert isinstance(store, ReminderStore)
        data = {"interaction_id": "int-a", "count": number, "approvers": []}
        at = T0 + timedelta(hours=number)
        got[i] = await store.record_reminder(run.id, "int-a", "reminded", number, data,
                                             now=at) is not None  # fmt: skip

    for number in (1, 2):
        got.clear()
        with anyio.fail_after(20):
            async with anyio.create_task_group() as tg:
                for i in range(SERVERS):
                    tg.start_soon(remind, i, number)
        assert sorted(got.values()) == [False] * (SERVERS - 1) + [True], got
    counts = [e.data["count"] for e in await first.list_events(run.id)
              if e.type == "interaction_reminded"]  # fmt: skip
    assert counts == [1, 2]
