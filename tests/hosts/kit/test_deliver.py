"""Webhooks delivered from the store's own log to a real local receiver, with real httpx, on
real stores: every interaction event arrives, in order, signed (the receiver verifies each
signature with its own code); a receiver that refuses or fails is tried again until it takes
them, none lost, none reordered; two servers on one store deliver each event once, and when
the one delivering stops, the other goes on from the cursor. Backoffs are short and the
leases' clock is injected: no test waits for a lease to lapse."""

from __future__ import annotations

import logging
import os
import sqlite3
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest

from hosts._kit import Webhook, WebhookDeliverer, WebhookSecret, delivering
from interactions.store import MemoryStore, RunStatus, SQLiteStore, Store, VoteStore
from interactions.testing.store_conformance import answer, new_interaction, new_run, new_vote
from tests.hosts.kit.webhook_receiver import Receiver

pytestmark = pytest.mark.anyio

DSN = os.environ.get("PI_RECIPES_TEST_POSTGRES", "")
SECRET = "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"  # 24 bytes, as the spec's examples
FAST: dict[str, Any] = {"backoff": (0.01, 0.05), "renew_every": 0.05, "timeout": 2.0}

Opener = Callable[[], Store]


class Clock:
    """The leases' clock: moves only when a test moves it."""

    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    """Opens a store instance on one shared store (a second one: another server on it; the
    memory store has one instance)."""
    if request.param == "memory":
        shared = MemoryStore()
        yield lambda: shared
        return
    if request.param == "sqlite":
        yield lambda: SQLiteStore(tmp_path / "state.db", poll_interval=0.02)
        return
    if not DSN:
        pytest.skip("set PI_RECIPES_TEST_POSTGRES to run the PostgreSQL store tests")
    import psycopg

    from interactions.store.postgres import PostgresStore

    schema = f"pi_test_{uuid.uuid4().hex}"
    yield lambda: PostgresStore(DSN, schema=schema, poll_interval=0.02)
    with psycopg.connect(DSN, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    got = Receiver(SECRET)
    yield got
    got.close()


@asynccontextmanager
async def _opened(open_store: Opener) -> AsyncIterator[Store]:
    store = open_store()
    if isinstance(store, MemoryStore):
        yield store
        return
    async with store:
        yield store


async def _questions(store: Store, runs: int = 3) -> list[tuple[str, str, str]]:
    """Questions asked and settled in ``runs`` interleaved runs; the ``(type, run_id,
    interaction_id)`` a webhook must post for them, in the order they were stored. Beside
    them: events that post nothing (a run created, status changes, the run's own await wait)."""
    expected: list[tuple[str, str, str]] = []
    made = [await store.create_run(new_run()) for _ in range(runs)]
    for run in made:
        await store.update_run(
            run.id, expected_version=1, status=RunStatus.PAUSED_WAITING_HUMAN,
            new_interactions=[new_interaction("int-a"), new_interaction("int-w", kind="await"),
                              new_interaction("int-b")],
        )  # fmt: skip
        expected += [
            ("interaction.opened", run.id, "int-a"),
            ("interaction.opened", run.id, "int-b"),
        ]
    await store.append_events(made[0].id, [("interaction_reminded", {"interaction_id": "int-a"})])
    expected.append(("interaction.reminded", made[0].id, "int-a"))
    for i, run in enumerate(made):
        if i % 3 == 0:
            await store.answer_interaction(run.id, "int-a", answer("yes", answered_by="ada"))
            expected.append(("interaction.answered", run.id, "int-a"))
        elif i % 3 == 1:
            assert isinstance(store, VoteStore)
            await store.cast_vote(run.id, "int-a", new_vote("ada"), required=1)
            expected += [
                ("interaction.voted", run.id, "int-a"),
                ("interaction.answered", run.id, "int-a"),
            ]
        else:
            await store.answer_interaction(run.id, "int-a", answer(None, status="cancelled"))
            expected.append(("interaction.cancelled", run.id, "int-a"))
        await store.answer_interaction(
            run.id, "int-w", answer("all answered", answered_by="system")
        )
        await store.answer_interaction(run.id, "int-b", answer(None, status="expired"))
        expected.append(("interaction.expired", run.id, "int-b"))
    return expected


def _posted(receiver: Receiver) -> list[tuple[str, str, str]]:
    return [(r.body["type"], r.body["run_id"], r.body["interaction_id"]) for r in receiver.received]


def _check_signed_and_ordered(receiver: Receiver) -> None:
    assert all(r.signed for r in receiver.received), "every signature verifies"
    ids = [r.body["id"] for r in receiver.received]
    assert [r.headers["webhook-id"] for r in receiver.received] == ids
    cursors = [int(i.removeprefix("evt_")) for i in ids]
    assert cursors == sorted(cursors) and len(set(cursors)) == len(cursors), "in order, once each"


class _Said(logging.Handler):
    """Set when a log line says ``words``."""

    def __init__(self, words: str) -> None:
        super().__init__()
        self.words = words
        self.said = anyio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if self.words in record.getMessage():
            self.said.set()

    async def wait(self) -> None:
        await self.said.wait()


async def test_every_interaction_event_arrives_in_order_signed(
    open_store: Opener, receiver: Receiver
) -> None:
    async with _opened(open_store) as store:
        async with delivering(store, [Webhook(receiver.url, WebhookSecret(SECRET))], **FAST):
            expected = await _questions(store)
            await receiver.wait(received=len(expected))
        assert _posted(receiver) == expected
        _check_signed_and_ordered(receiver)
        opened = receiver.received[0]
        assert opened.body["data"]["question"] == {"message": "question int-a?"}
        answered = next(r for r in receiver.received if r.body["type"] == "interaction.answered")
        assert answered.body["data"]["interaction_id"] == "int-a"
        assert datetime.fromisoformat(answered.body["at"]).tzinfo is not None
        assert set(opened.body) == {"type", "id", "run_id", "interaction_id", "at", "data"}
        assert opened.headers["content-type"] == "application/json"


async def test_a_receiver_down_then_up_gets_every_event_none_lost_none_reordered(
    open_store: Opener,
    receiver: Receiver,
    caplog: pytest.LogCaptureFixture,
    request: pytest.FixtureRequest,
) -> None:
    caplog.set_level(logging.INFO, "hosts")
    refused = _Said("ConnectError")
    logging.getLogger("hosts").addHandler(refused)
    request.addfinalizer(lambda: logging.getLogger("hosts").removeHandler(refused))
    clock = Clock()
    async with _opened(open_store) as store:
        hook = Webhook(receiver.url, WebhookSecret(SECRET))
        async with delivering(store, [hook], clock=clock, **FAST) as [deliverer]:
            receiver.down()  # refusing connections
            expected = await _questions(store, runs=4)
            with anyio.fail_after(10):
                await refused.wait()
            receiver.status = 503  # up, but failing
            receiver.up()
            await receiver.wait(attempts=3)
            clock.now += timedelta(hours=1)  # an hour later
            receiver.status = 200
            await receiver.wait(received=len(expected))
            more = await _questions(store, runs=1)
            await receiver.wait(received=len(expected) + len(more))
            assert await deliverer.reached(await store.latest_cursor(), within=10)
        assert _posted(receiver) == expected + more
        _check_signed_and_ordered(receiver)
        stamps = {int(r.headers["webhook-timestamp"]) for r in receiver.received}
        assert stamps == {int(clock.now.timestamp())}, "signed at the attempt, not at the event"
        assert deliverer.delivered == len(expected + more)
        assert "HTTP 503" in caplog.text
        for secret in (SECRET, SECRET.removeprefix("whsec_"), "in-the-url", "/hooks"):
            assert secret not in caplog.text, "neither the secret nor the URL is logged"


async def test_two_servers_on_one_store_deliver_each_event_once(
    open_store: Opener, receiver: Receiver
) -> None:
    clock = Clock()
    hook = Webhook(receiver.url, WebhookSecret(SECRET))
    async with AsyncExitStack() as stack:
        stores = [await stack.enter_async_context(_opened(open_store)) for _ in range(2)]
        a = WebhookDeliverer(stores[0], hook, owner="server-a", clock=clock, **FAST)
        b = WebhookDeliverer(stores[1], hook, owner="server-b", clock=clock, **FAST)
        async with anyio.create_task_group() as group:
            await group.start(a.run)
            await group.start(b.run)
            first = await _questions(stores[0], runs=2)
            first += await _questions(stores[1], runs=2)
            await receiver.wait(received=len(first))
            assert _posted(receiver) == first
            latest = await stores[0].latest_cursor()
            holder, other = (a, b) if a.delivered else (b, a)  # only the holder posts
            assert await holder.reached(latest, within=10)  # (never wait on the other's cursor)
            assert sorted([a.delivered, b.delivered]) == [0, len(first)]
            group.cancel_scope.cancel()  # the server delivering dies, the other one too
        async with anyio.create_task_group() as group:  # the other one alone, its lease lapsed
            clock.now += timedelta(seconds=holder.lease + 1)
            await group.start(other.run)
            later = await _questions(stores[0], runs=2)
            await receiver.wait(received=len(first) + len(later))
            assert await other.reached(await stores[0].latest_cursor(), within=10)
            group.cancel_scope.cancel()
        assert _posted(receiver) == first + later
        _check_signed_and_ordered(receiver)
        assert other.delivered == len(later)


async def test_a_store_away_for_a_while_loses_nothing(
    tmp_path: Path, receiver: Receiver, caplog: pytest.LogCaptureFixture
) -> None:
    """The consumers' table gone (another connection renamed it): the deliverer logs the
    store's failure, tries again, and once it is back goes on from the cursor."""
    caplog.set_level(logging.WARNING, "hosts")
    path = tmp_path / "state.db"
    async with SQLiteStore(path, poll_interval=0.02) as store:
        hook = Webhook(receiver.url, WebhookSecret(SECRET))
        async with delivering(store, [hook], **FAST) as [deliverer]:
            expected = await _questions(store, runs=1)
            await receiver.wait(received=len(expected))
            assert await deliverer.reached(await store.latest_cursor(), within=10)
            failed = _Said("the store failed (StoreUnavailableError)")
            logging.getLogger("hosts").addHandler(failed)
            try:
                _rename(path, "consumers", "consumers_away")
                with anyio.fail_after(10):
                    await failed.wait()
                more = await _questions(store, runs=1)
                _rename(path, "consumers_away", "consumers")
                await receiver.wait(received=len(expected) + len(more))
                assert await deliverer.reached(await store.latest_cursor(), within=10)
            finally:
                logging.getLogger("hosts").removeHandler(failed)
        assert _posted(receiver) == expected + more, "none lost, none reordered, none twice"


def _rename(path: Path, table: str, to: str) -> None:
    other = sqlite3.connect(path)
    try:
        other.execute(f"ALTER TABLE {table} RENAME TO {to}")
        other.commit()
    finally:
        other.close()
