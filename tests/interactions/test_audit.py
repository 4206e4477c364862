"""The audit export's rows (:mod:`interactions.audit`) on every store: one per interaction,
oldest asked first, with the question, who could answer, the answer and who gave it, the votes
and the run's decisions; bounded by when it was asked; and the times it reads."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from interactions import UsageError
from interactions.audit import (
    AUDIT_COLUMNS,
    TOOL_CALL_DECIDED,
    AuditRow,
    audit_rows,
    audit_time,
)
from interactions.store import MemoryStore, Store, open_store
from tests.fixtures.audit_store import POLICY, T0, fill, postgres_schema


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    if request.param == "memory":
        async with MemoryStore() as memory:
            yield memory
        return
    if request.param == "sqlite":
        async with await open_store(str(tmp_path / "state.db")) as sqlite:
            yield sqlite
        return
    with postgres_schema() as url:
        async with await open_store(url) as postgres:
            yield postgres


async def _rows(store: Store, **bounds: Any) -> list[AuditRow]:
    return [row async for row in audit_rows(store, **bounds)]


@pytest.mark.anyio
async def test_every_interaction_with_its_answer_votes_and_decisions(store: Store) -> None:
    one, two = await fill(store)
    rows = await _rows(store, page_size=2)  # pages of two: the page boundary is crossed
    assert [(r.run_id, r.interaction_id) for r in rows] == [
        (one, "int-q"), (one, "int-ok"), (two, "int-later"),
    ]  # fmt: skip
    asked, approval, later = rows
    assert (asked.thread_id, asked.run_kind, asked.ref, asked.kind) == (
        "thread-a", "recipe", "release.py", "blocking",
    )  # fmt: skip
    assert asked.question == 'Which channel, "beta" or stable?\nPick one'
    assert asked.title == "Release channel" and asked.reason == "input_required"
    assert [o["value"] for o in asked.options] == ["beta", "stable"]
    assert asked.approvers == ["ada", "group:ops"] and asked.required_approvals == 1
    assert (asked.asked_at, asked.answered_at) == (T0, T0 + timedelta(minutes=5))
    assert (asked.status, asked.payload, asked.answered_by, asked.via) == (
        "resolved", {"answer": "beta"}, "ada", "slack",
    )  # fmt: skip
    assert asked.votes == []
    assert (approval.required_approvals, approval.status) == (2, "resolved")
    assert approval.payload == {"approved": True, "feedback": "cy: ok"}
    assert (approval.answered_by, approval.via) == ("bo, cy", "cli")
    assert [(v["voter"], v["approved"], v["via"]) for v in approval.votes] == [
        ("bo", True, "web"), ("cy", True, "cli"),
    ]  # fmt: skip
    decided = [d["type"] for d in approval.decisions]
    assert decided == ["tool_call_decided", "decision_remembered"]
    policy = approval.decisions[0]
    assert {k: policy[k] for k in POLICY} == POLICY and policy["at"]
    assert approval.decisions[1]["decided_by"] == "cy"
    assert asked.decisions == approval.decisions  # the run's, on each of its rows
    assert (later.thread_id, later.run_kind, later.status, later.payload) == (
        "thread-b", "graph", "pending", None,
    )  # fmt: skip
    assert later.answered_at is None and later.decisions == []
    assert (later.question, later.reason, later.options) == ("Anything else?", None, [])


@pytest.mark.anyio
async def test_since_and_until_bound_when_it_was_asked(store: Store) -> None:
    await fill(store)
    hour = timedelta(hours=1)

    async def ids(**bounds: datetime) -> list[str]:
        return [row.interaction_id for row in await _rows(store, **bounds)]

    assert await ids(since=T0 + hour) == ["int-ok", "int-later"]  # since: included
    assert await ids(until=T0 + hour) == ["int-q"]  # until: not included
    assert await ids(since=T0 + hour / 2, until=T0 + 2 * hour) == ["int-ok"]
    assert await ids(since=T0 + 3 * hour) == []


@pytest.mark.anyio
async def test_a_row_as_json_and_as_csv_reads_back(store: Store) -> None:
    await fill(store)
    rows = await _rows(store)
    for row in rows:
        assert json.loads(row.json_line()) == row.model_dump(mode="json")
        assert "\n" not in row.json_line()
    text = io.StringIO()
    writer = csv.writer(text)
    writer.writerow(AUDIT_COLUMNS)
    writer.writerows(row.csv_values() for row in rows)
    header, *read = list(csv.reader(io.StringIO(text.getvalue())))
    assert tuple(header) == AUDIT_COLUMNS
    first = dict(zip(header, read[0], strict=True))
    assert first["question"] == 'Which channel, "beta" or stable?\nPick one'
    assert json.loads(first["payload"]) == {"answer": "beta"}
    assert first["answered_by"] == "ada" and first["asked_at"] == "2026-03-01T09:00:00Z"
    assert json.loads(first["approvers"]) == ["ada", "group:ops"]
    pending = dict(zip(header, read[2], strict=True))
    assert (pending["payload"], pending["answered_at"], pending["status"]) == ("", "", "pending")


@pytest.mark.anyio
async def test_a_store_that_cannot_page_interactions_is_refused() -> None:
    class Bare:  # what the Temporal engine's store is to the export: no page_interactions
        pass

    with pytest.raises(UsageError, match="cannot list every run's interactions"):
        await _rows(Bare())  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("2026-12-01", datetime(2026, 12, 1, tzinfo=UTC)),
        ("2026-12-01T09:30", datetime(2026, 12, 1, 9, 30, tzinfo=UTC)),
        ("2026-12-01T09:30:00Z", datetime(2026, 12, 1, 9, 30, tzinfo=UTC)),
        (" 2026-12-01T11:30:00+02:00 ", datetime(2026, 12, 1, 9, 30, tzinfo=UTC)),
    ],
)
def test_times_are_iso_8601_and_utc_without_an_offset(given: str, expected: datetime) -> None:
    assert audit_time(given) == expected
    assert audit_time(given).tzinfo is UTC


@pytest.mark.parametrize("given", ["", "yesterday", "2026-13-01", "1733580000", "2026-12-01 nope"])
def test_other_times_are_refused_saying_what_to_give(given: str) -> None:
    with pytest.raises(UsageError, match="ISO 8601"):
        audit_time(given)


def test_the_decision_event_is_spelled_as_recipes_spells_it() -> None:
    from recipes.decisions import TOOL_CALL_DECIDED as RECIPES_SPELLING

    assert TOOL_CALL_DECIDED == RECIPES_SPELLING
