"""What the command line tests share."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh working folder for commands run in this process (``hosts.cli.main``), as a
    user's shell would be: none of pi-recipes' ``PI_*`` settings in the environment."""
    monkeypatch.chdir(tmp_path)
    for name in [n for n in os.environ if n.startswith("PI_")]:
        monkeypatch.delenv(name)
    return tmp_path
