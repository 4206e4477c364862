"""Each command imports what it uses: answering a question loads no dialogs, no HTTP client and
no JSON Schema validator (a fresh process that only answers should start fast)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.hosts.cli_helpers import RELEASE, cli_env, only_run_id, pi

HEAVY = ("questionary", "prompt_toolkit", "httpx", "jsonschema")

PROBE = """
import json, sys
from hosts.cli import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def _modules(*args: str, cwd: Path) -> tuple[int, set[str]]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env=cli_env(),
        stdin=subprocess.DEVNULL,
    )
    report = json.loads(done.stdout.strip().splitlines()[-1])
    return report["code"], set(report["modules"])


def test_runs_answer_and_resume_import_nothing_they_do_not_use(tmp_path: Path) -> None:
    pi("run", RELEASE, "Release v1", "--no-interactive", cwd=tmp_path)
    run_id = only_run_id(tmp_path)
    code, modules = _modules("runs", "answer", run_id, "int-call_channel", "Beta", cwd=tmp_path)
    assert code == 0
    assert [m for m in HEAVY if m in modules] == []
    code, modules = _modules("runs", "resume", run_id, cwd=tmp_path)
    assert code == 0
    assert [m for m in HEAVY if m in modules] == []


def test_version_is_printed() -> None:
    done = subprocess.run(
        [str(Path(sys.executable).parent / "pi-recipes"), "--version"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0 and done.stdout.startswith("pi-recipes 0.")


def test_building_the_parser_imports_no_host(tmp_path: Path) -> None:
    """The hosts' commands are listed from their entry points; a host is imported to run its
    command, never to build the parser (nor to answer a question)."""
    probe = (
        "import json, sys\nfrom hosts.cli import build_parser\nbuild_parser()\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('hosts.'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=60,
        env=cli_env(),
    )  # fmt: skip
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert [m for m in loaded if not m.startswith(("hosts.cli", "hosts._"))] == []
    code, modules = _modules("runs", "list", cwd=tmp_path)
    assert code == 0
    hosts = {m.split(".")[1] for m in modules if m.startswith("hosts.")}
    assert hosts <= {"cli", "_store", "_command"}  # shared command code, no host


LIGHT_PROBE = """
import json, sys
from hosts.cli import main
try:
    main(sys.argv[1:])
except SystemExit as done:
    code = done.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


@pytest.mark.parametrize(
    "args",
    [["--help"], ["--version"], ["runs", "--help"], ["runs", "answer", "--help"],
     ["graph", "run", "--help"], ["run", "--help"]],
    ids=" ".join,
)  # fmt: skip
def test_help_and_version_load_none_of_the_packages(args: list[str], tmp_path: Path) -> None:
    """``--help`` and ``--version`` build the parser only: not pi-recipes' own packages, not
    pydantic, anyio or rich (a shell's completion runs this on every Tab)."""
    done = subprocess.run(
        [sys.executable, "-c", LIGHT_PROBE, *args], cwd=tmp_path, capture_output=True,
        text=True, timeout=60, env=cli_env(),
    )  # fmt: skip
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["code"] == 0, done.stderr
    heavy = ("interactions", "recipes", "pydantic", "anyio", "rich", "httpx", "asyncio", *HEAVY)
    loaded = {m.partition(".")[0] for m in report["modules"]}
    assert sorted(loaded & set(heavy)) == []
