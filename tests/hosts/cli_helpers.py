"""Run the installed ``pi-recipes`` command as a user would: a real process per call."""

from __future__ import annotations

import getpass
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
RELEASE = str(ROOT / "examples" / "release.py")
PI_RECIPES = str(Path(sys.executable).parent / "pi-recipes")
OPERATOR = f"cli:{getpass.getuser()}"
"""Who ``runs answer`` records without ``--as``: the local operator (``cli_env`` keeps the
login variables ``getpass`` reads)."""


def cli_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PI_")}
    return env | {"COLUMNS": "200", **extra}


def pi(
    *args: str, cwd: Path, input: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``pi-recipes ARGS`` in ``cwd`` with no terminal; bounded by a timeout."""
    return subprocess.run(
        [PI_RECIPES, *args],
        cwd=cwd,
        input=input,
        capture_output=True,
        text=True,
        timeout=60,
        env=env or cli_env(),
        stdin=None if input is not None else subprocess.DEVNULL,
    )


def pi_json(*args: str, cwd: Path) -> Any:
    done = pi(*args, "--json", cwd=cwd)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def only_run_id(cwd: Path) -> str:
    (run,) = pi_json("runs", "list", cwd=cwd)
    return str(run["id"])
