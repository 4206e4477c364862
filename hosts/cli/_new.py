"""``pi-recipes new NAME``: a project to start from — a recipe whose one tool asks a person, the
scripted model that drives it, a test that drives the run (paused, answered, finished) and a
README. Its test passes right after ``new``."""

from __future__ import annotations

import argparse
import re
from importlib.resources import files
from pathlib import Path

from interactions import UsageError

__all__ = ["new_command"]

_FILES = {
    "README.md": "README.md",
    "pyproject.toml": "pyproject.toml",
    "recipe.py": "recipe.py",
    "script.json": "script.json",
    "test_recipe.py": "tests/test_recipe.py",
}
"""Each file of the scaffold (in ``hosts/_scaffold``) and where it goes in the project."""

_PROJECT_NAME = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$")


def new_command(args: argparse.Namespace) -> int:
    """Write the project into the folder ``args.name`` (which must not exist, or be empty)."""
    target = Path(args.name)
    name = target.resolve().name
    if not _PROJECT_NAME.match(name):
        raise UsageError(
            f"{name!r} is not a project name: use letters, digits, '-', '_' and '.', starting "
            "and ending with a letter or digit"
        )
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise UsageError(f"{target} already exists and is not an empty folder: nothing was written")
    scaffold = files("hosts") / "_scaffold"
    for source, destination in _FILES.items():
        text = (scaffold / source).read_text(encoding="utf-8").replace("{name}", name)
        path = target / destination
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    written = ", ".join(sorted(_FILES.values()))
    print(f"Created {target}/: {written}")
    print("Next:")
    print(f"  cd {target}")
    print('  pi-recipes run recipe.py "Announce the release"')
    print("  pytest")
    return 0
