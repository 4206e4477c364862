"""How the email host sends: from the store's log with a leased cursor. A mail server that is
down (and wants a login) gets the mails once it is up, the cursor held before the question
until then, the password never logged; a recipient refused for good is skipped, the others
served; two hosts on one store (SQLite, PostgreSQL) send each mail once, and when the one
sending stops the other goes on from the cursor. Backoffs are short and the leases' clock is
injected: no test waits for a lease to lapse."""

from __future__ import annotations

import logging
import os
import threading
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path

import anyio
import anyio.to_thread
import pytest

from hosts.email._config import PASSWORD_ENV, USERNAME_ENV
from interactions.store import RunStatus, SQLiteStore, Store
from interactions.testing.store_conformance import new_interaction, new_run
from recipes.runs import Runner
from tests.hosts.email.harness import Clock, email_host
from tests.hosts.email.mailbox import MailServer

pytestmark = pytest.mark.anyio

DSN = os.environ.get("PI_RECIPES_TEST_POSTGRES", "")
PASSWORD = "smtp-pw-" + uuid.uuid4().hex


class Said(logging.Handler):
    """Sets ``event`` when a log record holds ``words``."""

    def __init__(self, words: str) -> None:
        super().__init__(logging.INFO)
        self.words = words
        self.event = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if self.words in record.getMessage():
            self.event.set()

    async def wait(self, within: float = 10.0) -> None:
        assert await anyio.to_thread.run_sync(self.event.wait, within), self.words


@pytest.fixture
def said() -> Iterator[Callable[[str], Said]]:
    logger = logging.getLogger("hosts.email")
    handlers: list[Said] = []
    level = logger.level
    logger.setLevel(logging.INFO)

    def listen(words: str) -> Said:
        handlers.append(Said(words))
        logger.addHandler(handlers[-1])
        return handlers[-1]

    yield listen
    for handler in handlers:
        logger.removeHandler(handler)
    logger.setLevel(level)


async def test_a_mail_server_down_then_up_gets_the_mails_after(
    tmp_path: Path, said: Callable[[str], Said], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    mail = MailServer(login=("mailer", PASSWORD))  # not started: down
    env = {USERNAME_ENV: "mailer", PASSWORD_ENV: PASSWORD}
    retried = said("trying again")
    try:
        async with (
            SQLiteStore(tmp_path / "state.db", poll_interval=0.02) as store,
            email_host(store, tmp_path, mail, env=env) as running,
        ):
            await running.start("gate: Ship it?")
            await retried.wait()
            asked = await store.latest_cursor()
            assert running.host.consumer.cursor < asked, "the cursor waits before the question"
            mail.start()
            mails = await mail.mailbox.wait(2)
            assert await running.host.consumer.reached(asked, within=10)
            assert sorted(m.to for m in mails) == [("ada@example.com",), ("bob@example.com",)]
            assert mail.logins == ["mailer"], "one connection, logged in"
    finally:
        mail.stop()
    assert "not sent to ada, bob (ConnectionRefusedError" in caplog.text or (
        "not sent to ada, bob (SMTPConnectError" in caplog.text
    ), caplog.text
    assert PASSWORD not in caplog.text


async def test_a_question_answered_while_the_server_is_down_is_not_mailed_after(
    tmp_path: Path, said: Callable[[str], Said]
) -> None:
    mail = MailServer()  # down
    retried, dropped = said("trying again"), said("the question is no longer open")
    try:
        async with (
            SQLiteStore(tmp_path / "state.db", poll_interval=0.02) as store,
            email_host(store, tmp_path, mail) as running,
        ):
            run_id = await running.start("gate: Ship it?")
            await retried.wait()
            await Runner(store, env={}, host="test").answer(
                run_id, "int-c1", {"approved": True}, answered_by="ada"
            )
            await dropped.wait()
            assert await running.host.consumer.reached(await store.latest_cursor(), within=10)
            mail.start()
            await running.start("gate: And this one?")
            mails = await mail.mailbox.wait(2)
            assert all("And this one?" in m.subject for m in mails), "the first was not sent"
    finally:
        mail.stop()


async def test_a_question_this_version_cannot_read_is_skipped_and_the_next_is_mailed(
    tmp_path: Path, said: Callable[[str], Said]
) -> None:
    """A question another tool stored (no ``reason``: no pause record) is not mailed, and the
    outbox goes on past it, instead of trying it again for ever."""
    mail = MailServer()
    mail.start()
    skipped = said("cannot read (reason: Field required)")
    try:
        async with (
            SQLiteStore(tmp_path / "state.db", poll_interval=0.02) as store,
            email_host(store, tmp_path, mail) as running,
        ):
            foreign = await store.create_run(new_run(id="run-foreign"))
            odd = {"message": "no reason", "metadata": {"approvers": ["ada"]}}
            await store.update_run(
                foreign.id,
                expected_version=foreign.version,
                status=RunStatus.PAUSED_WAITING_HUMAN,
                new_interactions=[new_interaction("int-odd", descriptor=odd)],
            )
            await skipped.wait()
            await running.start("gate: Ship it?")
            mails = await mail.mailbox.wait(2)
            assert all("Ship it?" in m.subject for m in mails), [m.subject for m in mails]
            assert await running.host.consumer.reached(await store.latest_cursor(), within=10)
    finally:
        mail.stop()


async def test_a_recipient_refused_for_good_is_skipped(
    tmp_path: Path, said: Callable[[str], Said]
) -> None:
    mail = MailServer(refuse=("ada@example.com",))  # the first mailed: the next still goes
    mail.start()
    refused = said("refused for good")
    try:
        async with (
            SQLiteStore(tmp_path / "state.db", poll_interval=0.02) as store,
            email_host(store, tmp_path, mail) as running,
        ):
            await running.start("gate: Ship it?")
            [bob] = await mail.mailbox.wait(1)
            await refused.wait()
            assert await running.host.consumer.reached(await store.latest_cursor(), within=10)
            assert bob.to == ("bob@example.com",)
            sent = [(s.to.name, s.refused) for s in running.host.outbox.sent]
            assert sent == [("ada", True), ("bob", False)]
    finally:
        mail.stop()


Opener = Callable[[], Store]


@pytest.fixture(params=["sqlite", "postgres"])
def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    """Opens another instance of one shared store (another server on it)."""
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


@asynccontextmanager
async def _opened(open_store: Opener) -> AsyncIterator[Store]:
    async with open_store() as store:
        yield store


async def test_two_hosts_on_one_store_send_each_mail_once(
    open_store: Opener, tmp_path: Path
) -> None:
    mail = MailServer()
    mail.start()
    try:
        async with (
            _opened(open_store) as one,
            _opened(open_store) as two,
            email_host(one, tmp_path, mail, owner="one") as first,
            email_host(two, tmp_path, mail, owner="two", serve=False,
                       base_url=first.base_url) as second,
        ):  # fmt: skip
            for n in range(3):
                await first.start(f"gate: Release {n}?")
            await mail.mailbox.wait(6)
            [holder] = [h for h in (first.host, second.host) if h.outbox.sent]
            assert await holder.consumer.reached(await one.latest_cursor(), within=10)
        counted = Counter((m.to, m.subject) for m in mail.mailbox.mails)
        assert len(mail.mailbox.mails) == 6 and set(counted.values()) == {1}
    finally:
        mail.stop()


async def test_a_host_that_stops_before_sending_leaves_the_mail_to_the_next(
    open_store: Opener, tmp_path: Path, said: Callable[[str], Said]
) -> None:
    mail = MailServer()  # down while the first host holds the cursor
    clock = Clock()
    retried = said("trying again")
    try:
        async with _opened(open_store) as one, _opened(open_store) as two:
            async with email_host(one, tmp_path, mail, clock=clock, owner="one") as first:
                run_id = await first.start("gate: Release?")
                await retried.wait()
                base = first.base_url
            mail.start()  # up again, but the first host is gone, its lease not lapsed yet
            async with email_host(
                two, tmp_path, mail, clock=clock, owner="two", serve=False, base_url=base
            ) as second:
                clock.ahead = timedelta(seconds=60)  # the first host's lease lapses
                mails = await mail.mailbox.wait(2)
                assert await second.host.consumer.reached(await two.latest_cursor(), within=10)
        assert sorted(m.to for m in mails) == [("ada@example.com",), ("bob@example.com",)]
        assert all(run_id in m.part("plain") for m in mails)
    finally:
        mail.stop()
