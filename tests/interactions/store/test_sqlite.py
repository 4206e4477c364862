"""The SQLite store: the conformance suite on a real file, reopening, and schema migrations."""

from __future__ import annotations

import math
import sqlite3
from collections.abc import AsyncIterator
from contextlib import closing
from pathlib import Path

import pytest

from interactions import UsageError
from interactions.store import (
    DEFAULT_STORE_PATH,
    SCHEMA_VERSION,
    NewInteraction,
    RunStatus,
    SQLiteStore,
    StoreSchemaError,
    open_sqlite_store,
)
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


class TestSQLiteStore(
    StoreConformance,
    DecisionsConformance,
    VotesConformance,
    ConsumersConformance,
    RemindersConformance,
    AuditConformance,
):
    @pytest.fixture
    async def store(self, tmp_path: Path) -> AsyncIterator[SQLiteStore]:
        # A slow poll: the conformance wake-up test must be won by the in-process doorbell.
        async with SQLiteStore(tmp_path / "state.db", poll_interval=600) as store:
            yield store


async def _paused_run(path: Path) -> str:
    async with SQLiteStore(path) as store:
        run = await store.create_run(new_run(checkpoint={"z": 1, "a": [1, 2]}))
        await store.update_run(
            run.id,
            expected_version=1,
            status=RunStatus.PAUSED_WAITING_HUMAN,
            new_interactions=[new_interaction("int-a"), new_interaction("int-b")],
        )
        await store.answer_interaction(run.id, "int-a", answer({"answer": "ok"}, via="cli"))
        return run.id


def _user_version(path: Path) -> int:
    with closing(sqlite3.connect(path)) as conn, conn:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])


@pytest.mark.anyio
async def test_state_survives_reopening_the_file(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    run_id = await _paused_run(path)
    async with SQLiteStore(path) as first:
        before = await store_snapshot(first)
    async with await open_sqlite_store(path) as second:
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
async def test_file_settings_and_canonical_json(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "dirs" / "state.db"
    run_id = await _paused_run(path)
    with closing(sqlite3.connect(path)) as conn, conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        checkpoint = conn.execute("SELECT checkpoint FROM runs WHERE id = ?", (run_id,)).fetchone()
    assert checkpoint[0] == '{"a":[1,2],"z":1}'
    assert _user_version(path) == SCHEMA_VERSION


@pytest.mark.anyio
async def test_default_path_is_under_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert Path(".pi-recipes") / "state.db" == DEFAULT_STORE_PATH
    async with SQLiteStore() as store:
        await store.create_run(new_run())
    assert (tmp_path / ".pi-recipes" / "state.db").is_file()


@pytest.mark.anyio
async def test_an_empty_file_becomes_a_store(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    path.touch()
    async with SQLiteStore(path) as store:
        run = await store.create_run(new_run())
        assert (await store.get_run(run.id)).version == 1
    assert _user_version(path) == SCHEMA_VERSION


@pytest.mark.anyio
async def test_another_applications_database_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("CREATE TABLE notes (text TEXT)")
        conn.execute("INSERT INTO notes VALUES ('kept')")
    conn.close()
    before = path.read_bytes()
    with pytest.raises(StoreSchemaError, match="not a pi-recipes store"):
        await SQLiteStore(path).open()
    assert path.read_bytes() == before  # no tables added, no journal mode changed
    assert not (tmp_path / "notes.db-wal").exists()


@pytest.mark.anyio
@pytest.mark.parametrize("user_version", [1, 3, SCHEMA_VERSION, SCHEMA_VERSION + 7])
async def test_another_applications_versioned_database_is_refused_untouched(
    tmp_path: Path, user_version: int
) -> None:
    # Many programs number their own schema in user_version: that is no pi-recipes store.
    path = tmp_path / "notes.db"
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("CREATE TABLE runs (note TEXT)")  # even a table of the same name
        conn.execute("INSERT INTO runs VALUES ('kept')")
        conn.execute(f"PRAGMA user_version = {user_version}")
    conn.close()
    before = path.read_bytes()
    store = SQLiteStore(path)
    with pytest.raises(StoreSchemaError, match="not a pi-recipes store"):
        await store.open()
    with pytest.raises(StoreSchemaError, match="not a pi-recipes store"):
        await store.create_run(new_run())
    await store.close()
    assert path.read_bytes() == before  # no migration tried, no journal mode changed
    assert not (tmp_path / "notes.db-wal").exists()


@pytest.mark.anyio
async def test_an_already_migrated_file_is_left_as_is(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    run_id = await _paused_run(path)
    for _ in range(2):
        async with SQLiteStore(path) as store:
            assert [r.id for r in await store.list_runs()] == [run_id]
    assert _user_version(path) == SCHEMA_VERSION


@pytest.mark.anyio
async def test_a_newer_schema_is_refused_clearly(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    await _paused_run(path)
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    store = SQLiteStore(path)
    with pytest.raises(StoreSchemaError, match=rf"version {SCHEMA_VERSION + 1}.*upgrade"):
        await store.open()
    with pytest.raises(StoreSchemaError):  # every call refuses, nothing is written
        await store.create_run(new_run())
    await store.close()
    assert _user_version(path) == SCHEMA_VERSION + 1


@pytest.mark.anyio
async def test_a_file_that_is_not_sqlite_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    path.write_text("these are my notes, not a database\n" * 100)
    with pytest.raises(StoreSchemaError, match="not a usable SQLite database"):
        await open_sqlite_store(path)


def test_new_interactions_need_an_aware_expiry() -> None:
    with pytest.raises(ValueError, match="timezone"):
        NewInteraction(id="int-a", tool_call_id="a", expires_at="2030-01-01T00:00:00")  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_a_version_1_store_is_migrated_with_its_data(tmp_path: Path) -> None:
    from interactions.store._sqlite_schema import _V1

    path = tmp_path / "old.db"
    with closing(sqlite3.connect(path)) as conn, conn:
        for statement in _V1:
            conn.execute(statement)
        conn.execute(
            "INSERT INTO runs VALUES ('run-1', 'thread-1', 'recipes/demo.py', 'writer', "
            "'scripted:x', 'paused_waiting_human', '{\"input\": \"go\"}', 3, "
            "'2026-11-01T10:00:00.123456+00:00', '2026-11-01T10:00:01.000001+00:00', NULL)"
        )
        conn.execute(
            "INSERT INTO interactions VALUES ('run-1', 'int-a', '', 'a', '', "
            "'2026-11-01T10:00:01.000001+00:00', '2026-11-08T10:00:01.000000+00:00', "
            '\'{"id": "int-a", "reason": "input_required", "message": "Colour?"}\', '
            "'2026-11-01T10:05:00.000000+00:00', 'resolved', '{\"answer\": \"red\"}', 'ada', 'cli')"
        )
        conn.execute(
            "INSERT INTO events VALUES ('run-1', 1, 'run_created', '{}', "
            "'2026-11-01T10:00:00.123456+00:00')"
        )
        conn.execute("PRAGMA user_version = 1")
    conn.close()
    async with SQLiteStore(path) as store:
        run = await store.get_run("run-1")
        assert (run.ref, run.kind, run.version, run.checkpoint) == (
            "recipes/demo.py",
            "recipe",
            3,
            {"input": "go"},
        )
        assert run.created_at.isoformat() == "2026-11-01T10:00:00.123456+00:00"
        [record] = await store.list_interactions("run-1")
        assert record.answer is not None and record.answer.payload == {"answer": "red"}
        assert record.expires_at.isoformat() == "2026-11-08T10:00:01+00:00"
        assert record.interrupt.message == "Colour?"
        [event] = await store.list_events("run-1")
        assert (event.type, event.at.isoformat()) == (
            "run_created",
            "2026-11-01T10:00:00.123456+00:00",
        )
        assert event.cursor == 1 and await store.latest_cursor() == 1
        [note] = await store.append_events("run-1", [("note", {"n": 1})])
        assert (note.seq, note.cursor) == (2, 2)
        async with store.watch(after=0) as feed:
            seen = [await anext(feed), await anext(feed)]
        assert [(e.run_id, e.seq, e.cursor) for e in seen] == [("run-1", 1, 1), ("run-1", 2, 2)]
    assert _user_version(path) == SCHEMA_VERSION


BAD_OPTIONS = [
    {"busy_timeout": math.inf},  # a writer would wait for ever (and the PRAGMA overflows)
    {"busy_timeout": math.nan},
    {"busy_timeout": -1},
    {"busy_timeout": 1e12},  # past the 32-bit milliseconds SQLite holds
    {"poll_interval": math.nan},
    {"poll_interval": 0},
    {"change_interval": -0.5},
]


@pytest.mark.anyio
@pytest.mark.parametrize("options", BAD_OPTIONS, ids=str)
async def test_options_out_of_range_are_refused_before_anything_is_created(
    tmp_path: Path, options: dict[str, float]
) -> None:
    path = tmp_path / "state.db"
    with pytest.raises(UsageError, match=next(iter(options))):
        await open_sqlite_store(path, **options)
    assert not path.exists()


@pytest.mark.anyio
async def test_decisions_survive_reopening_the_file(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    async with SQLiteStore(path) as first:
        run = await first.create_run(new_run(thread_id="thread-a"))
        kept, _ = await first.remember_decision(
            new_decision(run, "int-a", scope="thread", args={"x": [1]}, reason="fine")
        )
        gone, _ = await first.remember_decision(new_decision(run, "int-b"))
        await first.revoke_decision(gone.id, revoked_by="ada")
        before = await first.list_decisions(include_revoked=True)
        async with SQLiteStore(path) as beside:  # another connection sees it at once
            assert await beside.decisions_for("run-other", "thread-a") == [kept]
    async with SQLiteStore(path) as second:
        assert await second.list_decisions(include_revoked=True) == before
        assert await second.decisions_for(run.id, "thread-a") == [kept]
        assert await second.remember_decision(new_decision(run, "int-a", tool="rm")) == (
            kept,
            False,
        )
        assert not (await second.revoke_decision(gone.id))[1]


@pytest.mark.anyio
async def test_a_version_5_store_is_migrated_to_keep_decisions(tmp_path: Path) -> None:
    from interactions.store._sqlite_schema import MIGRATIONS

    path = tmp_path / "old.db"
    with closing(sqlite3.connect(path)) as conn, conn:
        for migration in MIGRATIONS[:5]:
            migration(conn)
        conn.execute(
            "INSERT INTO runs (id, thread_id, kind, ref, agent, model_name, status, checkpoint, "
            "version, created_at, updated_at) VALUES ('run-1', 'thread-1', 'recipe', 'r.py', "
            "'writer', 'scripted', 'paused_waiting_human', '{}', 2, 1000000, 2000000)"
        )
        conn.execute(
            "INSERT INTO events (run, seq, type, data, at) "
            "SELECT pos, 1, 'run_created', '{}', 1000000 FROM runs"
        )
        conn.execute("PRAGMA user_version = 5")
    conn.close()
    async with SQLiteStore(path) as store:
        run = await store.get_run("run-1")
        assert (run.version, run.status) == (2, RunStatus.PAUSED_WAITING_HUMAN)
        assert await store.list_decisions() == []
        record, stored = await store.remember_decision(new_decision(run, scope="thread"))
        assert stored and await store.decisions_for("run-2", "thread-1") == [record]
        assert [(e.seq, e.type) for e in await store.list_events("run-1")] == [
            (1, "run_created"),
            (2, "decision_remembered"),
        ]
    assert _user_version(path) == SCHEMA_VERSION


@pytest.mark.anyio
async def test_a_version_6_store_is_migrated_to_keep_votes(tmp_path: Path) -> None:
    from interactions.store._sqlite_schema import MIGRATIONS

    path = tmp_path / "old.db"
    with closing(sqlite3.connect(path)) as conn, conn:
        for migration in MIGRATIONS[:6]:
            migration(conn)
        conn.execute("PRAGMA user_version = 6")
    conn.close()
    async with SQLiteStore(path) as store:
        run = await store.create_run(new_run())
        run = await store.update_run(
            run.id,
            expected_version=run.version,
            status=RunStatus.PAUSED_WAITING_HUMAN,
            new_interactions=[new_interaction("int-a")],
        )
        assert await store.list_votes(run.id, "int-a") == []
        _, outcome = await store.cast_vote(run.id, "int-a", new_vote("ada"), required=2)
        assert outcome.counted and not outcome.settled
        assert [v.voter for v in await store.list_votes(run.id, "int-a")] == ["ada"]
    assert _user_version(path) == SCHEMA_VERSION
