"""The PostgreSQL store's update of a run it wrote last, and its new runs, wait for the server
once (what they write: ``test_last_written``).

Needs a server (``PI_RECIPES_TEST_POSTGRES``); each test gets a fresh schema. The round trips
are counted over a link that delays every answer of the server (a local proxy): a write that
waits for the server once takes one delay, one that waits three times takes three.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager

import anyio
import anyio.abc
import pytest

from interactions import UnknownRunError
from interactions.store import RunStatus
from interactions.store.postgres import PostgresStore
from interactions.testing.store_conformance import answer, new_interaction, new_run
from tests.interactions.store.test_last_written import _paused_on
from tests.interactions.store.test_postgres import DSN

pytestmark = pytest.mark.anyio


# -- round trips --------------------------------------------------------------------------------

DELAY = 0.3
"""Seconds the slow link holds each answer of the server: one round trip's cost on it (a
call's own work on a loaded machine must stay well below it, see ``round_trips``)."""


class SlowLink:
    """A local TCP proxy to the test server that delivers what the server sends ``delay``
    seconds late (in order), and what the client sends at once. ``delay`` may change at any
    time (stores open on a fast link, then are timed on a slow one)."""

    def __init__(self) -> None:
        self.delay = 0.0
        self.port = 0

    def dsn(self) -> str:
        from psycopg.conninfo import make_conninfo

        return make_conninfo(DSN, host="127.0.0.1", port=self.port)

    async def round_trips(self, call: Awaitable[object]) -> int:
        """How many round trips ``await call`` waited for: each costs at least ``delay``, and
        what the call does besides waiting (more on a loaded machine) counts for none until it
        takes nearly a whole ``delay`` more."""
        started = time.monotonic()
        await call
        return math.floor((time.monotonic() - started) / self.delay + 0.05)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[SlowLink]:
        from psycopg.conninfo import conninfo_to_dict

        target = conninfo_to_dict(DSN)
        host, port = str(target.get("host") or "127.0.0.1"), int(target.get("port") or 5432)
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
        self.port = listener.extra(anyio.abc.SocketAttribute.local_port)
        async with listener, anyio.create_task_group() as tg:
            tg.start_soon(listener.serve, functools.partial(self._serve, host, port))
            yield self
            tg.cancel_scope.cancel()

    async def _serve(self, host: str, port: int, client: anyio.abc.SocketStream) -> None:
        async with (
            client,
            await anyio.connect_tcp(host, port) as server,
            anyio.create_task_group() as tg,
        ):
            tg.start_soon(self._late, server, client)
            async for data in client:
                await server.send(data)
            tg.cancel_scope.cancel()

    async def _late(self, source: anyio.abc.SocketStream, sink: anyio.abc.SocketStream) -> None:
        send, receive = anyio.create_memory_object_stream[tuple[float, bytes]](math.inf)

        async def deliver() -> None:
            async with receive:
                async for due, data in receive:
                    await anyio.sleep(max(0.0, due - time.monotonic()))
                    await sink.send(data)

        async with anyio.create_task_group() as tg, send:
            tg.start_soon(deliver)
            async for data in source:
                await send.send((time.monotonic() + self.delay, data))


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the store's calls are the same on trio
async def test_a_run_is_created_paused_resumed_and_ended_one_round_trip_each(
    schema: str,
) -> None:
    async with (
        SlowLink().running() as link,
        PostgresStore(link.dsn(), schema=schema) as store,
        PostgresStore(link.dsn(), schema=schema) as other,
    ):
        link.delay = DELAY
        run_id = new_run().id
        assert await link.round_trips(store.create_run(new_run(id=run_id))) == 1
        pause = store.update_run(
            run_id,
            expected_version=1,
            status=RunStatus.PAUSED_WAITING_HUMAN,
            checkpoint={"step": 1},
            new_interactions=[new_interaction("int-a")],
        )
        assert await link.round_trips(pause) == 1
        resume = store.update_run(
            run_id, expected_version=2, status=RunStatus.RUNNING, answers={"int-a": answer()}
        )
        assert await link.round_trips(resume) == 1
        end = store.update_run(
            run_id, expected_version=3, status=RunStatus.FINISHED, checkpoint={"step": 2}
        )
        assert await link.round_trips(end) == 1
        assert (await other.get_run(run_id)).status is RunStatus.FINISHED

        # A store that did not write the run last reads it first: more waits than one.
        run = await _paused_on(store, "int-a")
        resume = other.update_run(
            run.id, expected_version=2, status=RunStatus.RUNNING, answers={"int-a": answer()}
        )
        assert await link.round_trips(resume) >= 3  # a read, then the write

        # Unless it has just read the run, then all its interactions (as answering does): once.
        run = await _paused_on(store, "int-a")
        assert await link.round_trips(other.get_run(run.id)) == 1
        assert await link.round_trips(other.list_interactions(run.id)) == 1
        resume = other.update_run(
            run.id, expected_version=2, status=RunStatus.RUNNING, answers={"int-a": answer()}
        )
        assert await link.round_trips(resume) == 1
        assert (await store.get_run(run.id)).status is RunStatus.RUNNING


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the store's calls are the same on trio
async def test_a_run_is_read_with_its_interactions_in_one_round_trip_then_resumed_in_one(
    schema: str,
) -> None:
    async with (
        SlowLink().running() as link,
        PostgresStore(link.dsn(), schema=schema) as store,
        PostgresStore(link.dsn(), schema=schema) as other,
    ):
        run = await _paused_on(store, "int-a", "int-b")
        await store.answer_interaction(run.id, "int-a", answer("a"))
        link.delay = DELAY
        read = other.get_run_with_interactions(run.id)
        assert await link.round_trips(read) == 1
        got, interactions = await other.get_run_with_interactions(run.id)
        assert (got, [r.pending for r in interactions]) == (run, [False, True])
        # What it read is what the resume decides on: no read before the write.
        resume = other.update_run(
            run.id, expected_version=2, status=RunStatus.RUNNING, answers={"int-b": answer("b")}
        )
        assert await link.round_trips(resume) == 1
        started = time.monotonic()  # an unknown run is refused in the same one
        with pytest.raises(UnknownRunError):
            await other.get_run_with_interactions("run-nope")
        assert round((time.monotonic() - started) / DELAY) == 1
