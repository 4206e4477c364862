"""The PostgreSQL store's calls run on the event loop, awaiting the server's socket (``_evented``):
what that must keep true of a call, on asyncio and trio alike.

Needs a server (``PI_RECIPES_TEST_POSTGRES``); each test gets a fresh schema. A slow link (a
local proxy that delivers the server's answers late) holds a call in its wait for the server.
"""

from __future__ import annotations

import time

import anyio
import pytest

from interactions.store import RunStatus
from interactions.store.postgres import PostgresStore
from interactions.testing.store_conformance import new_run
from tests.interactions.store.test_postgres import DSN
from tests.interactions.store.test_postgres_last_written import SlowLink

pytestmark = pytest.mark.anyio


DELAY = 0.4
"""Seconds the slow link holds each answer of the server."""


async def test_a_call_waiting_for_the_server_leaves_the_event_loop_free(schema: str) -> None:
    ticks: list[float] = []

    async def tick() -> None:
        while True:
            ticks.append(time.monotonic())
            await anyio.sleep(0.02)

    async with SlowLink().running() as link, PostgresStore(link.dsn(), schema=schema) as store:
        link.delay = DELAY
        async with anyio.create_task_group() as tg:
            tg.start_soon(tick)
            started = time.monotonic()
            await store.create_run(new_run())
            ended = time.monotonic()
            tg.cancel_scope.cancel()
    during = [t for t in ticks if started < t < ended]
    assert ended - started >= DELAY
    assert len(during) >= 5, f"the loop ran {len(during)} times in {ended - started:.2f} s"


async def test_a_cancelled_call_still_ends_whole_and_the_store_goes_on(schema: str) -> None:
    async with SlowLink().running() as link, PostgresStore(link.dsn(), schema=schema) as store:
        run = new_run()
        await store.create_run(run)
        link.delay = DELAY
        with anyio.move_on_after(DELAY / 4):  # cancelled while it waits for the server
            await store.update_run(run.id, expected_version=1, status=RunStatus.FINISHED)
        link.delay = 0.0
        assert (await store.get_run(run.id)).status is RunStatus.FINISHED
        async with PostgresStore(link.dsn(), schema=schema) as other:
            assert (await other.get_run(run.id)).version == 2  # written once, committed


async def test_calls_made_together_each_run_whole(schema: str) -> None:
    async with SlowLink().running() as link, PostgresStore(link.dsn(), schema=schema) as store:
        runs = [new_run() for _ in range(6)]
        link.delay = 0.05
        async with anyio.create_task_group() as tg:
            for run in runs:
                tg.start_soon(store.create_run, run)
        async with anyio.create_task_group() as tg:
            for run in runs:
                tg.start_soon(
                    lambda run_id: store.update_run(
                        run_id, expected_version=1, status=RunStatus.FINISHED
                    ),
                    run.id,
                )
        link.delay = 0.0
        assert {(await store.get_run(r.id)).status for r in runs} == {RunStatus.FINISHED}


async def test_a_large_value_is_written_and_read_back(schema: str) -> None:
    # Several megabytes: the client waits for the socket to take them, not only for answers.
    checkpoint = {"notes": ["x" * 1000 + str(i) for i in range(6000)]}
    async with PostgresStore(DSN, schema=schema) as store:
        run = new_run()
        await store.create_run(run)
        await store.update_run(
            run.id, expected_version=1, status=RunStatus.FINISHED, checkpoint=checkpoint
        )
        assert (await store.get_run(run.id)).checkpoint == checkpoint
