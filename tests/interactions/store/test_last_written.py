"""A store decides an update on what it last wrote of the run, without reading it first (on
PostgreSQL, one wait for the server: see ``test_postgres_last_written``): what another process
wrote since is never overwritten, and a refusal is the one a read first would have given. What
it remembers: the latest version of each run, within bounds on runs and on checkpoint size, and
nothing of an ended run.

The SQL stores are tested here with another store on the same data standing for another
process; PostgreSQL's tests need ``PI_RECIPES_TEST_POSTGRES`` (each gets a fresh schema).
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import anyio
import pytest

from interactions import ConflictError
from interactions.store import (
    InteractionAnswer,
    NewRun,
    RunRecord,
    RunStatus,
    SQLiteStore,
    Store,
    canonical_json,
)
from interactions.store._last_written import LastWritten
from interactions.store._records import utc_now
from interactions.store._rules import new_run_record
from interactions.store.postgres import PostgresStore
from interactions.testing.store_conformance import answer, new_interaction, new_run
from tests.interactions.store.test_postgres import DSN, NO_SERVER, sql

Opener = Callable[[], SQLiteStore | PostgresStore]
"""Opens a store on the test's data: each call another process's view of it."""


@pytest.fixture(params=["sqlite", "postgres"])
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    if request.param == "sqlite":
        yield lambda: SQLiteStore(tmp_path / "state.db")
        return
    if not DSN:
        pytest.skip(NO_SERVER)
    schema = f"pi_test_{uuid.uuid4().hex}"
    yield lambda: PostgresStore(DSN, schema=schema)
    sql(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def _run(run_id: str, version: int = 1, **fields: object) -> RunRecord:
    new = NewRun(id=run_id, thread_id="t", ref="r", checkpoint={"note": "x" * 10})
    run, _ = new_run_record(new, utc_now())
    return run.model_copy(update={"version": version, **fields})


def test_the_latest_version_of_a_run_is_kept() -> None:
    kept = LastWritten()
    kept.keep(_run("a", 3), [], size=None)
    kept.keep(_run("a", 2), [], size=None)  # a write that finished later but was older
    assert kept.at("a", 2) is None
    written = kept.at("a", 3)
    assert written is not None and written.size == len(canonical_json({"note": "x" * 10}))


def test_an_ended_run_is_forgotten() -> None:
    kept = LastWritten()
    kept.keep(_run("a", 1), [], size=None)
    kept.keep(_run("a", 2, status=RunStatus.FINISHED), [], size=None)
    assert kept.at("a", 1) is None and kept.at("a", 2) is None


def test_the_least_recently_written_runs_go_first() -> None:
    kept = LastWritten(runs=2)
    for run_id in ("a", "b", "c"):
        kept.keep(_run(run_id), [], size=None)
    assert [kept.at(r, 1) is not None for r in ("a", "b", "c")] == [False, True, True]


def test_checkpoints_are_kept_within_their_bound() -> None:
    kept = LastWritten(checkpoint_bytes=100)
    kept.keep(_run("a"), [], size=60)
    kept.keep(_run("b"), [], size=30)
    kept.keep(_run("c"), [], size=30)  # 120 in all: the oldest goes
    assert [kept.at(r, 1) is not None for r in ("a", "b", "c")] == [False, True, True]
    kept.keep(_run("huge"), [], size=101)  # larger than the bound alone: never kept
    assert kept.at("huge", 1) is None
    assert [kept.at(r, 1) is not None for r in ("b", "c")] == [True, True]
    kept.keep(_run("b", 2), [], size=40)  # b's new checkpoint replaces its old one's count
    kept.keep(_run("d"), [], size=30)
    assert [kept.at(r, v) is not None for r, v in (("b", 2), ("c", 1), ("d", 1))] == [
        True,
        True,
        True,
    ]


# -- a store and other processes ----------------------------------------------------------


async def _paused_on(store: Store, *ids: str) -> RunRecord:
    """A run this store created and paused on the interactions ``ids`` (version 2)."""
    run = await store.create_run(new_run())
    return await store.update_run(
        run.id,
        expected_version=1,
        status=RunStatus.PAUSED_WAITING_HUMAN,
        new_interactions=[new_interaction(i) for i in ids],
    )


@pytest.mark.anyio
async def test_an_update_returns_what_a_read_returns(opener: Opener) -> None:
    async with opener() as store:
        run = await _paused_on(store, "int-a")
        resumed = await store.update_run(
            run.id, expected_version=2, status=RunStatus.RUNNING, answers={"int-a": answer()}
        )  # no checkpoint given: the run keeps the one it had
        assert resumed == await store.get_run(run.id)
        assert (resumed.version, resumed.checkpoint) == (3, run.checkpoint)
        assert (await store.get_interaction(run.id, "int-a")).answer == answer()


@pytest.mark.anyio
async def test_a_run_moved_on_by_another_process_is_a_conflict(opener: Opener) -> None:
    async with (
        opener() as mine,
        opener() as other,
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


@pytest.mark.anyio
async def test_an_answer_another_process_gave_since_is_kept(opener: Opener) -> None:
    theirs = InteractionAnswer(status="resolved", payload={"by": "other"}, via="other")
    closing = InteractionAnswer(status="cancelled", via="run_ended")
    async with (
        opener() as mine,
        opener() as other,
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


@pytest.mark.anyio
async def test_a_different_answer_to_what_another_process_answered_is_refused(
    opener: Opener,
) -> None:
    theirs = InteractionAnswer(status="resolved", payload={"by": "other"}, via="other")
    async with (
        opener() as mine,
        opener() as other,
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


# -- a run this store read, then its interactions ------------------------------------------

Reader = Callable[[Store, str], Awaitable[RunRecord]]
"""Reads a run and all its interactions through a store; returns the run."""


async def _apart(store: Store, run_id: str) -> RunRecord:
    run = await store.get_run(run_id)
    await store.list_interactions(run_id)
    return run


async def _together(store: Store, run_id: str) -> RunRecord:
    run, _ = await store.get_run_with_interactions(run_id)
    return run


@pytest.fixture(params=[_apart, _together], ids=["apart", "together"])
def read_whole(request: pytest.FixtureRequest) -> Reader:
    """The run, then its interactions; or both in one call."""
    reader: Reader = request.param
    return reader


@pytest.mark.anyio
async def test_an_update_after_reading_the_run_and_its_interactions_is_what_a_read_gives(
    opener: Opener, read_whole: Reader
) -> None:
    async with opener() as writer, opener() as reader:
        run = await _paused_on(writer, "int-a", "int-b")
        await writer.answer_interaction(run.id, "int-a", answer("a"))
        read = await read_whole(reader, run.id)
        resumed = await reader.update_run(
            run.id, expected_version=read.version, status=RunStatus.RUNNING,
            answers={"int-b": answer("b")},
        )  # fmt: skip
        assert resumed == await writer.get_run(run.id)
        assert (resumed.version, resumed.checkpoint) == (3, run.checkpoint)
        records = {r.id: r.answer for r in await writer.list_interactions(run.id)}
        assert records == {"int-a": answer("a"), "int-b": answer("b")}


@pytest.mark.anyio
async def test_a_run_moved_on_between_reading_it_and_its_interactions_is_a_conflict(
    opener: Opener,
) -> None:
    async with opener() as mine, opener() as other:
        run = await _paused_on(mine, "int-a")
        read = await other.get_run(run.id)
        # Between the two reads, the run moves on and asks something new.
        resumed = await mine.update_run(
            run.id, expected_version=2, status=RunStatus.RUNNING, answers={"int-a": answer()}
        )
        paused = await mine.update_run(
            run.id, expected_version=3, status=RunStatus.PAUSED_WAITING_HUMAN,
            new_interactions=[new_interaction("int-b")],
        )  # fmt: skip
        assert [r.id for r in await other.list_interactions(run.id)] == ["int-a", "int-b"]
        with pytest.raises(ConflictError) as caught:
            await other.update_run(
                run.id, expected_version=read.version, status=RunStatus.CANCELLED,
                close_open=InteractionAnswer(status="cancelled", via="run_ended"),
            )  # fmt: skip
        assert caught.value.reason == "version"
        assert await other.get_run(run.id) == paused != resumed
        assert (await other.get_interaction(run.id, "int-b")).answer is None


@pytest.mark.anyio
async def test_an_answer_given_after_reading_the_interactions_is_not_overwritten(
    opener: Opener, read_whole: Reader
) -> None:
    theirs = InteractionAnswer(status="resolved", payload={"by": "other"}, via="other")
    async with opener() as mine, opener() as other:
        run = await _paused_on(mine, "int-a")
        await read_whole(other, run.id)
        await mine.answer_interaction(run.id, "int-a", theirs)  # the run's version stays 2
        with pytest.raises(ConflictError) as caught:
            await other.update_run(
                run.id, expected_version=2, status=RunStatus.RUNNING, answers={"int-a": answer()}
            )
        assert caught.value.reason == "already_answered"
        assert (await other.get_interaction(run.id, "int-a")).answer == theirs
        assert (await other.get_run(run.id)).version == 2


def test_a_run_read_is_remembered_once_all_its_interactions_are_read() -> None:
    kept = LastWritten(reads=2)
    kept.read_run(_run("a", 2))
    assert kept.at("a", 2) is None  # its interactions are not known yet
    kept.read_interactions("a", [])
    assert kept.at("a", 2) is not None
    kept.keep(_run("b", 5), [], size=None)
    kept.read_run(_run("b", 4))  # older than what this store wrote: the write's is kept
    kept.read_interactions("b", [])
    assert kept.at("b", 4) is None and kept.at("b", 5) is not None
    kept.read_interactions("c", [])  # no run read: nothing to remember
    assert kept.at("c", 1) is None
    for run_id in ("x", "y", "z"):  # runs read wait for their interactions within the bound
        kept.read_run(_run(run_id))
    kept.read_interactions("x", [])
    assert kept.at("x", 1) is None


def test_a_run_read_with_all_its_interactions_at_once_is_remembered() -> None:
    kept = LastWritten(reads=2)
    kept.read_run(_run("a", 1))  # an older read of the run, waiting for its interactions
    kept.read_together(_run("a", 2), [])
    assert kept.at("a", 2) is not None
    kept.read_interactions("a", [])  # a list of its interactions after it changes nothing
    assert kept.at("a", 1) is None and kept.at("a", 2) is not None
    kept.keep(_run("b", 5), [], size=None)
    kept.read_together(_run("b", 4), [])  # older than what this store wrote: the write's is kept
    assert kept.at("b", 4) is None and kept.at("b", 5) is not None
    for run_id in ("x", "y", "z"):  # runs read count apart from the runs written, bounded
        kept.read_together(_run(run_id), [])
    assert [kept.at(r, 1) is not None for r in ("x", "y", "z")] == [False, True, True]
    assert kept.at("b", 5) is not None


def test_a_run_read_is_not_measured_and_counts_apart_from_the_runs_written() -> None:
    kept = LastWritten(checkpoint_bytes=100)
    kept.keep(_run("written"), [], size=90)
    big = _run("read", 4).model_copy(update={"checkpoint": {"note": "x" * 1000}})
    kept.read_run(big)  # a host showing a run with a long transcript: nothing is serialized
    kept.read_interactions("read", [])
    assert kept.at("read", 4) is not None and kept.at("written", 1) is not None
    kept.keep_unmeasured(big.model_copy(update={"version": 5}), [])  # written since, same
    assert kept.at("read", 5) is not None and kept.at("read", 4) is None
    kept.keep(_run("read", 6), [], size=20)  # written with a new checkpoint: measured
    assert kept.at("read", 6) is not None and kept.at("written", 1) is None  # 110 > 100


@pytest.mark.anyio
async def test_the_store_that_wrote_a_run_last_races_others_and_exactly_one_wins(
    opener: Opener,
) -> None:
    racers = 4
    async with opener() as last:
        others = [opener() for _ in range(racers - 1)]
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


async def _update(store: Store, run_id: str, me: int, outcomes: dict[int, str]) -> None:
    """Move the run from version 2 with ``me``'s checkpoint; note "won" or the refusal."""
    try:
        await store.update_run(
            run_id, expected_version=2, checkpoint={"by": me}, events=[("x", {})]
        )
        outcomes[me] = "won"
    except ConflictError as exc:
        outcomes[me] = f"{exc.reason}"
