"""The recipe, driven as a durable run: it pauses for the approval, the answer is stored, and
the run finishes, as it would when a person answers from the CLI, a web page or Slack."""

from __future__ import annotations

from pathlib import Path

import pytest

from interactions.store import open_sqlite_store
from recipes.runs import Runner

RECIPE = str(Path(__file__).resolve().parents[1] / "recipe.py")


@pytest.fixture
def anyio_backend() -> str:
    """The event loop anyio's pytest plugin runs the ``anyio``-marked tests on."""
    return "asyncio"


@pytest.mark.anyio
async def test_the_announcement_waits_for_approval_then_is_posted(tmp_path: Path) -> None:
    async with await open_sqlite_store(tmp_path / "state.db") as store:
        runner = Runner(store)
        started = await runner.start(RECIPE, "Announce the release")
        assert started.status == "paused_waiting_human"
        (approval,) = started.interrupts
        assert approval.message == "Post to #general?"
        assert approval.display is not None and approval.display.body == "Release v1.0 is out."

        done = await runner.answer(started.run_id, approval.id, {"approved": True}, resume=True)
        assert done.run is not None and done.run.status == "finished"
        assert done.run.text == "The announcement step is done."


@pytest.mark.anyio
async def test_a_declined_announcement_is_not_posted(tmp_path: Path) -> None:
    async with await open_sqlite_store(tmp_path / "state.db") as store:
        runner = Runner(store)
        started = await runner.start(RECIPE, "Announce the release")
        answered = await runner.answer(
            started.run_id, started.interrupts[0].id, status="cancelled", resume=True
        )
        assert answered.run is not None and answered.run.status == "finished"
        result = await store.get_interaction(started.run_id, started.interrupts[0].id)
        assert result.answer is not None and result.answer.status == "cancelled"
