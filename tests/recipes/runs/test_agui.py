"""AG-UI events of a run that pauses twice: valid ag-ui-protocol models, in order."""

from __future__ import annotations

import pytest
from ag_ui.core import Event, EventType, ResumeEntry, RunFinishedEvent
from pydantic import TypeAdapter

from interactions import AskUserInterrupt
from interactions.store import Store
from recipes.runs import Runner, Surface
from recipes.runs.agui import agui_events, event_json
from tests.recipes.runs.conftest import QUESTIONS, TWO_PAUSES

pytestmark = pytest.mark.anyio

EVENTS = TypeAdapter(Event)


async def agui_json(store: Store, run_id: str) -> list[dict[str, object]]:
    """The run's AG-UI events as their wire JSON, rebuilt from the store."""
    return [event_json(e) for e in await agui_events(store, run_id)]


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

    raw = await agui_json(store, first.run_id)
    events = [EVENTS.validate_python(data) for data in raw]  # every one is a valid AG-UI event
    types = [e.type.value for e in events]
    assert types == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",  # deltas coalesced
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
        "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
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
    # each leg is an AG-UI run of its own; a resume names the paused leg as its parent
    started = [e for e in events if e.type is EventType.RUN_STARTED]
    legs = [(e.run_id, e.parent_run_id) for e in started]  # type: ignore[attr-defined]
    run = first.run_id
    assert legs == [(run, None), (f"{run}.2", run), (f"{run}.3", f"{run}.2")]
    assert [f.run_id for f in finished] == [run, f"{run}.2", f"{run}.3"]
    assert (first.agui_run_id, second.agui_run_id, done.agui_run_id) == (
        run,
        f"{run}.2",
        f"{run}.3",
    )


async def test_the_interrupt_outcome_carries_the_whole_pause_record(store: Store) -> None:
    runner = Runner(store, env={})
    paused = await runner.start(QUESTIONS, "name the release")
    [stored] = await store.list_interactions(paused.run_id)
    raw = await agui_json(store, paused.run_id)
    [finished] = [EVENTS.validate_python(d) for d in raw if d["type"] == "RUN_FINISHED"]
    assert isinstance(finished, RunFinishedEvent) and finished.outcome is not None
    [parsed] = finished.outcome.interrupts  # type: ignore[union-attr]
    # ag-ui's own model keeps our fields; reading it back gives the stored record exactly
    again = AskUserInterrupt.model_validate(parsed.model_dump(by_alias=True))
    assert again == stored.interrupt == paused.interrupts[0]
    assert [o.label for o in again.options] == ["Otter", "Badger"]
    assert again.options[1].description == "the underdog"
    assert again.expires_at and again.allow_other is False and again.selection == "single"


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


async def test_live_events_and_events_rebuilt_from_the_store_are_the_same(store: Store) -> None:
    live: list[dict[str, object]] = []

    def sink(event: object) -> None:
        live.append(event_json(event))  # type: ignore[arg-type]

    runner = Runner(store, env={})
    first = await runner.start(TWO_PAUSES, "deploy the api", surface=Surface(on_event=sink))
    await runner.resume(
        first.run_id,
        [ResumeEntry(interrupt_id="int-a1", status="resolved", payload={"approved": True})],
        surface=Surface(on_event=sink),
    )

    def joined(events: list[dict[str, object]]) -> list[dict[str, object]]:
        out: list[dict[str, object]] = []
        for event in events:  # the live text in deltas, the rebuilt text in one piece
            if event["type"] == "TEXT_MESSAGE_CONTENT" and out and out[-1]["type"] == event["type"]:
                out[-1] = {**out[-1], "delta": str(out[-1]["delta"]) + str(event["delta"])}
            else:
                out.append(event)
        return out

    assert joined(live) == await agui_json(store, first.run_id)


async def test_a_run_cancelled_while_paused_ends_cancelled_with_no_interrupt_open(
    store: Store,
) -> None:
    """Before, the history ended on the pause: a client replaying it showed the question open,
    though no answer could reach it any more."""
    runner = Runner(store, env={})
    paused = await runner.start(TWO_PAUSES, "deploy the api")
    await runner.cancel(paused.run_id)
    events = [EVENTS.validate_python(data) for data in await agui_json(store, paused.run_id)]
    *_, pause, started, ended = events
    assert isinstance(pause, RunFinishedEvent) and pause.outcome is not None
    assert pause.outcome.type == "interrupt"
    run = paused.run_id
    assert started.type is EventType.RUN_STARTED
    assert (started.run_id, started.parent_run_id) == (f"{run}.2", run)  # type: ignore[attr-defined]
    assert isinstance(ended, RunFinishedEvent) and ended.run_id == f"{run}.2"
    assert ended.outcome is not None and ended.outcome.type == "cancelled"
    assert ended.thread_id == paused.thread_id
