"""Async questions in durable recipe runs (an agent registered with ``async_questions=True``),
on every store: the await tool pauses the run and the last answer continues it; an answer
given while no process runs the agent is delivered to it as a message on resume; the await
record is never answered directly."""

from __future__ import annotations

from datetime import timedelta

import pytest
from ag_ui.core import ResumeEntry

from interactions import ConflictError, InvalidPayloadError
from interactions.async_questions import (
    ALL_ANSWERED_HEADER,
    MESSAGE_CANCELLED,
    MESSAGE_DELIVERED,
    MESSAGE_QUEUED,
)
from interactions.store import RunStatus, Store, utc_now
from interactions.testing.store_conformance import store_snapshot
from recipes.runs import Runner
from tests.recipes.runs.conftest import RECIPES

pytestmark = pytest.mark.anyio

AUTHOR = f"{RECIPES}:async_author"
LISTENER = f"{RECIPES}:async_listener"


async def test_the_await_tool_pauses_and_the_last_answer_continues_the_run(store: Store) -> None:
    runner = Runner(store, env={}, host="test")
    paused = await runner.start(AUTHOR, "Write it.")
    run_id = paused.run_id
    name, licence = f"{run_id}_author_async_1", f"{run_id}_author_async_2"
    assert paused.status is RunStatus.PAUSED_WAITING_HUMAN
    assert [i.id for i in paused.interrupts] == [name, licence], "the awaited questions"
    records = {r.id: r for r in await store.list_interactions(run_id)}
    [wait] = [r for r in records.values() if r.kind == "await"]
    assert wait.interrupt.metadata is not None
    assert wait.interrupt.metadata["pending"] == [name, licence]
    with pytest.raises(ConflictError) as refused:
        await runner.answer(run_id, wait.id, {"answer": "go"})
    assert refused.value.reason == "await" and name in str(refused.value)
    before = await store_snapshot(store)
    cancel = ResumeEntry(interrupt_id=wait.id, status="cancelled")
    go = ResumeEntry(interrupt_id=wait.id, status="resolved", payload={"answer": "go"})
    for entries in ([cancel], [go]):
        # a resume naming it was taken: the wait settled with its questions open, the run
        # continued, paused again on a wait of the same id, and failed
        with pytest.raises(ConflictError) as refused:
            await runner.resume(run_id, entries)
        assert refused.value.reason == "await" and name in str(refused.value)
    assert await store_snapshot(store) == before

    first = await runner.answer(run_id, name, {"answer": "Pipette"}, resume=True)
    assert (first.queued, first.resumed, first.still_open) == (True, False, [licence])
    assert (await runner.status(run_id)).status is RunStatus.PAUSED_WAITING_HUMAN
    with pytest.raises(InvalidPayloadError):
        await runner.resume_answered(run_id)

    last = await runner.answer(run_id, licence, {"answer": "MIT"}, resume=True)
    assert last.resumed and not last.queued and last.run is not None
    assert last.run.status is RunStatus.FINISHED
    assert last.run.text == (
        f"Done: Question posted as {name}; keep working. The answer arrives as a message "
        f'"[Answer to question {name}] ..." when the operator replies. Call await_answers only '
        f"when you cannot proceed without it. | Question posted as {licence}; keep working. "
        f'The answer arrives as a message "[Answer to question {licence}] ..." when the '
        "operator replies. Call await_answers only when you cannot proceed without it. | "
        f"{ALL_ANSWERED_HEADER}\n- [{name}] Q: Project name? — A: Pipette\n"
        f"- [{licence}] Q: Licence? — A: MIT"
    )
    settled = await store.get_interaction(run_id, wait.id)
    assert settled.answer is not None and settled.answer.answered_by == "system"
    events = [(e.type, e.data.get("interaction_id")) for e in await store.list_events(run_id)]
    assert (MESSAGE_QUEUED, name) in events
    assert (MESSAGE_CANCELLED, name) in events, "the await's text carried it: not delivered again"
    assert not [e for e in events if e[0] == MESSAGE_DELIVERED]


async def test_a_resume_with_entries_must_cover_what_the_await_waits_for(store: Store) -> None:
    runner = Runner(store, env={}, host="test")
    paused = await runner.start(AUTHOR, "Write it.")
    name, licence = (i.id for i in paused.interrupts)
    entry = ResumeEntry(interrupt_id=name, status="resolved", payload={"answer": "Pipette"})
    with pytest.raises(InvalidPayloadError) as refused:
        await runner.resume(paused.run_id, [entry])
    assert refused.value.reason == "incomplete_resume"
    assert (await store.get_interaction(paused.run_id, name)).answer is None, "nothing stored"
    both = [entry, ResumeEntry(interrupt_id=licence, status="resolved", payload={"answer": "MIT"})]
    done = await runner.resume(paused.run_id, both)
    assert done.status is RunStatus.FINISHED and done.text.endswith("A: MIT")


async def test_an_answer_given_while_the_run_is_down_is_delivered_on_resume(
    store: Store,
) -> None:
    runner = Runner(store, env={}, host="test")
    paused = await runner.start(LISTENER, "Go.")
    run_id = paused.run_id
    name = f"{run_id}_listener_async_1"
    [colour] = paused.interrupts
    assert colour.message == "Colour for logo?", "the blocking question is the pause"
    early = await runner.answer(run_id, name, {"answer": "Pipette"})  # no process runs the agent
    assert early.queued and not early.resumed
    done = await runner.answer(run_id, colour.id, {"answer": "teal"}, resume=True)
    assert done.run is not None and done.run.status is RunStatus.FINISHED
    assert done.run.text.endswith(
        f'| Answer: teal | [Answer to question {name}] Q: "Project name?" — A: Pipette'
    )
    events = [(e.type, e.data.get("interaction_id")) for e in await store.list_events(run_id)]
    assert events.count((MESSAGE_DELIVERED, name)) == 1


async def test_a_question_no_one_answered_closes_with_its_run_and_a_late_answer_is_refused(
    store: Store,
) -> None:
    runner = Runner(store, env={}, host="test")
    paused = await runner.start(LISTENER, "Go.")
    run_id, name = paused.run_id, f"{paused.run_id}_listener_async_1"
    [colour] = paused.interrupts
    done = await runner.answer(run_id, colour.id, {"answer": "teal"}, resume=True)
    assert done.run is not None and done.run.status is RunStatus.FINISHED
    assert await store.list_interactions(run_id, pending=True) == []  # not left open
    closed = await store.get_interaction(run_id, name)
    assert closed.answer is not None
    assert (closed.answer.status, closed.answer.answered_by) == ("cancelled", "system")
    with pytest.raises(ConflictError) as late:  # before: stored, "queued" to no one
        await runner.answer(run_id, name, {"answer": "Pipette"})
    assert late.value.reason == "run_ended"
    assert f"run {run_id} finished before this answer" in str(late.value)
    assert await store.get_interaction(run_id, name) == closed, "nothing was stored"


async def test_the_expiry_sweep_settles_awaited_questions_and_the_run_goes_on(
    store: Store,
) -> None:
    runner = Runner(store, env={"PI_INTERRUPT_TTL_SECONDS": "60"}, host="test")
    paused = await runner.start(AUTHOR, "Write it.")
    name = paused.interrupts[0].id
    await runner.answer(paused.run_id, name, {"answer": "Pipette"})
    [touched] = await runner.expire_due(now=utc_now() + timedelta(seconds=61))
    assert touched.status is RunStatus.FINISHED
    assert touched.text.endswith("Q: Licence? — A: (no answer: the question expired)")
    assert "A: Pipette" in touched.text
