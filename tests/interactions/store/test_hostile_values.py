"""Hostile values at the edges of what a store keeps, on every backend (memory, a SQLite file,
PostgreSQL when ``PI_RECIPES_TEST_POSTGRES`` is set): each is either kept and read back
exactly, or refused with a typed error that changes nothing; never a driver's bare error, never
a write that half happened. The same value gets the same result on every backend.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from interactions import UnknownInteractionError, UnknownRunError, UsageError
from interactions.store import (
    InteractionAnswer,
    MemoryStore,
    NewRun,
    RunStatus,
    SQLiteStore,
    Store,
    canonical_json,
)
from interactions.testing.store_conformance import answer, new_interaction, new_run, store_snapshot

DSN = os.environ.get("PI_RECIPES_TEST_POSTGRES", "")
DEPTH = 200  # the deepest nesting a store keeps (MAX_JSON_DEPTH)


def nested(levels: int) -> Any:
    """A JSON value nesting ``levels`` lists."""
    value: Any = "bottom"
    for _ in range(levels):
        value = [value]
    return value


@pytest.fixture
def postgres_schema() -> Iterator[str]:
    if not DSN:
        pytest.skip("set PI_RECIPES_TEST_POSTGRES to run the PostgreSQL store tests")
    import psycopg

    name = f"pi_test_{uuid.uuid4().hex}"
    yield name
    with psycopg.connect(DSN, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    if request.param == "memory":
        async with MemoryStore() as memory:
            yield memory
    elif request.param == "sqlite":
        async with SQLiteStore(tmp_path / "state.db") as sqlite:
            yield sqlite
    else:
        from interactions.store import PostgresStore

        schema = request.getfixturevalue("postgres_schema")
        async with PostgresStore(DSN, schema=schema) as postgres:
            yield postgres


async def _paused(store: Store) -> str:
    run = await store.create_run(new_run())
    await store.update_run(
        run.id,
        expected_version=1,
        status=RunStatus.PAUSED_WAITING_HUMAN,
        new_interactions=[new_interaction("int-a")],
    )
    return run.id


Write = Callable[[Store, str], Awaitable[Any]]

KEPT: dict[str, Any] = {
    "nul-in-json": {"text": "a\x00b", "key\x00": 1},
    "huge-integers": {"big": 2**200, "small": -(2**200)},
    "float-edges": {"max": 1.7976931348623157e308, "tiny": 5e-324, "neg-zero": -0.0},
    "deepest-allowed": {"deep": nested(DEPTH - 1)},
    "escapes": {"line": "\u2028\u2029", "emoji": "\U0001f600", "quote": '"\\'},
}
"""JSON values every backend keeps and reads back exactly (checkpoint, answer, event data)."""


@pytest.mark.anyio
@pytest.mark.parametrize("name", sorted(KEPT))
async def test_json_edges_are_kept_exactly(store: Store, name: str) -> None:
    value = KEPT[name]
    run_id = await _paused(store)
    run = await store.get_run(run_id)
    updated = await store.update_run(run_id, expected_version=run.version, checkpoint=value)
    stored, _ = await store.answer_interaction(run_id, "int-a", answer(value))
    [event] = await store.append_events(run_id, [("note", value)])
    assert canonical_json((await store.get_run(run_id)).checkpoint) == canonical_json(value)
    assert (await store.get_run(run_id)) == updated
    assert (await store.get_interaction(run_id, "int-a")) == stored
    assert (await store.list_events(run_id))[-1] == event
    assert not (await store.answer_interaction(run_id, "int-a", answer(value)))[1]  # a replay
    [answered] = [e for e in await store.list_events(run_id) if e.type == "interaction_answered"]
    if name == "deepest-allowed":  # one level more would pass the limit: the row alone has it
        assert "payload" not in answered.data
    else:
        assert canonical_json(answered.data["payload"]) == canonical_json(value)


REFUSED: dict[str, Write] = {
    "checkpoint-too-deep": lambda s, rid: s.update_run(
        rid, expected_version=2, checkpoint={"deep": nested(DEPTH)}
    ),
    "checkpoint-too-deep-to-copy": lambda s, rid: s.update_run(  # was written, then raised
        rid, expected_version=2, checkpoint={"deep": nested(600)}
    ),
    "checkpoint-far-too-deep": lambda s, rid: s.update_run(
        rid, expected_version=2, checkpoint={"deep": nested(5000)}
    ),
    "event-too-deep": lambda s, rid: s.append_events(rid, [("note", {"deep": nested(DEPTH)})]),
    "checkpoint-lone-surrogate": lambda s, rid: s.update_run(
        rid, expected_version=2, checkpoint={"text": "a\ud800b"}
    ),
    "event-key-lone-surrogate": lambda s, rid: s.append_events(rid, [("note", {"\udc80": 1})]),
    "event-type-with-nul": lambda s, rid: s.append_events(rid, [("no\x00te", {})]),
}
"""Writes given a value no backend can keep: each is a ``UsageError``."""


@pytest.mark.anyio
@pytest.mark.parametrize("name", sorted(REFUSED))
async def test_values_no_store_keeps_are_refused_and_change_nothing(
    store: Store, name: str
) -> None:
    run_id = await _paused(store)
    before = await store_snapshot(store)
    with pytest.raises(UsageError):
        await REFUSED[name](store, run_id)
    assert await store_snapshot(store) == before


@pytest.mark.anyio
async def test_a_failure_is_recorded_whatever_its_message_holds(store: Store) -> None:
    """A run's ``error`` is a failure's message (a tool's output, a provider's text): a NUL or a
    lone surrogate in it becomes U+FFFD, on every store, so the failure is never refused."""
    run_id = await _paused(store)
    failed = await store.update_run(
        run_id, expected_version=2, status=RunStatus.FAILED, error="boom\x00 at \udc80 end"
    )
    assert failed.error == "boom\ufffd at \ufffd end"
    assert (await store.get_run(run_id)).error == "boom\ufffd at \ufffd end"


INPUTS: dict[str, Callable[[], Any]] = {
    "run-field-with-nul": lambda: NewRun(thread_id="thread\x00", ref="r"),
    "run-id-with-nul": lambda: new_run(id="run-\x00"),
    "answered-by-with-nul": lambda: InteractionAnswer(status="resolved", answered_by="ada\x00"),
    "via-with-nul": lambda: InteractionAnswer(status="resolved", via="cli\x00"),
    "interaction-id-with-nul": lambda: new_interaction("int-\x00"),
    "answer-too-deep": lambda: answer({"deep": nested(DEPTH)}),
    "answer-far-too-deep": lambda: answer({"deep": nested(5000)}),
    "answer-lone-surrogate": lambda: answer("\ud800"),
}
"""Store inputs no backend can keep: building them is refused (a ``UsageError`` inside)."""


@pytest.mark.parametrize("name", sorted(INPUTS))
def test_inputs_no_store_keeps_cannot_be_built(name: str) -> None:
    with pytest.raises(ValidationError) as caught:
        INPUTS[name]()
    assert any(isinstance(e.get("ctx", {}).get("error"), UsageError) for e in caught.value.errors())


LOOKUPS: dict[str, tuple[Write, type[Exception] | None]] = {
    "get_run": (lambda s, rid: s.get_run("run-\x00"), UnknownRunError),
    "list_interactions": (lambda s, rid: s.list_interactions("run-\x00"), UnknownRunError),
    "list_events": (lambda s, rid: s.list_events("run-\x00"), UnknownRunError),
    "wait_for_events": (
        lambda s, rid: s.wait_for_events("run-\x00", after_seq=0, timeout=0),
        UnknownRunError,
    ),
    "update_run": (lambda s, rid: s.update_run("run-\x00", expected_version=1), UnknownRunError),
    "append_events": (lambda s, rid: s.append_events("run-\x00", [("n", {})]), UnknownRunError),
    "get_interaction": (
        lambda s, rid: s.get_interaction(rid, "int-\x00"),
        UnknownInteractionError,
    ),
    "answer_interaction": (
        lambda s, rid: s.answer_interaction(rid, "int-\x00", answer()),
        UnknownInteractionError,
    ),
    "update_run-answers": (
        lambda s, rid: s.update_run(rid, expected_version=2, answers={"int-\x00": answer()}),
        UnknownInteractionError,
    ),
    "list_runs-thread": (lambda s, rid: s.list_runs(thread_id="thread-\x00"), None),
    "list_runs-after": (lambda s, rid: s.list_runs(after="run-\x00"), None),
}
"""Lookups of an id holding a NUL: no such record (none can exist), as for any unknown id."""


@pytest.mark.anyio
@pytest.mark.parametrize("name", sorted(LOOKUPS))
async def test_looking_up_an_id_with_nul_finds_nothing(store: Store, name: str) -> None:
    run_id = await _paused(store)
    before = await store_snapshot(store)
    call, refusal = LOOKUPS[name]
    if refusal is None:
        assert await call(store, run_id) == []
    else:
        with pytest.raises(refusal):
            await call(store, run_id)
    assert await store_snapshot(store) == before
