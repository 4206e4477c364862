"""The PostgreSQL store: the conformance suite on a real server, reopening, JSON and time
fidelity, schema migrations, and the notification listener.

Needs a server: set ``PI_RECIPES_TEST_POSTGRES`` to a libpq DSN (CI does); without it every test
that needs one skips. Each test gets a fresh schema ``pi_test_<uuid>``, dropped afterwards.
"""

from __future__ import annotations

import contextlib
import math
import os
import socket
import subprocess
import sys
import threading
import time
import traceback
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from datetime import timedelta
from typing import Any

import anyio
import pytest

from interactions import ConflictError, UsageError
from interactions.errors import StoreUnavailableError
from interactions.store import RunRecord, RunStatus, StoreSchemaError, canonical_json
from interactions.store.postgres import PostgresStore, open_postgres_store
from interactions.testing.store_conformance import (
    AuditConformance,
    ConsumersConformance,
    DecisionsConformance,
    RemindersConformance,
    StoreConformance,
    VotesConformance,
    answer,
    new_decision,
    new_interaction,
    new_run,
    new_vote,
    store_snapshot,
)

DSN = os.environ.get("PI_RECIPES_TEST_POSTGRES", "")
NO_SERVER = "set PI_RECIPES_TEST_POSTGRES to run the PostgreSQL store tests"


def sql(statement: str, *params: Any) -> list[tuple[Any, ...]]:
    """Run one statement on a fresh autocommit connection (behind the store's back)."""
    import psycopg

    with psycopg.connect(DSN, autocommit=True) as conn:
        cursor = conn.execute(statement, params)
        return cursor.fetchall() if cursor.description else []


def schema_version() -> int:
    """The schema version this code writes (imported late: psycopg may be missing)."""
    from interactions.store._postgres_schema import SCHEMA_VERSION

    return SCHEMA_VERSION


def dsn_with(**options: str) -> str:
    """The test DSN with these server settings (``-c name=value``) added."""
    from psycopg.conninfo import make_conninfo

    return make_conninfo(DSN, options=" ".join(f"-c {k}={v}" for k, v in options.items()))


class TestPostgresStore(
    StoreConformance,
    DecisionsConformance,
    VotesConformance,
    ConsumersConformance,
    RemindersConformance,
    AuditConformance,
):
    @pytest.fixture
    async def store(self, schema: str) -> AsyncIterator[PostgresStore]:
        # A slow poll: the conformance wake-up test must be won by the in-process doorbell.
        async with PostgresStore(DSN, schema=schema, poll_interval=600) as store:
            yield store


async def _paused_run(schema: str) -> str:
    async with PostgresStore(DSN, schema=schema) as store:
        run = await store.create_run(new_run(checkpoint={"z": 1, "a": [1, 2]}))
        await store.update_run(
            run.id,
            expected_version=1,
            status=RunStatus.PAUSED_WAITING_HUMAN,
            new_interactions=[new_interaction("int-a"), new_interaction("int-b")],
        )
        await store.answer_interaction(run.id, "int-a", answer({"answer": "ok"}, via="cli"))
        return run.id


def _versions(schema: str) -> list[int]:
    rows = sql(f'SELECT version FROM "{schema}".store_migrations ORDER BY version')
    return [row[0] for row in rows]


@pytest.mark.anyio
async def test_state_survives_reopening(schema: str) -> None:
    run_id = await _paused_run(schema)
    async with PostgresStore(DSN, schema=schema) as first:
        before = await store_snapshot(first)
    async with await open_postgres_store(DSN, schema=schema) as second:
        assert await store_snapshot(second) == before
        run = await second.get_run(run_id)
        resumed = await second.update_run(
            run_id,
            expected_version=run.version,
            status=RunStatus.RUNNING,
            answers={"int-a": answer({"answer": "ok"}), "int-b": answer("later")},
        )
        assert resumed.version == run.version + 1


@pytest.mark.anyio
async def test_columns_hold_canonical_json_and_timestamptz(schema: str) -> None:
    run_id = await _paused_run(schema)
    [(checkpoint,)] = sql(f'SELECT checkpoint::text FROM "{schema}".runs WHERE id = %s', run_id)
    assert checkpoint == '{"a":[1,2],"z":1}'
    types = dict(
        sql(
            "SELECT table_name || '.' || column_name, data_type FROM information_schema.columns "
            "WHERE table_schema = %s",
            schema,
        )
    )
    assert types["runs.checkpoint"] == types["events.data"] == "json"
    assert types["runs.created_at"] == types["events.at"] == "timestamp with time zone"
    assert _versions(schema) == list(range(1, schema_version() + 1))


@pytest.mark.anyio
async def test_json_numbers_and_escapes_round_trip_exactly(schema: str) -> None:
    # jsonb would turn 1e+20 into an int and drop the sign of -0.0; a replay would then differ.
    payload = {"big": 1e20, "neg": -0.0, "tiny": 5e-324, "nul": "a\u0000b", "é": "ü"}
    async with PostgresStore(DSN, schema=schema) as store:
        run = await store.create_run(new_run(checkpoint={"payload": payload}))
        await store.update_run(
            run.id, expected_version=1, new_interactions=[new_interaction("int-a")]
        )
        record, stored = await store.answer_interaction(run.id, "int-a", answer(payload))
        assert stored
        read = await store.get_interaction(run.id, "int-a")
        assert read == record and read.answer is not None
        assert canonical_json(read.answer.payload) == canonical_json(payload)
        assert (await store.get_run(run.id)).checkpoint == {"payload": payload}
        assert not (await store.answer_interaction(run.id, "int-a", answer(payload)))[1]


@pytest.mark.anyio
async def test_records_are_utc_whatever_the_server_time_zone(schema: str) -> None:
    async with PostgresStore(dsn_with(TimeZone="Asia/Tokyo"), schema=schema) as store:
        run = await store.create_run(new_run())
        [event] = await store.list_events(run.id)
    for stamp in (run.created_at, (await _reread(schema, run.id)).created_at, event.at):
        assert stamp.utcoffset() == timedelta(0)


async def _reread(schema: str, run_id: str) -> Any:
    async with PostgresStore(DSN, schema=schema) as store:
        return await store.get_run(run_id)


# -- migrations ---------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_a_fresh_database_gets_its_schema(schema: str) -> None:
    assert sql("SELECT 1 FROM pg_namespace WHERE nspname = %s", schema) == []
    async with PostgresStore(DSN, schema=schema) as store:
        run = await store.create_run(new_run())
        assert (await store.get_run(run.id)).version == 1
    assert _versions(schema) == list(range(1, schema_version() + 1))


@pytest.mark.anyio
async def test_an_already_migrated_database_is_left_as_is(schema: str) -> None:
    run_id = await _paused_run(schema)
    applied = sql(f'SELECT version, applied_at FROM "{schema}".store_migrations')
    for _ in range(2):
        async with PostgresStore(DSN, schema=schema) as store:
            assert [r.id for r in await store.list_runs()] == [run_id]
    assert sql(f'SELECT version, applied_at FROM "{schema}".store_migrations') == applied


@pytest.mark.anyio
async def test_a_newer_schema_is_refused_clearly(schema: str) -> None:
    run_id = await _paused_run(schema)
    sql(f'INSERT INTO "{schema}".store_migrations (version) VALUES (%s)', schema_version() + 1)
    store = PostgresStore(DSN, schema=schema)
    with pytest.raises(StoreSchemaError, match=rf"version {schema_version() + 1}.*upgrade"):
        await store.open()
    with pytest.raises(StoreSchemaError):  # every call refuses, nothing is written
        await store.create_run(new_run())
    await store.close()
    assert _versions(schema)[-1] == schema_version() + 1
    assert sql(f'SELECT id FROM "{schema}".runs') == [(run_id,)]


@pytest.mark.anyio
async def test_tables_pi_recipes_did_not_create_are_refused(schema: str) -> None:
    sql(f'CREATE SCHEMA "{schema}"')
    sql(f'CREATE TABLE "{schema}".runs (note text)')
    with pytest.raises(StoreSchemaError, match="did not create"):
        await open_postgres_store(DSN, schema=schema)
    tables = sql("SELECT tablename FROM pg_tables WHERE schemaname = %s", schema)
    assert tables == [("runs",)]  # the refused migration rolled back whole


@pytest.mark.anyio
async def test_without_schema_the_search_path_decides(schema: str) -> None:
    with pytest.raises(StoreSchemaError, match="pass schema="):
        await open_postgres_store(dsn_with(search_path=schema))  # no such schema yet
    sql(f'CREATE SCHEMA "{schema}"')
    async with PostgresStore(dsn_with(search_path=schema)) as store:
        await store.create_run(new_run(id="run-here"))
    assert sql(f'SELECT id FROM "{schema}".runs') == [("run-here",)]


# -- writes that fail inside their transaction --------------------------------------------------


def _writes(store: PostgresStore, run_id: str) -> dict[str, Callable[[], Awaitable[Any]]]:
    """One write of each kind against a run paused on int-a (pending) at version 2."""
    return {
        "create_run": lambda: store.create_run(new_run()),
        "update_run": lambda: store.update_run(
            run_id, expected_version=2, status=RunStatus.RUNNING, answers={"int-a": answer()}
        ),
        "answer_interaction": lambda: store.answer_interaction(run_id, "int-a", answer()),
        "append_events": lambda: store.append_events(run_id, [("note", {})]),
    }


LOCKS = {
    "run": ("SELECT 1 FROM runs WHERE id = %s FOR UPDATE", ["update_run", "answer_interaction"]),
    "feed": ("UPDATE feed SET last = last WHERE %s <> ''", ["create_run", "update_run"]),
}
"""A row another client can hold locked, and writes that must wait for it."""


async def _paused(store: PostgresStore) -> RunRecord:
    """A run paused on one open interaction, ``int-a``."""
    run = await store.create_run(new_run())
    return await store.update_run(
        run.id,
        expected_version=1,
        status=RunStatus.PAUSED_WAITING_HUMAN,
        new_interactions=[new_interaction("int-a")],
    )


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("row", "write"),
    [(row, write) for row, (_, writes) in LOCKS.items() for write in [*writes, "append_events"]],
)
async def test_a_write_kept_waiting_past_lock_timeout_writes_nothing(
    schema: str, row: str, write: str
) -> None:
    import psycopg

    async with PostgresStore(DSN, schema=schema, lock_timeout=0.2) as store:
        run = await _paused(store)
        before = await store_snapshot(store)
        with psycopg.connect(DSN, options=f"-c search_path={schema}") as holder:
            holder.execute(LOCKS[row][0], [run.id])  # held until the holder rolls back
            with pytest.raises(StoreUnavailableError) as caught:
                await _writes(store, run.id)[write]()
            assert caught.value.reason == "busy"
            holder.rollback()
        assert await store_snapshot(store) == before
        await _writes(store, run.id)[write]()  # the lock gone, the same write goes through
        assert await store_snapshot(store) != before


def _skip_updates(schema: str, table: str) -> None:
    """Make every ``UPDATE`` of ``table`` match no row (a trigger that skips it), as if the row
    had changed behind the store's back."""
    skip = f'"{schema}".skip_update'
    sql(f"CREATE FUNCTION {skip}() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN RETURN NULL; END'")
    sql(
        f'CREATE TRIGGER skip_update BEFORE UPDATE ON "{schema}".{table} '
        f"FOR EACH ROW EXECUTE FUNCTION {skip}()"
    )


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("table", "write", "reason"),
    [
        ("runs", "update_run", "version"),
        ("interactions", "update_run", "already_answered"),
        ("interactions", "answer_interaction", "already_answered"),
    ],
)
async def test_an_update_whose_guard_finds_no_row_is_a_conflict_and_writes_nothing(
    schema: str, table: str, write: str, reason: str
) -> None:
    async with PostgresStore(DSN, schema=schema) as store:
        run = await _paused(store)
        before = await store_snapshot(store)
        _skip_updates(schema, table)
        with pytest.raises(ConflictError) as caught:
            await _writes(store, run.id)[write]()
        assert (caught.value.run_id, caught.value.reason) == (run.id, reason)
        assert await store_snapshot(store) == before


@pytest.mark.anyio
async def test_writes_are_planned_once_not_on_every_call(schema: str) -> None:
    """Every write statement runs on its prepared plan: the server plans the event append
    (four joined parts) once, instead of on every write of every run."""
    async with PostgresStore(DSN, schema=schema) as store:
        for _ in range(8):  # past the executions after which a server decides how to plan
            run = await store.create_run(new_run())
            await store.update_run(
                run.id, expected_version=1, status=RunStatus.PAUSED_WAITING_HUMAN,
                new_interactions=[new_interaction("int-a")],
            )  # fmt: skip
            await store.answer_interaction(run.id, "int-a", answer())
            await store.update_run(run.id, expected_version=2, status=RunStatus.RUNNING)
            await store.update_run(run.id, expected_version=3, status=RunStatus.FINISHED)
        plans = await store._call(  # the server lists a session's prepared statements to it alone
            lambda conn: conn.execute(
                "SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements"
            ).fetchall()
        )
    writes = [p for p in plans if p["statement"].lstrip().startswith(("WITH", "INSERT"))]
    assert len(writes) >= 4  # the run insert, its update, the answer, the event append
    assert sum(p["generic_plans"] for p in writes) >= 8 * 4, writes
    assert [p for p in writes if p["custom_plans"]] == []


# -- waiting ------------------------------------------------------------------------------------


async def _pending_run(store: PostgresStore) -> tuple[str, int]:
    run = await store.create_run(new_run())
    await store.update_run(run.id, expected_version=1, new_interactions=[new_interaction("int-a")])
    return run.id, (await store.list_events(run.id))[-1].seq


@pytest.mark.anyio
async def test_a_write_without_notification_is_seen_by_the_poll(schema: str) -> None:
    async with PostgresStore(DSN, schema=schema, poll_interval=0.05) as store:
        run_id, cursor = await _pending_run(store)
        seen = []

        async def wait() -> None:
            seen.extend(await store.wait_for_events(run_id, after_seq=cursor, timeout=3600))

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(wait)
                await anyio.wait_all_tasks_blocked()
                await anyio.to_thread.run_sync(  # no NOTIFY: as if the notification were lost
                    sql,
                    f'INSERT INTO "{schema}".events (run_id, seq, cursor, type, data, at) '
                    f'VALUES (%s, %s, (SELECT MAX(cursor) + 1 FROM "{schema}".events), %s, %s, '
                    "now())",
                    run_id,
                    cursor + 1,
                    "note",
                    "{}",
                )
        assert [(e.seq, e.type) for e in seen] == [(cursor + 1, "note")]


@pytest.mark.anyio
async def test_the_listener_reconnects_after_losing_its_connection(schema: str) -> None:
    async with (
        PostgresStore(DSN, schema=schema, poll_interval=600) as waiter,
        PostgresStore(DSN, schema=schema) as other,
    ):
        run_id, cursor = await _pending_run(other)
        assert await waiter.wait_for_events(run_id, after_seq=cursor, timeout=0) == []
        killed = sql(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE application_name = 'pi-recipes listener' AND query LIKE %s",
            f"LISTEN %{schema}%",
        )
        assert killed == [(True,)]
        seen = []

        async def wait() -> None:
            seen.extend(await waiter.wait_for_events(run_id, after_seq=cursor, timeout=3600))

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(wait)
                await anyio.wait_all_tasks_blocked()
                await other.answer_interaction(run_id, "int-a", answer(via="slack"))
        assert [e.type for e in seen] == ["interaction_answered"]


@pytest.mark.anyio
async def test_close_stops_the_listener(schema: str) -> None:
    def listeners() -> list[str]:
        return [t.name for t in threading.enumerate() if schema in t.name]

    store = await open_postgres_store(DSN, schema=schema)
    run = await store.create_run(new_run())
    await store.wait_for_events(run.id, after_seq=1, timeout=0)
    assert len(listeners()) == 1
    await store.close()
    assert listeners() == []
    with pytest.raises(UsageError, match="closed"):
        await store.wait_for_events(run.id, after_seq=1, timeout=0)


# -- without a server ---------------------------------------------------------------------------


def test_the_module_imports_without_psycopg_and_says_what_to_install() -> None:
    """psycopg is an optional extra: only opening a store needs it (a fresh interpreter)."""
    script = """
import sys
sys.modules["psycopg"] = None  # as if not installed
import anyio
from interactions import ConflictError, UsageError
from interactions.errors import StoreUnavailableError
from interactions.store import Store
from interactions.store.postgres import PostgresStore
store = PostgresStore("postgresql://nobody@127.0.0.1:1/none")
assert isinstance(store, Store)
try:
    anyio.run(store.open)
except UsageError as exc:
    print(exc)
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert "pip install 'pi-recipes[postgres]'" in done.stdout


SECRET = "SeCrEt-pw"

MALFORMED_DSNS = [
    f"postgresql//postgres:{SECRET}@127.0.0.1:5432/test",  # a typo'd URL: libpq quotes it all
    f"postgresql://postgres:{SECRET}@127.0.0.1:5432/test?bogus=1",
    f"host=127.0.0.1 user=postgres password={SECRET} bogus=1",
    f"host=127.0.0.1 user=postgres password='{SECRET} and more' dbname",
]


@pytest.mark.anyio
@pytest.mark.parametrize("dsn", MALFORMED_DSNS)
async def test_a_malformed_dsn_is_a_usage_error_that_hides_the_password(dsn: str) -> None:
    pytest.importorskip("psycopg")
    store = PostgresStore(dsn)
    with pytest.raises(UsageError, match="not a valid PostgreSQL URL") as caught:
        await store.open()
    await store.close()
    shown = "".join(traceback.format_exception(caught.value))
    assert SECRET not in shown and "SeCrEt" not in shown
    assert "***" in str(caught.value)


@pytest.fixture
def one_connection_role(schema: str) -> Iterator[str]:
    """A DSN of a role the server lets hold one connection at a time, owning ``schema``."""
    from psycopg.conninfo import make_conninfo

    role = f"pi_test_{uuid.uuid4().hex[:16]}"
    sql(f'CREATE ROLE "{role}" LOGIN CONNECTION LIMIT 1')
    sql(f'CREATE SCHEMA "{schema}" AUTHORIZATION "{role}"')
    yield make_conninfo(DSN, user=role)
    sql(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    sql(f'DROP ROLE "{role}"')


@pytest.mark.anyio
async def test_a_listener_that_cannot_connect_is_a_typed_error(
    schema: str, one_connection_role: str
) -> None:
    async with PostgresStore(one_connection_role, schema=schema) as store:
        run = await store.create_run(new_run())  # the role's one connection
        with anyio.fail_after(20), pytest.raises(StoreUnavailableError) as caught:
            await store.wait_for_events(run.id, after_seq=1, timeout=5)
        assert caught.value.reason == "unreachable"
        assert "too many connections" in str(caught.value)


@pytest.mark.parametrize(
    "options",
    [
        {"lock_timeout": math.inf},  # was a bare OverflowError when connecting
        {"lock_timeout": math.nan},
        {"lock_timeout": -1},
        {"lock_timeout": 1e12},  # the server refused it when connecting
        {"poll_interval": math.nan},
        {"poll_interval": 0},
    ],
    ids=str,
)
def test_options_out_of_range_are_refused(options: dict[str, float]) -> None:
    with pytest.raises(UsageError, match=next(iter(options))):
        PostgresStore("postgresql://nobody@127.0.0.1:1/none", **options)


@pytest.mark.parametrize("seconds", [math.inf, math.nan, 0, -1], ids=str)
def test_a_connect_timeout_out_of_range_is_refused(seconds: float) -> None:
    with pytest.raises(UsageError, match="connect_timeout"):
        PostgresStore("postgresql://nobody@127.0.0.1:1/none", connect_timeout=seconds)


@pytest.fixture
def silent_server() -> Iterator[int]:
    """The port of a TCP server that accepts connections and never says a word (a server
    hung, or a port that is not PostgreSQL's)."""
    listening = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []

    def accept() -> None:
        with contextlib.suppress(OSError):  # closed: the test is over
            while True:
                held.append(listening.accept()[0])

    threading.Thread(target=accept, daemon=True).start()
    yield listening.getsockname()[1]
    listening.close()
    for conn in held:
        conn.close()


def open_in_a_thread(dsn: str, bound: float, **options: Any) -> BaseException | None:
    """What opening a store at ``dsn`` raised, from a thread of its own, or fail the test if
    it had not ended within ``bound`` seconds (a store call cannot be cancelled: it runs in a
    worker thread, so a hang must be caught from outside the event loop)."""
    raised: list[BaseException | None] = []

    async def open_store() -> None:
        try:
            await (await open_postgres_store(dsn, **options)).close()
            raised.append(None)
        except BaseException as exc:  # handed to the test
            raised.append(exc)

    thread = threading.Thread(target=anyio.run, args=(open_store,), daemon=True)
    thread.start()
    thread.join(bound)
    assert raised, f"opening the store still waited after {bound} s"
    return raised[0]


def test_a_server_that_never_answers_fails_the_open_within_connect_timeout(
    silent_server: int,
) -> None:
    pytest.importorskip("psycopg")
    dsn = f"postgresql://postgres:{SECRET}@127.0.0.1:{silent_server}/test"
    started = time.monotonic()
    raised = open_in_a_thread(dsn, 30, connect_timeout=2)
    assert isinstance(raised, StoreUnavailableError), raised
    assert raised.reason == "unreachable"
    assert "timeout" in str(raised) and SECRET not in str(raised)
    assert time.monotonic() - started < 15


def test_the_dsns_own_connect_timeout_wins(silent_server: int) -> None:
    pytest.importorskip("psycopg")
    dsn = f"postgresql://postgres@127.0.0.1:{silent_server}/test?connect_timeout=2"
    raised = open_in_a_thread(dsn, 30, connect_timeout=3600)
    assert isinstance(raised, StoreUnavailableError), raised


def test_the_wait_bounds_are_added_where_the_dsn_does_not_set_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("psycopg")
    from psycopg.conninfo import conninfo_to_dict

    from interactions.store._postgres_schema import bounded_conninfo

    monkeypatch.delenv("PGCONNECT_TIMEOUT", raising=False)
    plain = conninfo_to_dict(bounded_conninfo("postgresql://u:pw@db.example:5432/x", 10))
    assert plain == {
        "user": "u",
        "password": "pw",
        "host": "db.example",
        "port": "5432",
        "dbname": "x",
        "connect_timeout": "10",
        "keepalives": "1",
        "keepalives_idle": "15",
        "keepalives_interval": "5",
        "keepalives_count": "3",
        "tcp_user_timeout": "30000",
    }
    chosen = conninfo_to_dict(
        bounded_conninfo("host=db keepalives_idle=60 tcp_user_timeout=0 connect_timeout=4", 10)
    )
    assert (chosen["keepalives_idle"], chosen["tcp_user_timeout"]) == ("60", "0")
    assert chosen["connect_timeout"] == "4"
    monkeypatch.setenv("PGCONNECT_TIMEOUT", "7")  # libpq reads it when the DSN is silent
    assert "connect_timeout" not in conninfo_to_dict(bounded_conninfo("host=db", 10))


def tcp_sockets_to(port: int) -> dict[int, tuple[int, int]]:
    """This process's TCP connections to ``port`` on this machine: fd -> (TCP_KEEPIDLE,
    TCP_USER_TIMEOUT) as the kernel has them."""
    found = {}
    for name in os.listdir("/proc/self/fd"):
        try:
            probe = socket.socket(fileno=os.dup(int(name)))
        except OSError:
            continue  # not a socket
        with probe:
            try:
                if probe.type != socket.SOCK_STREAM or probe.getpeername()[1] != port:
                    continue
            except (OSError, IndexError):
                continue  # not connected, or not an IP socket
            found[int(name)] = (
                probe.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE),
                probe.getsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT),
            )
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/fd")
@pytest.mark.anyio
async def test_both_connections_give_up_on_a_silent_server(schema: str) -> None:
    from psycopg.conninfo import conninfo_to_dict

    given = conninfo_to_dict(DSN)
    if not given.get("host", "").startswith(("127.", "localhost")):
        pytest.skip("the test server is not reached over TCP on this machine")
    port = int(given.get("port") or 5432)
    before = tcp_sockets_to(port)
    async with PostgresStore(DSN, schema=schema) as store:
        run = await store.create_run(new_run())
        await store.wait_for_events(run.id, after_seq=1, timeout=0)  # starts the listener
        opened = {fd: bounds for fd, bounds in tcp_sockets_to(port).items() if fd not in before}
    assert list(opened.values()) == [(15, 30_000), (15, 30_000)]


# -- decisions ----------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_decisions_are_seen_through_another_connection(schema: str) -> None:
    async with PostgresStore(DSN, schema=schema) as first:
        run = await first.create_run(new_run(thread_id="thread-a"))
        async with PostgresStore(DSN, schema=schema) as beside:
            assert await beside.decisions_for(run.id, "thread-a") == []
            kept, _ = await first.remember_decision(
                new_decision(run, "int-a", scope="thread", args={"x": [1]}, reason="fine")
            )
            assert await beside.decisions_for("run-other", "thread-a") == [kept]
            gone, _ = await beside.remember_decision(new_decision(run, "int-b"))
            assert await first.decisions_for(run.id, "thread-z") == [gone]
            await first.revoke_decision(gone.id, revoked_by="ada")
            assert await beside.decisions_for(run.id, "thread-z") == []
        before = await first.list_decisions(include_revoked=True)
    async with PostgresStore(DSN, schema=schema) as second:
        assert await second.list_decisions(include_revoked=True) == before
        assert await second.remember_decision(new_decision(run, "int-a", tool="rm")) == (
            kept,
            False,
        )
        assert not (await second.revoke_decision(gone.id))[1]


@pytest.mark.anyio
async def test_a_version_3_schema_is_migrated_to_keep_decisions(schema: str) -> None:
    import psycopg

    from interactions.store._postgres_schema import MIGRATIONS

    with psycopg.connect(DSN, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
        conn.execute(f'SET search_path TO "{schema}"')
        conn.execute(
            "CREATE TABLE store_migrations (version integer PRIMARY KEY CHECK (version >= 1), "
            "applied_at timestamptz NOT NULL DEFAULT now())"
        )
        for version, statements in enumerate(MIGRATIONS[:3], start=1):
            for statement in statements:
                conn.execute(statement)
            conn.execute("INSERT INTO store_migrations (version) VALUES (%s)", [version])
        conn.execute(
            "INSERT INTO runs (id, thread_id, kind, ref, agent, model_name, status, checkpoint, "
            "version, created_at, updated_at) VALUES ('run-1', 'thread-1', 'recipe', 'r.py', "
            "'writer', 'scripted', 'finished', '{}', 2, now(), now())"
        )
    async with PostgresStore(DSN, schema=schema) as store:
        run = await store.get_run("run-1")
        assert await store.list_decisions() == []
        record, stored = await store.remember_decision(new_decision(run, scope="thread"))
        assert stored and await store.decisions_for("run-2", "thread-1") == [record]
        [event] = await store.list_events("run-1")
        assert (event.seq, event.type) == (1, "decision_remembered")
    assert _versions(schema) == list(range(1, schema_version() + 1))


@pytest.mark.anyio
async def test_a_version_4_schema_is_migrated_to_keep_votes(schema: str) -> None:
    import psycopg

    from interactions.store._postgres_schema import MIGRATIONS

    with psycopg.connect(DSN, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
        conn.execute(f'SET search_path TO "{schema}"')
        conn.execute(
            "CREATE TABLE store_migrations (version integer PRIMARY KEY CHECK (version >= 1), "
            "applied_at timestamptz NOT NULL DEFAULT now())"
        )
        for version, statements in enumerate(MIGRATIONS[:4], start=1):
            for statement in statements:
                conn.execute(statement)
            conn.execute("INSERT INTO store_migrations (version) VALUES (%s)", [version])
    async with PostgresStore(DSN, schema=schema) as store:
        run = await store.create_run(new_run())
        run = await store.update_run(
            run.id,
            expected_version=run.version,
            status=RunStatus.PAUSED_WAITING_HUMAN,
            new_interactions=[new_interaction("int-a")],
        )
        _, outcome = await store.cast_vote(run.id, "int-a", new_vote("ada"), required=2)
        assert outcome.counted and not outcome.settled
        assert [v.voter for v in await store.list_votes(run.id, "int-a")] == ["ada"]
    assert _versions(schema) == list(range(1, schema_version() + 1))
