"""The PostgreSQL store decides an update on what it last wrote of the run, in one wait for the
server; what another process wrote since is never overwritten, and a refusal is the one a read
first would have given.

Needs a server (``PI_RECIPES_TEST_POSTGRES``); each test gets a fresh schema. The round trips
are counted over a link that delays every answer of the server (a local proxy): a write that
waits for the server once takes one delay, one that waits three times takes three.
"""

from __future__ import annotations

import functools
import math
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Iterator
from contextlib import asynccontextmanager

import anyio
import anyio.abc
import pytest

from interactions import ConflictError
from interactions.store import InteractionAnswer, RunRecord, RunStatus
from interactions.store.postgres import PostgresStore
from interactions.testing.store_conformance import answer, new_interaction, new_run
from tests.interactions.store.test_postgres import DSN, NO_SERVER, sql

pytestmark = pytest.mark.anyio


@pytest.fixture
def schema() -> Iterator[str]:
    if not DSN:
        pytest.skip(NO_SERVER)
    name = f"pi_test_{uuid.uuid4().hex}"
    yield name
    sql(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


async def _paused_on(store: PostgresStore, *ids: str) -> RunRecord:
    """A run this store created and paused on the interactions ``ids`` (version 2)."""
    run = await store.create_run(new_run())
    return await store.update_run(
        run.id,
        expected_version=1,
        status=RunStatus.PAUSED_WAITING_HUMAN,
        new_interactions=[new_interaction(i) for i in ids],
    )


async def test_an_update_returns_what_a_read_returns(schema: str) -> None:
    async with PostgresStore(DSN, schema=schema) as store:
        run = await _paused_on(store, "int-a")
        resumed = await store.update_run(
            run.id, expected_version=2, status=RunStatus.RUNNING, answers={"int-a": answer()}
        )  # no checkpoint given: the run keeps the one it had
        assert resumed == await store.get_run(run.id)
        assert (resumed.version, resumed.checkpoint) == (3, run.checkpoint)
        assert (await store.get_interaction(run.id, "int-a")).answer == answer()


async def test_a_run_moved_on_by_another_process_is_a_conflict(schema: str) -> None:
    async with (
        PostgresStore(DSN, schema=schema) as mine,
        PostgresStore(DSN, schema=schema) as other,
    ):
        run = await _paused_on(mine, "int-a")
        moved = await other.update_run(run.id, expected_version=2, checkpoint={"by": "other"})
        with pytest.raises(ConflictError) as caught:
            await mine.update_run(run.id, expected_version=2, checkpoint={"by": "me"})
        assert caught.value.reason == "version"
        assert await mine.get_run(run.id) == moved
        # Decided again on what the store holds, the next update goes through.
        ended = await mine.update_run(run.id, expected_version=3, status=RunStatus.CANCELLED)
        assert (ended.version, ended.checkpoint) == (4, {"by": "other"})
        events = await mine.list_events(run.id)
        assert [e.seq for e in events] == list(range(1, len(events) + 1))


async def test_an_answer_another_process_gave_since_is_kept(schema: str) -> None:
    theirs = InteractionAnswer(status="resolved", payload={"by": "other"}, via="other")
    closing = InteractionAnswer(status="cancelled", via="run_ended")
    async with (
        PostgresStore(DSN, schema=schema) as mine,
        PostgresStore(DSN, schema=schema) as other,
    ):
        run = await _paused_on(mine, "int-a", "int-b")
        await other.answer_interaction(run.id, "int-a", theirs)  # the run's version stays 2

        # This store last wrote int-a open; closing the open ones must not overwrite it.
        ended = await mine.update_run(
            run.id, expected_version=2, status=RunStatus.CANCELLED, close_open=closing
        )
        assert ended.version == 3
        records = {r.id: r.answer for r in await mine.list_interactions(run.id)}
        assert records == {"int-a": theirs, "int-b": closing}
        answered = [e.data for e in await mine.list_events(run.id) if e.type.endswith("answered")]
        assert [(d["interaction_id"], d["via"]) for d in answered] == [
            ("int-a", "other"),
            ("int-b", "run_ended"),
        ]


async def test_a_different_answer_to_what_another_process_answered_is_refused(
    schema: str,
) -> None:
    theirs = InteractionAnswer(status="resolved", payload={"by": "other"}, via="other")
    async with (
        PostgresStore(DSN, schema=schema) as mine,
        PostgresStore(DSN, schema=schema) as other,
    ):
        run = await _paused_on(mine, "int-a")
        await other.answer_interaction(run.id, "int-a", theirs)
        with pytest.raises(ConflictError) as caught:
            await mine.update_run(
                run.id, expected_version=2, status=RunStatus.RUNNING, answers={"int-a": answer()}
            )
        assert caught.value.reason == "already_answered"
        assert (await mine.get_interaction(run.id, "int-a")).answer == theirs
        assert (await mine.get_run(run.id)).version == 2


async def test_the_store_that_wrote_a_run_last_races_others_and_exactly_one_wins(
    schema: str,
) -> None:
    racers = 4
    async with PostgresStore(DSN, schema=schema) as last:
        others = [PostgresStore(DSN, schema=schema) for _ in range(racers - 1)]
        for store in others:
            await store.open()
        try:
            for _ in range(5):
                run = await _paused_on(last, "int-a")  # `last` decides without reading
                outcomes: dict[int, str] = {}

                async with anyio.create_task_group() as tg:
                    for me, store in enumerate([last, *others]):
                        tg.start_soon(_update, store, run.id, me, outcomes)
                assert sorted(outcomes.values()) == ["version"] * (racers - 1) + ["won"]
                (winner,) = [me for me, outcome in outcomes.items() if outcome == "won"]
                stored = await last.get_run(run.id)
                assert (stored.version, stored.checkpoint) == (3, {"by": winner})
                events = await last.list_events(run.id)
                assert [e.seq for e in events] == list(range(1, len(events) + 1))
                assert [e.type for e in events].count("x") == 1
        finally:
            for store in others:
                await store.close()


async def _update(store: PostgresStore, run_id: str, me: int, outcomes: dict[int, str]) -> None:
    """Move the run from version 2 with ``me``'s checkpoint; note "won" or the refusal."""
    try:
        await store.update_run(
            run_id, expected_version=2, checkpoint={"by": me}, events=[("x", {})]
        )
        outcomes[me] = "won"
    except ConflictError as exc:
        outcomes[me] = f"{exc.reason}"


# -- round trips --------------------------------------------------------------------------------

DELAY = 0.1
"""Seconds the slow link holds each answer of the server: one round trip's cost on it."""


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
        """How many round trips ``await call`` waited for."""
        started = time.monotonic()
        await call
        return round((time.monotonic() - started) / self.delay)

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

        # A store that did not write the run last reads it first: three waits.
        run = await _paused_on(store, "int-a")
        resume = other.update_run(
            run.id, expected_version=2, status=RunStatus.RUNNING, answers={"int-a": answer()}
        )
        assert await link.round_trips(resume) == 3
