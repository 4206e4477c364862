"""Reminders and escalation on the Temporal engine: the workflow's timers write
``interaction_reminded`` and ``interaction_escalated`` (a real dev server, on its clock: the
recipe reminds every second, so this test waits about two), and the escalated group answers
once escalated, not before."""

from __future__ import annotations

import anyio
import pytest

from interactions import NotAllowedError
from interactions.people import Identity
from interactions.store import RunStatus
from tests.recipes.temporal.conftest import RECIPES, open_engine
from tests.recipes.temporal.test_engine import settled

pytestmark = pytest.mark.anyio

RECIPE = f"{RECIPES}:reminding"
NOTICES = ("interaction_reminded", "interaction_escalated")


async def test_the_workflow_reminds_escalates_and_the_escalated_group_answers(
    address: object, worker: object
) -> None:
    async with worker(RECIPE), open_engine(address) as engine:  # type: ignore[operator]
        run = await engine.runner.start(RECIPE, "Ship it")
        assert run.status is RunStatus.PAUSED_WAITING_HUMAN
        (gate,) = run.interrupts
        kim = Identity("kim", frozenset({"ops"}))
        seen, said = 0, []
        with anyio.fail_after(30):
            while "interaction_escalated" not in said:
                events = await engine.store.wait_for_events(run.run_id, after_seq=seen, timeout=30)
                seen = events[-1].seq if events else seen
                said += [e.type for e in events if e.type in NOTICES]
                if "interaction_escalated" not in said and "interaction_reminded" in said:
                    with pytest.raises(NotAllowedError):  # reminded, not escalated yet
                        await engine.runner.answer(run.run_id, gate.id, {"answer": "Yes"},
                                                   answered_by=kim)  # fmt: skip
        assert said[0] == "interaction_reminded"
        reminded = [e for e in await engine.store.list_events(run.run_id)
                    if e.type == "interaction_reminded"]  # fmt: skip
        assert reminded[0].data == {"interaction_id": gate.id, "count": 1, "approvers": ["ada"]}
        done = await engine.runner.answer(
            run.run_id, gate.id, {"answer": "Yes"}, answered_by=kim, resume=True
        )
        assert done.created
        final = await settled(engine, run.run_id, RunStatus.FINISHED)
        assert final.status is RunStatus.FINISHED
        record = await engine.store.get_interaction(run.run_id, gate.id)
        assert record.answer is not None and record.answer.answered_by == "kim"
