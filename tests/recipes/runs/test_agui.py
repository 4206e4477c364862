"""AG-UI events of a run that pauses twice: valid ag-ui-protocol models, in order."""

from __future__ import annotations

import pytest
from ag_ui.core import Event, EventType, ResumeEntry, RunFinishedEvent
from pydantic import TypeAdapter

from interactions.store import Store
from recipes.runs import Runner
from tests.recipes.runs.conftest import TWO_PAUSES

pytestmark = pytest.mark.anyio

EVENTS = TypeAdapter(Event)
AGUI_TYPES = {t.value for t in EventType}


async def agui_events(store: Store, run_id: str) -> list[dict[str, object]]:
    return [e.data for e in await store.list_events(run_id) if e.type in AGUI_TYPES]


async def test_a_run_that_pauses_twice(store: Store) -> None:
    runner = Runner(store, env={})
    first = await runner.start(TWO_PAUSES, "deploy the api")
    second = await runner.resume(
        first.run_id,
        [ResumeEntry(interrupt_id="int-a1", status="resolved", payload={"approved": True})],
    )
    done = await runner.resume(
        first.run_id,
        [ResumeEntry(interrupt_id="int-n1", status="resolved", payload={"answer": "Otter"})],
    )
    assert done.text == "Done: Approved. | Answer: Otter"

    raw = await agui_events(store, first.run_id)
    events = [EVENTS.validate_python(data) for data in raw]  # every one is a valid AG-UI event
    types = [e.type.value for e in events]
    assert types == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START", *["TEXT_MESSAGE_CONTENT"] * 3, "TEXT_MESSAGE_END",
        "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END",
        "RUN_FINISHED",
        # the first resume: the paused call's result under its original id, no second start
        "RUN_STARTED",
        "TOOL_CALL_RESULT",
        "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END",
        "RUN_FINISHED",
        # the second resume
        "RUN_STARTED",
        "TOOL_CALL_RESULT",
        "TEXT_MESSAGE_START", *["TEXT_MESSAGE_CONTENT"] * 3, "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]  # fmt: skip
    finished = [e for e in events if isinstance(e, RunFinishedEvent)]
    outcomes = [f.outcome.type if f.outcome else None for f in finished]
    assert outcomes == ["interrupt", "interrupt", "success"]
    assert finished[0].outcome is not None and finished[0].outcome.type == "interrupt"
    assert [i.id for i in finished[0].outcome.interrupts] == ["int-a1"]
    interrupt = finished[0].outcome.interrupts[0]
    assert interrupt.tool_call_id == "a1" and interrupt.reason == "confirmation"
    assert interrupt.response_schema is not None and interrupt.expires_at
    starts = [e for e in events if e.type is EventType.TOOL_CALL_START]
    results = [e for e in events if e.type is EventType.TOOL_CALL_RESULT]
    assert [s.tool_call_id for s in starts] == ["a1", "n1"]  # type: ignore[attr-defined]
    assert [r.tool_call_id for r in results] == ["a1", "n1"]  # type: ignore[attr-defined]
    assert [r.content for r in results] == ["Approved.", "Answer: Otter"]  # type: ignore[attr-defined]
    assert {e.thread_id for e in finished} == {first.thread_id}
    assert second.thread_id == first.thread_id


async def test_store_keeps_an_audit_trail_of_answers(store: Store) -> None:
    runner = Runner(store, env={}, host="cli")
    first = await runner.start(TWO_PAUSES, "deploy the api")
    await runner.answer(first.run_id, "int-a1", {"approved": True}, answered_by="ada", resume=True)
    answered = [
        e for e in await store.list_events(first.run_id) if e.type == "interaction_answered"
    ]
    assert len(answered) == 1
    data = answered[0].data
    assert data["answered_by"] == "ada" and data["via"] == "cli"
