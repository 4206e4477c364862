"""Runner tests run against both embedded backends: in-memory and a real SQLite file."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from interactions.store import MemoryStore, SQLiteStore, Store, open_sqlite_store

HERE = Path(__file__).parent
RELEASE = str(HERE.parent.parent.parent / "examples" / "release.py")
RECIPES = str(HERE / "recipes_for_tests.py")
PARALLEL = f"{RECIPES}:parallel"
TWO_PAUSES = f"{HERE / 'recipes_for_tests.py'}:approval_then_question"


@pytest.fixture(params=["memory", "sqlite"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    if request.param == "memory":
        async with MemoryStore() as memory:
            yield memory
    else:
        opened: SQLiteStore = await open_sqlite_store(tmp_path / "state.db")
        async with opened:
            yield opened
QUESTIONS = f"{RECIPES}:questions"
ACT_AFTER_APPROVAL = f"{RECIPES}:act_after_approval"
