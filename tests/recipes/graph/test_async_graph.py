"""Async questions in graph runs, in-process on a real SQLite store: the await tool in a node
(paused, continued by the last answer), refused inside a fan-out branch; the await_answers node
timing out with the list (and done once answered, on retry), freeing its fan-out slot; answers
delivered at the asking node's turn boundaries; the backend capability check at run time; the
system prompt and tools the model receives (a fake of its HTTP API)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from interactions import ConflictError
from interactions.async_questions import ALL_ANSWERED_HEADER, MESSAGE_DELIVERED
from interactions.store import EventRecord, RunStatus, Store, open_sqlite_store, utc_now
from recipes.graph import GraphError, compile_graph, start_graph
from recipes.graph.backends import register_backend, unregister_backend
from recipes.graph.runtime import GraphCheckpoint
from recipes.runs import Runner, RunResult
from recipes.runs.drivers import BRANCH_AWAIT_ERROR
from tests.hosts.fake_providers import fake_providers, says
from tests.recipes.graph.async_flows import DRAFT, flow_of, write_demo

pytestmark = pytest.mark.anyio
BOUND = 20.0


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    async with await open_sqlite_store(tmp_path / "state.db") as opened:
        yield opened


async def until(
    store: Store, run_id: str, seen: Callable[[list[EventRecord]], bool]
) -> list[EventRecord]:
    events: list[EventRecord] = []
    with anyio.fail_after(BOUND):
        async with store.watch() as feed:
            async for event in feed:
                if event.run_id == run_id:
                    events.append(event)
                    if seen(events):
                        return events
    raise AssertionError("the feed ended")


def finished(node: str) -> Callable[[list[EventRecord]], bool]:
    return lambda events: any(
        e.type == "node_finished" and e.data.get("node_id") == node for e in events
    )


async def outputs(store: Store, run_id: str) -> dict[str, Any]:
    return GraphCheckpoint.model_validate((await store.get_run(run_id)).checkpoint).outputs


async def test_the_await_tool_in_a_node_pauses_the_run_and_the_last_answer_continues_it(
    tmp_path: Path, store: Store
) -> None:
    nodes = "agent author:\n  recipe: ./readme.py\n  agent: author\n  interaction: async\n" \
            "  output: draft_out\n"  # fmt: skip
    flow = write_demo(tmp_path, flow_of(nodes, "  author -> done\n"))
    runner = Runner(store, env={}, cwd=tmp_path, host="test")
    paused = await start_graph(runner, flow, run_id="run-t")
    name = "run-t_author_async_1"
    assert paused.status is RunStatus.PAUSED_WAITING_HUMAN
    assert [i.id for i in paused.interrupts] == [name]
    [wait] = [r for r in await store.list_interactions("run-t") if r.kind == "await"]
    assert wait.node_id == "author" and wait.id.startswith("int-author.1.")
    events = await store.list_events("run-t")
    asked = [e.data for e in events if e.type == "human_input_requested"]
    assert asked[-1]["await"] is True and asked[-1]["questions"]["pending"] == [
        {"interaction_id": name, "question": "What is the project called?"}
    ]
    done = await runner.answer("run-t", name, {"answer": "Pipette"}, resume=True)
    assert done.resumed and done.run is not None and done.run.status is RunStatus.FINISHED
    draft = (await outputs(store, "run-t"))["author"]["draft"]
    assert draft.endswith(
        f"{ALL_ANSWERED_HEADER}\n- [{name}] Q: What is the project called? — A: Pipette"
    )


async def test_the_await_tool_inside_a_fan_out_branch_is_refused(
    tmp_path: Path, store: Store
) -> None:
    nodes = (
        "router split:\n  mode: fan_out_all\n\n"
        "agent a:\n  recipe: ./readme.py\n  agent: brancher\n  interaction: async\n"
        "  output: draft_out\n\n"
        'compute b:\n  output: draft_out\n  expr:\n    draft: "\'b\'"\n\n'
        'compute join:\n  output: draft_out\n  expr:\n    draft: "\'joined\'"\n'
    )
    edges = "  split -> a\n  split -> b\n  a -> join\n  b -> join\n  join -> done\n"
    flow = write_demo(tmp_path, flow_of(nodes, edges))
    runner = Runner(store, env={}, cwd=tmp_path, host="test")
    done = await start_graph(runner, flow, run_id="run-b")
    assert done.status is RunStatus.FINISHED, done.error
    assert (await outputs(store, "run-b"))["a"]["draft"] == BRANCH_AWAIT_ERROR


async def test_the_await_node_times_out_with_the_list_then_retry_honours_the_answers(
    tmp_path: Path, store: Store
) -> None:
    nodes = DRAFT + '\nawait_answers gate:\n  from: draft\n  timeout: "300ms"\n'
    flow = write_demo(tmp_path, flow_of(nodes, "  draft -> gate\n  gate -> done\n"))
    runner = Runner(store, env={}, cwd=tmp_path, host="test")
    failed = await start_graph(runner, flow, run_id="run-o")
    assert failed.status is RunStatus.FAILED_RESUMABLE
    assert failed.error is not None
    assert "2 question(s) of `draft` still unanswered after 300ms" in failed.error
    assert "[run-o_draft_async_1] (node draft) What is the project called?" in failed.error
    assert "[run-o_draft_async_2] (node draft) Which tone?" in failed.error
    assert "raise the timeout, or resume the run once answered" in failed.error
    for iid, text in (("run-o_draft_async_1", "Pipette"), ("run-o_draft_async_2", "formal")):
        await runner.answer("run-o", iid, {"answer": text})  # while no process runs it
    done = await runner.retry("run-o")
    assert done.status is RunStatus.FINISHED, done.error
    answers = (await outputs(store, "run-o"))["gate"]["answers"]
    assert [a["answer"] for a in answers] == ["Pipette", "formal"]
    cp = GraphCheckpoint.model_validate((await store.get_run("run-o")).checkpoint)
    assert [(r.node, r.status) for r in cp.executions] == [
        ("draft", "finished"), ("gate", "finished")
    ], "the draft is not asked again; the gate's execution is retried"  # fmt: skip


async def test_an_await_node_in_a_branch_frees_its_slot_while_it_waits(
    tmp_path: Path, store: Store
) -> None:
    nodes = DRAFT + (
        "\nrouter split:\n  mode: fan_out_all\n\n"
        'await_answers gate:\n  timeout: "30s"\n\n'
        'compute b:\n  output: draft_out\n  expr:\n    draft: "\'b\'"\n\n'
        'compute join:\n  output: draft_out\n  expr:\n    draft: "\'joined\'"\n'
    )
    edges = ("  draft -> split\n  split -> gate\n  split -> b\n  gate -> join\n  b -> join\n"
             "  join -> done\n")  # fmt: skip
    budget = "  budget:\n    max_parallel_branches: 1\n"
    flow = write_demo(tmp_path, flow_of(nodes, edges, budget))
    runner = Runner(store, env={}, cwd=tmp_path, host="test")
    result: list[RunResult] = []

    async def run() -> None:
        result.append(await start_graph(runner, flow, run_id="run-s"))

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(run)
        events = await until(store, "run-s", finished("b"))  # one slot, and the gate holds none
        order = [(e.type, e.data.get("node_id")) for e in events]
        assert order.index(("node_started", "gate")) < order.index(("node_finished", "b"))
        for iid, text in (("run-s_draft_async_1", "Pipette"), ("run-s_draft_async_2", "formal")):
            await runner.answer("run-s", iid, {"answer": text})  # the doorbell: at once
    assert result[0].status is RunStatus.FINISHED, result[0].error


async def test_an_answer_reaches_the_asking_node_at_its_next_turn_boundary(
    tmp_path: Path, store: Store
) -> None:
    recipe = '''\
import json
from interactions.store import open_sqlite_store
from recipes import RecipeAPI
from recipes.messages import AssistantMessage, ToolCall, ToolResultMessage, UserMessage, text_of
from recipes.models import ScriptedModel
from recipes.runs import Runner

def recipe(api: RecipeAPI) -> None:
    @api.tool
    async def work(tool_call_id, params, ctx, on_update):
        """Work; meanwhile the operator answers (from its own connection to the store)."""
        async with await open_sqlite_store(ctx.cwd / "state.db") as store:
            done = await Runner(store, host="operator").answer(
                ctx.run_id, f"{ctx.run_id}_w_async_1", {"answer": "teal"})
        return f"worked; queued={done.queued}"

    def done(request):
        told = [text_of(m.content) for m in request.messages[1:]
                if isinstance(m, ToolResultMessage | UserMessage)]
        told.append(str("[ASYNC QUESTIONS]" in request.instructions))
        return AssistantMessage(text=json.dumps({"draft": " | ".join(t for t in told if t)}))

    api.register_agent("worker", "Work.", model=ScriptedModel([
        AssistantMessage(tool_calls=[ToolCall(id="q", name="ask_user_async",
                                              arguments={"question": "Colour?"})]),
        AssistantMessage(tool_calls=[ToolCall(id="w", name="work", arguments={})]),
        done]))
'''
    (tmp_path / "worker.py").write_text(recipe, encoding="utf-8")
    nodes = "agent w:\n  recipe: ./worker.py\n  interaction: async\n  output: draft_out\n"
    flow = write_demo(tmp_path, flow_of(nodes, "  w -> done\n"))
    runner = Runner(store, env={}, cwd=tmp_path, host="test")
    result = await start_graph(runner, flow, run_id="run-w")
    assert result.status is RunStatus.FINISHED, result.error
    told = (await outputs(store, "run-w"))["w"]["draft"].split(" | ")
    assert told[-3:] == [
        "worked; queued=True",
        '[Answer to question run-w_w_async_1] Q: "Colour?" — A: teal',
        "True",  # the node's instructions carry the [ASYNC QUESTIONS] section
    ], "delivered after the tool batch, before the next model call"
    events = await store.list_events("run-w")
    assert [e.data["interaction_id"] for e in events if e.type == MESSAGE_DELIVERED] == [
        "run-w_w_async_1"
    ]


class _Plain:
    """A backend of a program's own that never says it carries async questions."""

    def __init__(self) -> None:
        self.calls = 0

    async def run(self, ctx: Any, node: Any, run: Any, mode: Any, route: Any = None) -> Any:
        from recipes.graph.runtime._context import finished as done

        self.calls += 1
        return done({"draft": "plain"})


async def test_a_backend_known_only_at_run_time_is_checked_before_the_call(
    tmp_path: Path, store: Store
) -> None:
    plain = _Plain()
    register_backend("plain", plain)
    try:
        flow = (
            'vars:\n  engine: string = "recipe"\n\nschema draft_out:\n  draft: string\n\n'
            "agent draft:\n  recipe: ./readme.py\n  agent: drafter\n  interaction: async\n"
            '  backend: "{{vars.engine}}"\n  output: draft_out\n\n'
            "workflow w:\n  entry: draft\n  draft -> done\n"
        )
        with pytest.raises(GraphError) as static:  # named in the file: refused when compiled
            compile_graph(flow.replace('"{{vars.engine}}"', "plain"), recipes=False)
        assert "C267" in str(static.value)
        assert "`plain` cannot carry async questions" in str(static.value)
        runner = Runner(store, env={}, cwd=tmp_path, host="test")
        path = write_demo(tmp_path, flow)
        failed = await start_graph(runner, path, vars={"engine": "plain"}, run_id="run-c")
        assert failed.status is RunStatus.FAILED, "not retried: the backend must change"
        cp = GraphCheckpoint.model_validate((await store.get_run("run-c")).checkpoint)
        assert cp.executions[0].code == "CAPABILITY_UNSUPPORTED"
        assert plain.calls == 0, "refused before the call"
        plain_node = flow.replace("  interaction: async\n", "")
        done = await start_graph(runner, write_demo(tmp_path / "p", plain_node),
                                 vars={"engine": "plain"}, run_id="run-p")  # fmt: skip
        assert done.status is RunStatus.FINISHED and plain.calls == 1
    finally:
        unregister_backend("plain")


async def test_an_await_node_no_asking_node_runs_before_is_refused_before_anything_is_written(
    tmp_path: Path, store: Store
) -> None:
    """Before the check, such a gate passed at once with ``answers: []`` and the run went on,
    its questions, asked later, left pending."""
    gate = 'await_answers gate:\n  from: draft\n  timeout: "30s"\n\n'
    edges = "  gate -> draft\n  draft -> done\n"
    late = write_demo(tmp_path / "late", flow_of(gate + DRAFT, edges))
    runner = Runner(store, env={}, cwd=tmp_path, host="test")
    with pytest.raises(GraphError) as refused:
        await start_graph(runner, late, run_id="run-late")
    message = str(refused.value)
    assert "[P011]: await_answers `gate` waits on `draft`, which never runs before it" in message
    assert await store.list_runs() == [], "refused before anything is written"
    whole = gate.replace("  from: draft\n", "")
    nodes = whole + 'compute c:\n  output: draft_out\n  expr:\n    draft: "\'c\'"\n'
    with pytest.raises(GraphError) as none:  # a whole-run gate with no async node at all
        compile_graph(flow_of(nodes, "  gate -> c\n  c -> done\n"), recipes=False)
    assert "the workflow has no `interaction: async` node" in str(none.value)
    looped = flow_of(gate + DRAFT, "  gate -> draft\n  draft -> gate as again(1)\n"
                     "  draft -> done\n")  # fmt: skip
    compile_graph(looped, recipes=False)  # draft runs before the gate's second crossing


async def test_questions_no_one_answered_close_with_the_run_and_a_late_answer_is_refused(
    tmp_path: Path, store: Store
) -> None:
    """No gate waits for ``draft``'s questions: the run finishes without them. Before, they
    stayed pending and a later answer was stored and reported as given, to no one."""
    flow = write_demo(tmp_path, flow_of(DRAFT, "  draft -> done\n"))
    runner = Runner(store, env={}, cwd=tmp_path, host="test")
    done = await start_graph(runner, flow, run_id="run-n")
    assert done.status is RunStatus.FINISHED
    assert await store.list_interactions("run-n", pending=True) == []
    [asked, *_] = await store.list_interactions("run-n")
    assert asked.answer is not None and asked.answer.answered_by == "system"
    with pytest.raises(ConflictError) as late:
        await runner.answer("run-n", asked.id, {"answer": "Pipette"})
    assert late.value.reason == "run_ended" and "nothing was stored" in str(late.value)


async def test_a_question_that_expires_while_the_gate_waits_is_settled_and_the_gate_goes_on(
    tmp_path: Path, store: Store
) -> None:
    """Every interrupt expires: a question past its ``expires_at`` can no longer be answered
    (the store refuses), so the gate must not wait for it. Before, the waiting run stayed
    ``running`` (the sweep settles only paused runs): the gate waited out its timeout, told
    the operator to answer questions the store refused, and every retry did the same — the
    run could never finish."""
    nodes = DRAFT + '\nawait_answers gate:\n  from: draft\n  timeout: "300ms"\n'
    flow = write_demo(tmp_path, flow_of(nodes, "  draft -> gate\n  gate -> done\n"))
    runner = Runner(store, env={"PI_INTERRUPT_TTL_SECONDS": "2"}, cwd=tmp_path, host="test")
    failed = await start_graph(runner, flow, run_id="run-e")
    assert failed.status is RunStatus.FAILED_RESUMABLE, "the gate's timeout came first"
    [first, second] = await store.list_interactions("run-e")
    await runner.answer("run-e", first.id, {"answer": "Pipette"})
    await anyio.sleep((second.expires_at - utc_now()).total_seconds() + 0.05)  # its lifetime
    done = await runner.retry("run-e")
    assert done.status is RunStatus.FINISHED, done.error
    answers = (await outputs(store, "run-e"))["gate"]["answers"]
    assert [a["answer"] for a in answers] == ["Pipette", "(no answer: the question expired)"]
    settled = await store.get_interaction("run-e", second.id)
    assert settled.answer is not None and settled.answer.status == "expired"
    assert settled.answered_at == second.expires_at, "recorded as of its expiry, as the sweep does"

    longer = write_demo(tmp_path / "l", flow_of(
        DRAFT + '\nawait_answers gate:\n  from: draft\n  timeout: "30s"\n',
        "  draft -> gate\n  gate -> done\n"))  # fmt: skip
    with anyio.fail_after(10):  # settled at the expiry, not at the gate's timeout
        done = await start_graph(runner, longer, run_id="run-l")
    assert done.status is RunStatus.FINISHED, done.error
    assert {a["answer"] for a in (await outputs(store, "run-l"))["gate"]["answers"]} == {
        "(no answer: the question expired)"
    }
    with anyio.fail_after(10):  # the run's expiry policy `fail`: the expiry fails it
        strict = await start_graph(runner, longer, run_id="run-f", expiry_policy="fail")
    assert strict.status is RunStatus.FAILED and strict.error is not None
    assert "2 question(s) expired unanswered (the run's expiry policy is `fail`)" in strict.error


@pytest.mark.parametrize(
    ("source", "extra"),
    [
        ("nowhere", ""),
        ("plain", "compute plain:\n  output: draft_out\n  expr:\n    draft: \"'p'\"\n\n"),
    ],
)
async def test_a_gate_waiting_on_a_node_that_asks_nothing_fails_at_its_timeout_citing_c242(
    tmp_path: Path, store: Store, source: str, extra: str
) -> None:
    """``from:`` names a missing node, or one that is not ``interaction: async``: no question
    can ever be in the gate's scope (C242, a warning). Before, the gate passed at once with
    ``answers: []`` as if answered, and the run finished while ``draft``'s questions waited."""
    nodes = DRAFT + f'\n{extra}await_answers gate:\n  from: {source}\n  timeout: "300ms"\n'
    edges = "  draft -> gate\n  gate -> done\n"
    if extra:
        edges = "  draft -> plain\n  plain -> gate\n  gate -> done\n"
    flow = write_demo(tmp_path, flow_of(nodes, edges))
    runner = Runner(store, env={}, cwd=tmp_path, host="test")
    started = anyio.current_time()
    ended = await start_graph(runner, flow, run_id="run-c")
    assert anyio.current_time() - started >= 0.3, "it waits out its timeout first"
    assert ended.status is RunStatus.FAILED, ended.error
    assert ended.error is not None
    assert f"await_answers gate: `from: {source}`" in ended.error
    assert "(C242)" in ended.error and "drop `from:`" in ended.error
    cp = GraphCheckpoint.model_validate((await store.get_run("run-c")).checkpoint)
    assert "gate" not in cp.outputs, "never passed as if answered"


ASK_THEN_STALL = """\
import json
from pathlib import Path

import anyio

from recipes.messages import AssistantMessage, ToolCall, ToolResultMessage, UserMessage, text_of
from recipes.models import ScriptedModel

STALLED = Path(__file__).with_name("stalled")


def ask(request):
    return AssistantMessage(tool_calls=[ToolCall(
        id="ask_1", name="ask_user_async", arguments={"question": "What is it called?"})])


async def stall_once(request):
    if not STALLED.exists():
        STALLED.write_text("once")
        await anyio.sleep(60)
    said = [text_of(m.content) for m in request.messages
            if isinstance(m, ToolResultMessage | UserMessage)]
    return AssistantMessage(text=json.dumps({"draft": " | ".join(said[1:])}))


def recipe(api):
    api.register_agent("drafter", "You draft.", model=ScriptedModel([ask, stall_once]))
"""


async def test_a_node_run_again_reuses_the_question_ids_it_asked(
    tmp_path: Path, store: Store
) -> None:
    """``draft`` posts its question, then runs past its timeout; the retry runs it again from
    its prompt and it posts the same question. Before, that was a second question under a new
    id (``…_async_2``): the operator was asked twice and the first one stayed pending. Its
    answer, handed to the conversation the timeout ended, is handed to the new one too."""
    (tmp_path / "readme.py").write_text(ASK_THEN_STALL, encoding="utf-8")
    flow = tmp_path / "flow.iter"
    flow.write_text(flow_of(DRAFT + '  timeout: "1s"\n', "  draft -> done\n"), encoding="utf-8")
    runner = Runner(store, env={"PI_ASK_USER_AUTO_APPROVE": "1"}, cwd=tmp_path, host="test")
    failed = await start_graph(runner, flow, run_id="run-r")
    assert failed.status is RunStatus.FAILED_RESUMABLE, failed.error
    assert failed.error is not None and "time bound" in failed.error
    done = await runner.retry("run-r")
    assert done.status is RunStatus.FINISHED, done.error
    assert [r.id for r in await store.list_interactions("run-r")] == ["run-r_draft_async_1"]
    said = (await outputs(store, "run-r"))["draft"]["draft"]
    assert said.startswith("Question posted as run-r_draft_async_1;"), said
    delivered = '[Answer to question run-r_draft_async_1] Q: "What is it called?" — A: '
    assert delivered in said, "its answer reaches the new conversation too"
    cp = GraphCheckpoint.model_validate((await store.get_run("run-r")).checkpoint)
    assert [a.id for a in cp.executions[0].asked_async] == ["run-r_draft_async_1"]


PROMPTED = """\
schema out:
  text: string

agent asker:
  model: "openai:gpt-4.1"
  interaction: async
  system: "Draft the notes."
  output: out

agent blocker:
  model: "openai:gpt-4.1"
  interaction: human
  system: "Check the notes."
  output: out

workflow w:
  entry: asker
  asker -> blocker -> done
"""


async def test_the_async_section_names_only_tools_the_agent_is_given(
    tmp_path: Path, store: Store
) -> None:
    """What the model receives (a real HTTP request to a fake of its API): the async node's
    system prompt carries the [ASYNC QUESTIONS] section, and every ask tool it names is one of
    the request's tools; a blocking node gets neither the section nor the async tools. Before,
    the section told the model to use a blocking ``ask_user`` no such node has."""
    flow = tmp_path / "flow.iter"
    flow.write_text(PROMPTED, encoding="utf-8")
    with fake_providers() as fake:
        fake.queue("openai", says('{"text": "drafted"}'), says('{"text": "checked"}'))
        done = await start_graph(Runner(store, env=fake.env(), cwd=tmp_path), flow)
        assert done.status is RunStatus.FINISHED, done.error
        asker, blocker = (r["body"] for r in fake.requests["openai"])

    def system(body: dict[str, Any]) -> str:
        return "\n".join(m["content"] for m in body["messages"] if m["role"] == "system")

    def tools(body: dict[str, Any]) -> set[str]:
        return {t["function"]["name"] for t in body.get("tools") or ()}

    prompt = system(asker)
    assert "Draft the notes." in prompt and "[ASYNC QUESTIONS]" in prompt
    assert tools(asker) == {"ask_user_async", "await_answers"}
    named = set(re.findall(r"\b(ask_user\w*|await_answers)\b", prompt))
    assert named == {"ask_user_async", "await_answers"}, named
    assert "blocking" not in prompt.lower(), "no blocking ask is offered to this agent"
    prompt = system(blocker)
    assert "Check the notes." in prompt
    assert "[ASYNC QUESTIONS]" not in prompt and "ask_user" not in prompt
    assert tools(blocker) == set()
