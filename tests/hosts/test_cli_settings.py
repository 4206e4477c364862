"""Settings a user gives once, in the environment: ``PI_RECIPES_STORE`` names the store every
command works on; ``--log-level`` (or ``PI_RECIPES_LOG_LEVEL``) says what is logged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hosts.cli import main
from tests.hosts.cli_helpers import RELEASE, cli_env, pi


def test_pi_recipes_store_names_the_store_of_every_command(
    here: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PI_RECIPES_STORE", str(here / "team.db"))
    assert main(["run", RELEASE, "Release v1", "--json"]) == 0
    run_id = json.loads(capsys.readouterr().out)["run_id"]
    assert (here / "team.db").is_file() and not (here / ".pi-recipes").exists()
    assert main(["runs", "list", "--json"]) == 0
    assert [r["id"] for r in json.loads(capsys.readouterr().out)] == [run_id]
    given = here / "given.db"
    assert main(["run", RELEASE, "Release v2", "--json", "--store", str(given)]) == 0
    other = json.loads(capsys.readouterr().out)["run_id"]
    assert main(["runs", "list", "--json", "--store", str(given)]) == 0, "--store comes first"
    assert [r["id"] for r in json.loads(capsys.readouterr().out)] == [other]


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({"PI_RECIPES_STORE": " "}, "PI_RECIPES_STORE needs a SQLite file path or a postgresql"),
        ({"PI_RECIPES_STORE": "temporal://localhost:7233/default"},
         "PI_RECIPES_STORE temporal://… names an engine, not a store"),
        ({"PI_RECIPES_STORE": "a.db", "PI_RECIPES_ENGINE": "temporal://localhost:7233/x"},
         "PI_RECIPES_STORE and PI_RECIPES_ENGINE are both set"),
    ],
)  # fmt: skip
def test_a_bad_store_in_the_environment_is_a_usage_error(
    here: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    env: dict[str, str],
    said: str,
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert main(["runs", "list"]) == 2
    assert said in capsys.readouterr().err
    assert list(here.iterdir()) == [], "nothing was created"


def test_log_level_says_what_is_logged(tmp_path: Path) -> None:
    debug = pi("--log-level", "debug", "runs", "list", cwd=tmp_path)
    assert debug.returncode == 0, debug.stderr
    assert "pi-recipes: DEBUG asyncio: Using selector" in debug.stderr
    quiet = pi("runs", "list", cwd=tmp_path, env=cli_env(PI_RECIPES_LOG_LEVEL="debug"))
    assert "pi-recipes: DEBUG asyncio: Using selector" in quiet.stderr, "from the environment"
    bad = pi("--log-level", "loud", "runs", "list", cwd=tmp_path)
    assert bad.returncode == 2 and "invalid choice: 'loud'" in bad.stderr
