"""Iterion's async-questions demo, end to end with the scripted model: ``draft`` posts two
questions and keeps drafting, ``gate`` waits, the answers come from other processes
(``pi-recipes runs questions`` / ``runs answer``), ``finalize`` reads
``{{outputs.gate.answers}}``."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import anyio
import pytest

from interactions.store import EventRecord, RunStatus, Store, open_sqlite_store
from recipes.graph import parse, start_graph, validate
from recipes.graph.runtime import GraphCheckpoint
from recipes.runs import Runner, RunResult
from tests.hosts.cli_helpers import PI_RECIPES, cli_env
from tests.recipes.graph.async_flows import README_DEMO, write_demo

pytestmark = pytest.mark.anyio
BOUND = 30.0


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    async with await open_sqlite_store(tmp_path / "state.db") as opened:
        yield opened


async def until(
    store: Store, run_id: str, seen: Callable[[list[EventRecord]], bool], timeout: float = BOUND
) -> list[EventRecord]:
    """The run's events once ``seen`` holds for them (the store's feed, bounded)."""
    events: list[EventRecord] = []
    with anyio.fail_after(timeout):
        async with store.watch() as feed:
            async for event in feed:
                if event.run_id == run_id:
                    events.append(event)
                    if seen(events):
                        return events
    raise AssertionError("the feed ended")


def started(node: str) -> Callable[[list[EventRecord]], bool]:
    return lambda events: any(
        e.type == "node_started" and e.data.get("node_id") == node for e in events
    )


async def pi(cwd: Path, *args: str) -> tuple[int, str]:
    done = await anyio.run_process(
        [PI_RECIPES, *args, "--store", str(cwd / "state.db")], cwd=cwd, env=cli_env(),
        check=False,
    )  # fmt: skip
    return done.returncode, done.stdout.decode() + done.stderr.decode()


def test_the_demo_validates_with_no_diagnostic() -> None:
    graph, found = parse(README_DEMO, "demo.iter")
    assert found == []
    assert validate(graph) == []


async def test_the_demo_end_to_end_answers_from_other_processes(
    tmp_path: Path, store: Store
) -> None:
    flow = write_demo(tmp_path)
    runner = Runner(store, env={}, cwd=tmp_path, host="test")
    result: list[RunResult] = []

    async def run() -> None:
        result.append(await start_graph(runner, flow, run_id="run-demo"))

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(run)
        await until(store, "run-demo", started("gate"))
        code, out = await pi(tmp_path, "runs", "questions", "run-demo", "--json")
        assert code == 0, out
        asked = json.loads(out)["interactions"]
        assert [(q["id"], q["node_id"], q["kind"]) for q in asked] == [
            ("run-demo_draft_async_1", "draft", "async"),
            ("run-demo_draft_async_2", "draft", "async"),
        ]
        code, out = await pi(tmp_path, "runs", "questions", "run-demo")
        assert "run-demo_draft_async_1 (node draft, asked " in out
        assert "Q: What is the project called?" in out and "options: friendly, formal" in out
        code, out = await pi(tmp_path, "runs", "answer", "run-demo", "run-demo_draft_async_1",
                             "Pipette", "--json")  # fmt: skip
        assert code == 0, out
        assert json.loads(out) == {"run_id": "run-demo", "interaction_id":
                                   "run-demo_draft_async_1", "queued": True, "resumed": False}
        assert not result, "the gate still waits for the second answer"
        code, out = await pi(tmp_path, "runs", "answer", "run-demo", "run-demo_draft_async_2",
                             "friendly")  # fmt: skip
        assert code == 0, out
        assert out.splitlines() == [  # the gate takes it: draft's agent ended, never reads it
            "Answered run-demo_draft_async_2 of run-demo.",
            "Queued: the asking agent reads it at its next step, unless an await_answers that "
            "waits for it takes it first.",
        ]
    [done] = result
    assert done.status is RunStatus.FINISHED, done.error
    assert done.text == "# Pipette\n\nA friendly README."
    cp = GraphCheckpoint.model_validate((await store.get_run("run-demo")).checkpoint)
    assert cp.outputs["gate"] == {"answers": [
        {"interaction_id": "run-demo_draft_async_1", "node": "draft",
         "question": "What is the project called?", "answer": "Pipette"},
        {"interaction_id": "run-demo_draft_async_2", "node": "draft",
         "question": "Which tone?", "answer": "friendly"},
    ]}  # fmt: skip
    assert cp.outputs["draft"] == {"draft": "# <NAME>\n\nA <TONE> README."}
    events = await store.list_events("run-demo")
    posted = [e.data for e in events if e.type == "human_input_requested"]
    assert [p["async"] for p in posted] == [True, True]
    answered = [e.data["interaction_id"] for e in events if e.type == "interaction_answered"]
    assert answered == ["run-demo_draft_async_1", "run-demo_draft_async_2"]
    assert [e.data["via"] for e in events if e.type == "interaction_answered"] == ["cli", "cli"]
