"""The runtime, in-process on a real SQLite store: a scripted model drives the agent nodes."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from ag_ui.core import BaseEvent, CustomEvent

from interactions.store import RunStatus, Store, open_sqlite_store
from recipes.graph import GraphError, start_graph
from recipes.graph.runtime import GRAPH_EVENTS, GraphCheckpoint
from recipes.messages import AssistantMessage, UserMessage, text_of
from recipes.models import ModelRequest, ScriptedModel
from recipes.runs import Runner
from recipes.runs.agui import agui_events
from tests.recipes.graph.flows import PLAIN_FLOW, write_flow

pytestmark = pytest.mark.anyio


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    async with await open_sqlite_store(tmp_path / "state.db") as opened:
        yield opened


def drafter(*replies: str) -> ScriptedModel:
    """A model answering each call with the next reply (a JSON text, or anything else): each
    node execution is a fresh conversation, so the calls are counted here, not by turn."""
    calls: list[int] = []

    def turn(request: ModelRequest) -> AssistantMessage:
        calls.append(1)
        return AssistantMessage(text=replies[min(len(calls), len(replies)) - 1])

    return ScriptedModel([turn, turn])


def draft(text: str) -> str:
    return json.dumps({"draft": text})


async def checkpoint(store: Store, run_id: str) -> GraphCheckpoint:
    return GraphCheckpoint.model_validate((await store.get_run(run_id)).checkpoint)


async def test_three_nodes_end_to_end(tmp_path: Path, store: Store) -> None:
    flow = write_flow(tmp_path, PLAIN_FLOW)
    seen: list[ModelRequest] = []

    def write(request: ModelRequest) -> AssistantMessage:
        seen.append(request)
        return AssistantMessage(text=draft("faster resume"))

    live: list[BaseEvent] = []
    runner = Runner(store, env={}, model=ScriptedModel([write]), cwd=tmp_path)
    from recipes.runs import Surface

    paused = await start_graph(runner, flow, vars={"audience": "ops"},
                               surface=Surface(on_event=live.append))  # fmt: skip
    assert paused.status is RunStatus.PAUSED_WAITING_HUMAN and paused.kind == "graph"
    [approval] = paused.interrupts
    assert approval.id == "int-approve.1" and approval.is_approval
    assert approval.tool_call_id is None, "a human node's ask is raised in no tool call"
    interrupt = next(e for e in live if e.type == "RUN_FINISHED").outcome.interrupts[0]
    assert interrupt.tool_call_id is None  # no AG-UI toolCallId names a call that never was
    assert approval.display is not None and approval.display.title == "Approve the notes for ops?"
    assert [(s.title, s.body) for s in approval.display.sections] == [("draft", "faster resume")]
    assert approval.response_schema is not None and approval.expires_at
    # the agent was asked for JSON fitting the output schema, with the node's prompts
    assert "You draft release notes for ops." in seen[0].instructions
    assert '"required": ["draft"]' in seen[0].instructions
    assert "Feedback so far: {{outputs.approve.feedback}}" in text_of(seen[0].messages[0].content)

    done = await runner.answer(paused.run_id, "int-approve.1", {"approved": True}, resume=True)
    assert done.run is not None and done.run.status is RunStatus.FINISHED
    assert done.run.text == "FASTER RESUME"
    cp = await checkpoint(store, paused.run_id)
    assert [(r.node, r.status, r.input, r.output) for r in cp.executions] == [
        ("draft", "finished", {}, {"draft": "faster resume"}),
        ("approve", "finished", {"draft": "faster resume"},
         {"approved": True, "feedback": ""}),
        ("publish", "finished", {"approved": True, "feedback": ""}, {"notes": "FASTER RESUME"}),
    ]  # fmt: skip
    types = [e.type for e in await store.list_events(paused.run_id)]
    graph_events = [t for t in types if t in GRAPH_EVENTS]
    assert graph_events == [
        "node_started", "node_finished", "node_started", "human_input_requested", "run_paused",
        "run_resumed", "node_finished", "node_started", "node_finished", "run_finished",
    ]  # fmt: skip
    assert types.count("leg_ended") == 2 and types[-2:] == ["leg_ended", "run_status_changed"]
    stored = await agui_events(store, paused.run_id)  # what a host that did not drive it shows
    assert [e.type for e in stored].count("RUN_STARTED") == 2
    assert stored[-1].type == "RUN_FINISHED" and stored[-1].result == "FASTER RESUME"
    assert [e.name for e in stored if isinstance(e, CustomEvent)][:5] == [
        "node_started", "node_finished", "node_started", "human_input_requested", "run_paused",
    ]  # fmt: skip
    texts = [e.delta for e in stored if e.type == "TEXT_MESSAGE_CONTENT"]
    assert texts == [draft("faster resume")]  # the draft node's reply, one event
    names = [e.name for e in live if isinstance(e, CustomEvent)]
    assert names == ["node_started", "node_finished", "node_started", "human_input_requested",
                     "run_paused"]  # fmt: skip
    assert live[0].type == "RUN_STARTED" and live[-1].type == "RUN_FINISHED"


async def test_not_approved_loops_back_with_feedback_until_the_exhaustion_exit(
    tmp_path: Path, store: Store
) -> None:
    flow = write_flow(tmp_path, PLAIN_FLOW)
    prompts: list[str] = []

    def write(request: ModelRequest) -> AssistantMessage:
        prompts.append(text_of(request.messages[0].content))
        return AssistantMessage(text=draft(f"take {len(prompts)}"))

    runner = Runner(store, env={}, model=ScriptedModel([write]), cwd=tmp_path)
    result = await start_graph(runner, flow)
    for visit, feedback in ((1, "shorter"), (2, "even shorter"), (3, "no")):
        [interrupt] = result.interrupts
        assert interrupt.id == f"int-approve.{visit}"
        answered = await runner.answer(
            result.run_id, interrupt.id, {"approved": False, "feedback": feedback}, resume=True
        )
        assert answered.run is not None
        result = answered.run
    assert result.status is RunStatus.FAILED  # retry(2) spent: the bare edge to `fail`
    assert result.error == "approve routed to `fail`"
    assert "Feedback so far: shorter\n\nInput:\n" in prompts[1]  # the node's input follows
    assert '"feedback": "even shorter"' in prompts[2]
    cp = await checkpoint(store, result.run_id)
    assert [f"{r.node}#{r.visit}" for r in cp.executions] == [
        "draft#1", "approve#1", "draft#2", "approve#2", "draft#3", "approve#3",
    ]  # fmt: skip
    assert cp.trunk.loops == {"retry": 2}


async def test_approved_on_the_second_pass_finishes(tmp_path: Path, store: Store) -> None:
    flow = write_flow(tmp_path, PLAIN_FLOW)
    runner = Runner(store, env={}, model=drafter(draft("one"), draft("two")), cwd=tmp_path)
    first = await start_graph(runner, flow)
    second = await runner.answer(first.run_id, "int-approve.1", {"approved": False}, resume=True)
    assert second.run is not None and [i.id for i in second.run.interrupts] == ["int-approve.2"]
    done = await runner.answer(first.run_id, "int-approve.2", {"approved": True}, resume=True)
    assert done.run is not None and done.run.text == "TWO"


async def test_a_misfit_reply_gets_one_corrective_turn(tmp_path: Path, store: Store) -> None:
    flow = write_flow(tmp_path, PLAIN_FLOW)
    model = drafter("Sure! Here are the notes.", "```json\n" + draft("fixed") + "\n```")
    runner = Runner(store, env={}, model=model, cwd=tmp_path)
    result = await start_graph(runner, flow)
    assert result.status is RunStatus.PAUSED_WAITING_HUMAN
    corrective = model.requests[1].messages[-1]
    assert isinstance(corrective, UserMessage)
    assert "does not fit the required output schema" in text_of(corrective.content)
    cp = await checkpoint(store, result.run_id)
    assert cp.executions[0].output == {"draft": "fixed"}


async def test_a_second_misfit_fails_the_node_with_the_validation_errors(
    tmp_path: Path, store: Store
) -> None:
    flow = write_flow(tmp_path, PLAIN_FLOW)
    model = drafter(json.dumps({"text": "x"}), json.dumps({"draft": 3}))
    runner = Runner(store, env={}, model=model, cwd=tmp_path)
    result = await start_graph(runner, flow)
    assert result.status is RunStatus.FAILED
    assert result.error is not None and "draft: 3 is not of type string" in result.error
    cp = await checkpoint(store, result.run_id)
    assert cp.executions[0].code == "SCHEMA_MISMATCH" and not cp.executions[0].resumable


async def test_launch_values_are_checked_before_anything_is_written(
    tmp_path: Path, store: Store
) -> None:
    flow = write_flow(tmp_path, PLAIN_FLOW)
    runner = Runner(store, env={}, model=drafter(draft("x")), cwd=tmp_path)
    with pytest.raises(GraphError, match=r"\[C126\]: var `audience`: 'qa' is not one of"):
        await start_graph(runner, flow, vars={"audience": "qa"})
    with pytest.raises(GraphError, match=r"\[C033\]: --var nope"):
        await start_graph(runner, flow, vars={"nope": "1"})
    assert await store.list_runs() == []


async def test_a_node_with_no_way_on_is_refused_before_anyone_is_asked(
    tmp_path: Path, store: Store
) -> None:
    """Before the check, the run drafted, paused for the approval, and failed with
    NO_OUTGOING_EDGE only once the person had approved."""
    flow = write_flow(tmp_path, PLAIN_FLOW.replace("  publish -> done\n", ""))
    runner = Runner(store, env={}, model=drafter(draft("x")), cwd=tmp_path)
    with pytest.raises(GraphError, match=r"\[P012\]: node `publish` has no outgoing edge"):
        await start_graph(runner, flow)
    assert await store.list_runs() == []


async def test_an_expired_approval_is_a_decline_and_the_run_goes_on(
    tmp_path: Path, store: Store
) -> None:
    from datetime import timedelta

    from interactions.store import utc_now

    flow = write_flow(tmp_path, PLAIN_FLOW)
    runner = Runner(store, env={}, model=drafter(draft("a"), draft("b")), cwd=tmp_path)
    first = await start_graph(runner, flow)
    [settled] = await runner.expire_due(now=utc_now() + timedelta(days=8))
    assert settled.run_id == first.run_id
    assert [i.id for i in settled.interrupts] == ["int-approve.2"]  # declined: drafted again
    cp = await checkpoint(store, first.run_id)
    assert cp.executions[1].output == {"approved": False, "feedback": "",
                                       "_declined": ["approved"]}  # fmt: skip


async def test_a_cancelled_graph_run_closes_its_questions(tmp_path: Path, store: Store) -> None:
    flow = write_flow(tmp_path, PLAIN_FLOW)
    runner = Runner(store, env={}, model=drafter(draft("a")), cwd=tmp_path)
    first = await start_graph(runner, flow)
    cancelled = await runner.cancel(first.run_id)
    assert cancelled.status is RunStatus.CANCELLED
    [record] = await store.list_interactions(first.run_id)
    assert record.answer is not None and record.answer.status == "cancelled"


async def test_a_graph_built_in_python_runs_like_its_file(tmp_path: Path, store: Store) -> None:
    from recipes.graph.builder import GraphBuilder

    g = GraphBuilder()
    g.schema("draft_out", draft="string")
    g.agent("draft", output="draft_out", system="Draft it.")
    g.compute("shout", expr={"loud": "upper(outputs.draft.draft)"})
    g.workflow("w", entry="draft").edge("draft", "shout").edge("shout", "done")
    runner = Runner(store, env={}, model=drafter(draft("built")), cwd=tmp_path)
    done = await start_graph(runner, g.build())
    assert done.status is RunStatus.FINISHED and done.text == "BUILT"
    assert (await store.get_run(done.run_id)).ref == "<built>"


async def test_a_model_that_raises_ends_the_run_failed_and_the_error_reaches_the_caller(
    tmp_path: Path, store: Store
) -> None:
    flow = write_flow(tmp_path, PLAIN_FLOW)

    def broken(request: ModelRequest) -> AssistantMessage:
        raise RuntimeError("the custom model has a bug")

    runner = Runner(store, env={}, model=ScriptedModel([broken]), cwd=tmp_path)
    with pytest.raises(RuntimeError, match="the custom model has a bug"):
        await start_graph(runner, flow)
    [run] = await store.list_runs()
    assert run.status is RunStatus.FAILED  # not left `running` with no one driving it
    assert run.error is not None and "RuntimeError: the custom model has a bug" in run.error
    cp = await checkpoint(store, run.id)
    assert [(e.node, e.status, e.code) for e in cp.executions] == [
        ("draft", "failed", "RuntimeError")
    ]
    events = [e.type for e in await store.list_events(run.id)]
    assert "node_failed" in events and "run_failed" in events


COUNTED_RECIPE = '''\
"""A recipe whose file notes each time it is executed."""

from pathlib import Path

from recipes import RecipeAPI

with Path(__file__).with_name("loads.log").open("a", encoding="utf-8") as log:
    log.write("loaded\\n")


def recipe(api: RecipeAPI) -> None:
    api.register_agent("writer", "You draft release notes.")
'''

COUNTED_FLOW = """\
schema draft_out:
  draft: string

agent draft:
  recipe: ./counted.py
  user: "Draft v2."
  output: draft_out

workflow notes:
  entry: draft
  draft -> done
"""


async def test_a_runner_loads_a_graphs_recipe_once_for_its_checks_and_its_runs(
    tmp_path: Path, store: Store
) -> None:
    """Starting a graph checks its recipes as the runner loads them: the recipe a run uses is
    the one that was checked, and a recipe file's code runs once per runner, not again for
    each start's checks."""
    (tmp_path / "counted.py").write_text(COUNTED_RECIPE, encoding="utf-8")
    flow = write_flow(tmp_path, COUNTED_FLOW)
    runner = Runner(store, env={}, model=drafter(draft("a"), draft("b")), cwd=tmp_path)
    for _ in range(2):
        done = await start_graph(runner, flow)
        assert done.status is RunStatus.FINISHED
    assert (tmp_path / "loads.log").read_text(encoding="utf-8").splitlines() == ["loaded"]
