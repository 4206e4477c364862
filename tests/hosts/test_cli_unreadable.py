"""The ``runs`` commands on a run holding an interaction this pi-recipes cannot read (a descriptor
another tool, another version or a hand wrote): ``show``, ``pending`` and ``questions`` mark it
``unreadable`` and show the rest as usual; ``answer`` refuses it (exit 3, the error's reason on
stderr) and changes nothing. Each is a real ``pi-recipes`` process on a SQLite store written
through the store API."""

from __future__ import annotations

import json
from pathlib import Path

from interactions.testing.store_conformance import new_interaction
from tests.hosts.cli_helpers import pi
from tests.hosts.unreadable import UNREADABLE, both, paused_on, snapshot


def paused_with_both(db: Path) -> str:
    """A run paused on an unreadable question (``int-bad``), a readable one (``int-ok``) and
    an unreadable async one (``int-later``)."""
    later = new_interaction("int-later", kind="async", descriptor={"reason": 7})
    return paused_on(db, "run-unreadable", *both(later))


def test_the_runs_commands_show_an_unreadable_interaction_as_such(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    run_id = paused_with_both(db)
    store = ("--store", str(db))

    shown = pi("runs", "show", run_id, *store, cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "int-bad: (unreadable: reason: Field required) [pending]" in shown.stdout
    assert "int-ok: Which colour? [pending]" in shown.stdout
    assert "cannot read (int-bad, int-later): they cannot be answered here" in shown.stdout

    data = json.loads(pi("runs", "show", run_id, "--json", *store, cwd=tmp_path).stdout)
    found = {i["id"]: i for i in data["interactions"]}
    assert (found["int-bad"]["unreadable"], found["int-bad"]["descriptor"]) == (
        "reason: Field required",
        UNREADABLE,
    )
    assert found["int-ok"]["unreadable"] is None
    assert found["int-ok"]["descriptor"]["message"] == "Which colour?"

    pending = pi("runs", "pending", *store, cwd=tmp_path)
    assert pending.returncode == 0, pending.stderr
    assert "int-bad: unreadable (reason: Field required); it cannot be answered" in pending.stdout
    assert "int-ok: Which colour?" in pending.stdout
    listed = json.loads(pi("runs", "pending", "--json", *store, cwd=tmp_path).stdout)
    assert {i["id"]: i["unreadable"] for i in listed} == {
        "int-bad": "reason: Field required",
        "int-ok": None,
        "int-later": "reason: Input should be a valid string",
    }

    questions = pi("runs", "questions", run_id, *store, cwd=tmp_path)
    assert questions.returncode == 0, questions.stderr
    assert "Q: int-later (unreadable: reason: Input should be a valid string)" in questions.stdout


def test_answering_an_unreadable_interaction_is_refused_and_changes_nothing(
    tmp_path: Path,
) -> None:
    db = tmp_path / "state.db"
    run_id = paused_with_both(db)
    before = snapshot(db)
    for how in (('{"answer": "red"}',), ("red",), ("--cancel",)):
        refused = pi("runs", "answer", run_id, "int-bad", *how, "--store", str(db), cwd=tmp_path)
        assert refused.returncode == 3, (refused.stdout, refused.stderr)
        assert "interaction int-bad of run run-unreadable is stored in a form" in refused.stderr
        assert "Traceback" not in refused.stderr
    assert snapshot(db) == before, "a refused answer changes nothing"
    answered = pi("runs", "answer", run_id, "int-ok", "blue", "--store", str(db), cwd=tmp_path)
    assert answered.returncode == 0, answered.stderr
