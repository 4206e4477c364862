"""``pi-recipes audit export`` as a user runs it (a process per call), on a SQLite file and on
PostgreSQL: every interaction across runs, oldest asked first, as JSON lines or CSV, bounded
by ``--since``/``--until``; an answer given through the command line is listed with who gave
it; bad bounds and a missing store are usage errors."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from interactions.store import open_store
from tests.fixtures.audit_store import POSTGRES, fill, postgres_schema
from tests.fixtures.stores.copies import postgres_copy, sqlite_copy
from tests.hosts.cli_helpers import OPERATOR, RELEASE, only_run_id, pi


@pytest.fixture(params=["sqlite", "postgresql"])
def filled(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str, str]]:
    """A store (its ``--store``) holding :func:`fill`'s runs, and their ids."""

    async def write(where: str) -> tuple[str, str]:
        async with await open_store(where) as store:
            return await fill(store)

    if request.param == "sqlite":
        where = str(tmp_path / "audit.db")
        yield where, *anyio.run(write, where)
        return
    with postgres_schema() as url:
        yield url, *anyio.run(write, url)


def export(tmp_path: Path, store: str, *args: str) -> str:
    done = pi("audit", "export", "--store", store, *args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    return done.stdout


def jsonl(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


def test_jsonl_lists_every_interaction_oldest_first_with_answers_and_who(
    tmp_path: Path, filled: tuple[str, str, str]
) -> None:
    store, one, two = filled
    rows = jsonl(export(tmp_path, store))
    assert [(r["run_id"], r["interaction_id"]) for r in rows] == [
        (one, "int-q"), (one, "int-ok"), (two, "int-later"),
    ]  # fmt: skip
    asked, approval, later = rows
    assert asked["question"] == 'Which channel, "beta" or stable?\nPick one'
    assert (asked["thread_id"], asked["ref"], asked["approvers"]) == (
        "thread-a", "release.py", ["ada", "group:ops"],
    )  # fmt: skip
    assert (asked["status"], asked["payload"], asked["answered_by"], asked["via"]) == (
        "resolved", {"answer": "beta"}, "ada", "slack",
    )  # fmt: skip
    assert asked["asked_at"] == "2026-03-01T09:00:00Z"
    assert asked["answered_at"] == "2026-03-01T09:05:00Z"
    assert [v["voter"] for v in approval["votes"]] == ["bo", "cy"]
    assert [d["type"] for d in approval["decisions"]] == [
        "tool_call_decided", "decision_remembered",
    ]  # fmt: skip
    assert approval["decisions"][0]["rule"] == {"file": "policy.yaml", "line": 3}
    assert (later["status"], later["run_kind"]) == ("pending", "graph")
    assert not (tmp_path / ".pi-recipes").exists(), "nothing went to the SQLite default"


def test_csv_reads_back_with_the_csv_module(tmp_path: Path, filled: tuple[str, str, str]) -> None:
    store, one, _ = filled
    header, *rows = list(csv.reader(io.StringIO(export(tmp_path, store, "--format", "csv"))))
    assert header[:5] == ["run_id", "thread_id", "run_kind", "ref", "interaction_id"]
    by_id = {row[4]: dict(zip(header, row, strict=True)) for row in rows}
    assert list(by_id) == ["int-q", "int-ok", "int-later"]
    asked = by_id["int-q"]
    assert asked["run_id"] == one
    assert asked["question"] == 'Which channel, "beta" or stable?\nPick one'
    assert json.loads(asked["payload"]) == {"answer": "beta"}
    assert (asked["answered_by"], asked["via"], asked["status"]) == ("ada", "slack", "resolved")
    assert json.loads(asked["options"])[0] == {"label": "Beta", "value": "beta"}
    assert by_id["int-ok"]["required_approvals"] == "2"
    assert json.loads(by_id["int-ok"]["payload"]) == {"approved": True, "feedback": "cy: ok"}
    assert (by_id["int-later"]["payload"], by_id["int-later"]["answered_by"]) == ("", "")


@pytest.mark.parametrize("form", ["jsonl", "csv"])
def test_since_and_until_bound_when_it_was_asked(
    tmp_path: Path, filled: tuple[str, str, str], form: str
) -> None:
    store = filled[0]

    def ids(*bounds: str) -> list[str]:
        out = export(tmp_path, store, "--format", form, *bounds)
        if form == "jsonl":
            return [row["interaction_id"] for row in jsonl(out)]
        return [row["interaction_id"] for row in csv.DictReader(io.StringIO(out))]

    assert ids("--since", "2026-03-01T10:00:00Z") == ["int-ok", "int-later"]
    assert ids("--until", "2026-03-01T10:00") == ["int-q"]
    assert ids("--since", "2026-03-01T11:30:00+02:00", "--until", "2026-03-01T11:00Z") == [
        "int-ok"
    ]
    assert ids("--since", "2026-03-02") == []


def test_an_answer_given_with_the_command_line_is_listed_with_who_and_via(
    tmp_path: Path,
) -> None:
    assert pi("run", RELEASE, "Release v9", "--no-interactive", cwd=tmp_path).returncode == 0
    run_id = only_run_id(tmp_path)
    answered = pi("runs", "answer", run_id, "int-call_channel", '{"answer": "beta"}',
                  cwd=tmp_path)  # fmt: skip
    assert answered.returncode == 0, answered.stderr
    done = pi("audit", "export", cwd=tmp_path)  # the default store, as every command reads it
    assert done.returncode == 0, done.stderr
    (row,) = jsonl(done.stdout)
    assert (row["run_id"], row["interaction_id"], row["status"]) == (
        run_id, "int-call_channel", "resolved",
    )  # fmt: skip
    assert (row["payload"], row["answered_by"], row["via"]) == ({"answer": "beta"}, OPERATOR, "cli")
    assert row["question"] and row["options"] and row["asked_at"] <= row["answered_at"]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--since", "yesterday"], "is no ISO 8601 date or time"),
        (["--until", "2026-02-30"], "is no ISO 8601 date or time"),
    ],
)
def test_bad_bounds_are_usage_errors(tmp_path: Path, args: list[str], said: str) -> None:
    done = pi("audit", "export", "--store", str(tmp_path / "none.db"), *args, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("pi-recipes: ") and said in done.stderr
    assert done.stdout == "" and not (tmp_path / "none.db").exists()


def test_no_store_is_a_usage_error_and_creates_none(tmp_path: Path) -> None:
    done = pi("audit", "export", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "no store here" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / ".pi-recipes").exists()
    missing = pi("audit", "export", "--store", str(tmp_path / "gone.db"), cwd=tmp_path)
    assert missing.returncode != 0 and not (tmp_path / "gone.db").exists()


def test_a_bad_format_is_refused_by_the_parser(tmp_path: Path) -> None:
    done = pi("audit", "export", "--format", "xml", cwd=tmp_path)
    assert done.returncode == 2 and "invalid choice: 'xml'" in done.stderr


@pytest.fixture(params=["sqlite", "postgres"])
def old_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A copy of a store an earlier pi-recipes wrote (its answers' events name no payload)."""
    if request.param == "sqlite":
        yield str(sqlite_copy(tmp_path))
        return
    if not POSTGRES:
        pytest.skip("set PI_RECIPES_TEST_POSTGRES to open the stored PostgreSQL fixture")
    with postgres_copy(POSTGRES) as conninfo:
        yield conninfo


def test_a_store_an_earlier_version_wrote_exports_its_answers_from_their_rows(
    tmp_path: Path, old_store: str
) -> None:
    rows = jsonl(export(tmp_path, old_store))
    by_key = {(r["run_id"], r["interaction_id"]): r for r in rows}
    assert ("run-fixture-question", "int-call_channel") in by_key
    assert [r["asked_at"] for r in rows] == sorted(r["asked_at"] for r in rows)
    answered = by_key[("run-fixture-replay", "int-call_deploy")]
    assert (answered["status"], answered["answered_by"], answered["via"]) == (
        "resolved", "ada", "fixtures",
    )  # fmt: skip
    assert answered["payload"] is not None
    pending = by_key[("run-fixture-question", "int-call_channel")]
    assert (pending["status"], pending["payload"], pending["answered_by"]) == (
        "pending", None, None,
    )  # fmt: skip
