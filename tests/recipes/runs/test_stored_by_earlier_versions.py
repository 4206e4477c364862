"""Stores written by an earlier pi-recipes open, and their paused runs resume.

``tests/fixtures/stores`` holds a SQLite store file and a PostgreSQL dump that commit 3f22520
wrote (``make_fixtures.py`` says how, and which runs they hold). Each test opens a copy of one
(the file copied into ``tmp_path``; the dump loaded into a fresh database when
``PI_RECIPES_TEST_POSTGRES`` names a server, skipped without one), then reads or continues
one run through the public API, as a person would: with the interaction ids the old version
stored, which people hold in a link or a message, and checking what they see.

This is the promise every later version keeps: change how ids are derived, how checkpoints are
shaped or how the store is called, and this file still passes, unchanged. Never write the
fixtures again to make it pass.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from ag_ui.core import ResumeEntry

from interactions import ConflictError, UnknownInteractionError
from interactions.async_questions import pending_async
from interactions.store import (
    RunStatus,
    Store,
    open_postgres_store,
    open_sqlite_store,
    utc_now,
)
from recipes.runs import Runner
from recipes.runs.agui import agui_events, event_json
from tests.fixtures.stores.copies import RUN_IDS, postgres_copy, sqlite_copy

pytestmark = pytest.mark.anyio

QUESTION, REPLAY, BATCH = "run-fixture-question", "run-fixture-replay", "run-fixture-batch"
GRAPH_AGENT, GRAPH_HUMAN = "run-fixture-graph-agent", "run-fixture-graph-human"
ASYNC, RETRY = "run-fixture-async", "run-fixture-retry"
NAME, LICENCE = f"{ASYNC}_author_async_1", f"{ASYNC}_author_async_2"

OPEN = {
    QUESTION: ["int-call_channel"],
    REPLAY: ["int-call_deploy.2"],
    BATCH: ["int-call_colour", "int-call_toppings"],
    GRAPH_AGENT: ["int-draft.1.call_pick"],
    GRAPH_HUMAN: ["int-review.1.approved", "int-review.1.channel"],
    ASYNC: [LICENCE],
    RETRY: [],
}
"""What each run waits for, by the ids the old version stored."""

ASKED = {
    "int-call_channel": "Where should v1.4.0 be published?",
    "int-call_deploy.2": "Deploy api to production?",
    "int-call_colour": "Colour for the box?",
    "int-call_toppings": "Toppings for the pizza?",
    "int-draft.1.call_pick": "Which change leads v2?",
    "int-review.1.approved": "Publish these notes?",
    "int-review.1.channel": "Publish these notes? (channel)",
    LICENCE: "Licence?",
}
"""What each open question shows."""

ANSWERED = {
    REPLAY: {"int-call_deploy": {"answer": "production"}},
    GRAPH_HUMAN: {"int-draft.1.call_pick": {"answer": "safety"}},
    ASYNC: {NAME: {"answer": "Pipette"}},
    RETRY: {"int-call_tone": {"answer": "friendly"}},
}
"""The answers the old version stored (all given by ``ada``)."""


@pytest.fixture
def anyio_backend() -> str:
    """The stored data is under test, not the event loop (the runner's tests cover trio)."""
    return "asyncio"


@pytest.fixture(params=["sqlite", "postgres"])
def old_store_at(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """Where a working copy of a stored fixture is: ``(backend, path or connection string)``."""
    if request.param == "sqlite":
        yield "sqlite", str(sqlite_copy(tmp_path))
        return
    server = os.environ.get("PI_RECIPES_TEST_POSTGRES")
    if not server:
        pytest.skip("set PI_RECIPES_TEST_POSTGRES to open the stored PostgreSQL fixture")
    with postgres_copy(server) as conninfo:
        yield "postgres", conninfo


@pytest.fixture
async def old_store(old_store_at: tuple[str, str]) -> AsyncIterator[Store]:
    backend, where = old_store_at
    opened = await (open_sqlite_store(where) if backend == "sqlite" else open_postgres_store(where))
    async with opened as store:
        yield store


def runner_on(store: Store) -> Runner:
    """A process of today resuming the runs: no flag set, the model each run stored."""
    return Runner(store, env={}, host="test")


async def open_ids(runner: Runner, run_id: str) -> list[str]:
    """What ``run_id`` waits for, as a person's host reads it."""
    return sorted(i.id for i in (await runner.status(run_id)).interrupts)


# ------------------------------------------------------------------------------ reading


async def test_the_runs_are_listed_as_they_were_stored(old_store: Store) -> None:
    runs = await old_store.list_runs(limit=50)
    assert sorted(r.id for r in runs) == sorted(RUN_IDS)
    assert {r.id: (r.kind, r.status) for r in runs} == {
        run_id: (
            "graph" if "graph" in run_id else "recipe",
            RunStatus.FAILED_RESUMABLE if run_id == RETRY else RunStatus.PAUSED_WAITING_HUMAN,
        )
        for run_id in RUN_IDS
    }
    waiting = await old_store.list_runs(RunStatus.PAUSED_WAITING_HUMAN, 50)
    assert sorted(r.id for r in waiting) == sorted(set(RUN_IDS) - {RETRY})


async def test_every_open_question_is_read_with_its_stored_id(old_store: Store) -> None:
    runner = runner_on(old_store)
    for run_id, ids in OPEN.items():
        assert await open_ids(runner, run_id) == ids, run_id
    pending = [r for r in await old_store.list_interactions(pending=True) if r.kind != "await"]
    assert sorted((r.run_id, r.id) for r in pending) == sorted(
        (run_id, i) for run_id, ids in OPEN.items() for i in ids
    )
    assert {r.id: r.interrupt.message for r in pending} == ASKED
    now = utc_now()
    assert all(r.expires_at > now for r in pending), (
        "the fixtures' questions have expired: they live ten years from December 2026, the "
        "longest pi-recipes allows (see tests/fixtures/stores/make_fixtures.py)"
    )
    for run_id, answers in ANSWERED.items():
        for interaction_id, payload in answers.items():
            record = await runner.interaction(run_id, interaction_id)
            assert record.answer is not None, (run_id, interaction_id)
            assert (record.answer.payload, record.answer.answered_by) == (payload, "ada")
    questions = pending_async(await old_store.list_interactions(ASYNC, pending=True))
    assert [(q.id, q.interrupt.message) for q in questions] == [(LICENCE, "Licence?")]


async def test_every_run_is_shown_with_its_history(old_store: Store) -> None:
    runner = runner_on(old_store)
    for run_id in RUN_IDS:
        result = await runner.status(run_id)
        view = runner.view(await old_store.get_run(run_id))
        assert view.text == result.text, run_id
        events = await agui_events(old_store, run_id)
        assert events[0].type == "RUN_STARTED", run_id
        last = event_json(events[-1])
        if run_id == RETRY:
            assert (last["type"], last["code"]) == ("RUN_ERROR", "unavailable")
        elif run_id != ASYNC:  # (an await pause's leg lists the questions it was posting)
            assert last["type"] == "RUN_FINISHED", run_id
            assert sorted(i["id"] for i in last["outcome"]["interrupts"]) == OPEN[run_id]
    question = await runner.status(QUESTION)
    assert question.text == "Let me ask."
    retry = await runner.status(RETRY)
    assert retry.error is not None and "HTTP 503" in retry.error
    graph = runner.view(await old_store.get_run(GRAPH_HUMAN))
    assert graph.text == "Lead: Answer: safety"
    path = "\n".join(graph.details)
    assert "draft#1" in path and "int-review.1.approved" in path, path


# ------------------------------------------------------------------------------ resuming


async def test_a_question_answered_resumes_its_run(old_store: Store) -> None:
    runner = runner_on(old_store)
    (interrupt,) = (await runner.status(QUESTION)).interrupts
    assert interrupt.id == "int-call_channel"
    assert [o.label for o in interrupt.options] == ["Stable", "Beta"]
    done = await runner.answer(QUESTION, interrupt.id, {"answer": "Stable"}, resume=True)
    assert done.resumed and done.run is not None
    assert done.run.status is RunStatus.FINISHED
    assert done.run.text == "Done: Answer: stable", "the option's value reached the model"


async def test_a_replayed_tool_gets_its_stored_answer_and_the_new_one(old_store: Store) -> None:
    runner = runner_on(old_store)
    (interrupt,) = (await runner.status(REPLAY)).interrupts
    assert (interrupt.id, interrupt.is_approval) == ("int-call_deploy.2", True)
    with pytest.raises(ConflictError):  # the stored first answer stands
        await runner.answer(REPLAY, "int-call_deploy", {"answer": "staging"})
    with pytest.raises(UnknownInteractionError):
        await runner.answer(REPLAY, "int-call_deploy.3", {"approved": True})
    done = await runner.answer(
        REPLAY, interrupt.id, {"approved": True, "feedback": "ship it"}, resume=True
    )
    assert done.run is not None and done.run.status is RunStatus.FINISHED
    assert done.run.text == "Done: Deployed api to production. Approved. Feedback: ship it"


async def test_a_batch_waiting_on_two_questions_resumes_with_both(old_store: Store) -> None:
    runner = runner_on(old_store)
    assert await open_ids(runner, BATCH) == ["int-call_colour", "int-call_toppings"]
    done = await runner.resume(
        BATCH,
        [
            ResumeEntry(interrupt_id="int-call_colour", status="resolved",
                        payload={"answer": "teal"}),
            ResumeEntry(interrupt_id="int-call_toppings", status="resolved",
                        payload={"answers": ["olives", "cheese"]}),
        ],
    )  # fmt: skip
    assert done.status is RunStatus.FINISHED
    assert done.text == 'Done: Answer: teal | Answers: ["cheese","olives"]'


async def test_a_graph_paused_in_its_agent_node_goes_on_to_its_human_node(
    old_store: Store,
) -> None:
    runner = runner_on(old_store)
    (interrupt,) = (await runner.status(GRAPH_AGENT)).interrupts
    assert interrupt.id == "int-draft.1.call_pick"
    went_on = await runner.answer(GRAPH_AGENT, interrupt.id, {"answer": "speed"}, resume=True)
    assert went_on.run is not None and went_on.run.status is RunStatus.PAUSED_WAITING_HUMAN
    (approval,) = [i for i in went_on.run.interrupts if i.is_approval]
    (channel,) = [i for i in went_on.run.interrupts if not i.is_approval]
    await runner.answer(GRAPH_AGENT, approval.id, {"approved": True, "feedback": "ship it"})
    done = await runner.answer(GRAPH_AGENT, channel.id, {"answer": "stable"}, resume=True)
    assert done.run is not None and done.run.status is RunStatus.FINISHED
    assert json.loads(done.run.text) == {
        "notes": "Lead: Answer: speed",
        "feedback": "ship it",
        "channel": "stable",
    }


async def test_a_graph_paused_at_its_human_node_outputs_the_answers(old_store: Store) -> None:
    runner = runner_on(old_store)
    assert await open_ids(runner, GRAPH_HUMAN) == ["int-review.1.approved", "int-review.1.channel"]
    first = await runner.answer(
        GRAPH_HUMAN, "int-review.1.approved", {"approved": True, "feedback": "after the docs"}
    )
    assert first.still_open == ["int-review.1.channel"]
    done = await runner.answer(GRAPH_HUMAN, "int-review.1.channel", {"answer": "beta"}, resume=True)
    assert done.run is not None and done.run.status is RunStatus.FINISHED
    assert json.loads(done.run.text) == {
        "notes": "Lead: Answer: safety",  # the agent's answer, given before the pause
        "feedback": "after the docs",
        "channel": "beta",
    }


async def test_the_last_async_answer_continues_a_run_waiting_on_them(old_store: Store) -> None:
    runner = runner_on(old_store)
    assert await open_ids(runner, ASYNC) == [LICENCE]
    done = await runner.answer(ASYNC, LICENCE, {"answer": "MIT"}, resume=True)
    assert done.resumed and done.run is not None
    assert done.run.status is RunStatus.FINISHED
    assert done.run.text.endswith(
        "All posted questions are answered:\n"
        f"- [{NAME}] Q: Project name? — A: Pipette\n"
        f"- [{LICENCE}] Q: Licence? — A: MIT"
    ), done.run.text


async def test_a_run_failed_on_an_outage_is_retried_to_its_end(old_store: Store) -> None:
    runner = runner_on(old_store)
    assert (await runner.status(RETRY)).status is RunStatus.FAILED_RESUMABLE
    done = await runner.retry(RETRY)
    assert done.status is RunStatus.FINISHED
    assert done.text == "Done: Answer: friendly", "the answer given before the outage"
    asked = [r.id for r in await old_store.list_interactions(RETRY)]
    assert asked == ["int-call_tone"], "nothing was asked again"
