"""The first steps of a new user: ``pi-recipes run --demo`` from any folder, and
``pi-recipes new NAME``, a project whose own test passes right after it is made."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hosts.cli import main
from tests.hosts.cli_helpers import cli_env


def test_the_demo_runs_from_any_folder(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--demo", "--json"]) == 0
    paused = json.loads(capsys.readouterr().out)
    assert paused["questions"][0]["message"] == "Where should v1.4.0 be published?"
    assert main(["run", "--demo", "Release v2.0.0", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["questions"][0]["message"] == (
        "Where should v2.0.0 be published?"
    )
    assert main(["run", "--demo", "Release v2", "extra"]) == 2
    assert "--demo runs the demo recipe: give a PROMPT only" in capsys.readouterr().err
    assert main(["run"]) == 2
    assert "or try the demo: pi-recipes run --demo" in capsys.readouterr().err


def test_a_new_project_pauses_is_answered_and_its_test_passes(
    here: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["new", "announcer"]) == 0
    said = capsys.readouterr().out
    assert said.startswith("Created announcer/: README.md, pyproject.toml, recipe.py")
    project = here / "announcer"
    assert '[project]\nname = "announcer"' in (project / "pyproject.toml").read_text()
    assert (project / "README.md").read_text().startswith("# announcer\n")

    tested = subprocess.run(  # the project's own test, as its author runs it
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=project, capture_output=True, text=True, timeout=120, env=cli_env(),
    )  # fmt: skip
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "2 passed" in tested.stdout

    monkeypatch.chdir(project)  # and from the command line, as its README says
    assert main(["run", "recipe.py", "Announce the release", "--json"]) == 0
    (question,) = json.loads(capsys.readouterr().out)["questions"]
    assert question["message"] == "Post to #general?"
    command = question["answer_command"].split()
    assert main([*command[1:4], command[4], '{"approved": true}', "--resume"]) == 0
    assert "The announcement step is done." in capsys.readouterr().out


@pytest.mark.parametrize(
    ("name", "said"),
    [("bad name!", "'bad name!' is not a project name"),
     ("taken", "taken already exists and is not an empty folder: nothing was written")],
)  # fmt: skip
def test_new_refuses_a_bad_name_or_a_folder_in_use(
    here: Path, capsys: pytest.CaptureFixture[str], name: str, said: str
) -> None:
    (here / "taken").mkdir()
    (here / "taken" / "notes.txt").write_text("mine")
    assert main(["new", name]) == 2
    assert said in capsys.readouterr().err
    assert sorted(p.name for p in here.rglob("*")) == ["notes.txt", "taken"]
