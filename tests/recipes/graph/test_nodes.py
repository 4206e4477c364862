"""Each node kind at run time: asks inside agent nodes, human forms, tools, routers, budgets,
model failures that a retry may cure — on a real SQLite store."""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from interactions.store import RunStatus, Store, open_sqlite_store
from interactions.testing.dialogs import ScriptedDialogUI
from recipes.graph import start_graph
from recipes.graph.compiler import compile_stored
from recipes.graph.runtime import GraphCheckpoint
from recipes.graph.runtime._agent import resolve_agent
from recipes.runs import Runner, Surface
from tests.hosts.fake_openai import fake_openai
from tests.recipes.graph.flows import ASKING_FLOW, turns, write_flow

pytestmark = pytest.mark.anyio


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    async with await open_sqlite_store(tmp_path / "state.db") as opened:
        yield opened


async def _cp(store: Store, run_id: str) -> GraphCheckpoint:
    return GraphCheckpoint.model_validate((await store.get_run(run_id)).checkpoint)


async def test_an_ask_inside_an_agent_node_pauses_the_run_and_resumes_the_node(
    tmp_path: Path, store: Store
) -> None:
    flow = write_flow(tmp_path, ASKING_FLOW, writer=True)
    runner = Runner(store, env={}, cwd=tmp_path)
    paused = await start_graph(runner, flow)
    [ask] = paused.interrupts
    assert ask.id == "int-draft.1.call_pick" and ask.message == "Which change leads v2?"
    assert [o.label for o in ask.options] == ["speed", "safety"]
    assert ask.tool_call_id == "call_pick" and (ask.metadata or {})["node_id"] == "draft"
    [record] = await store.list_interactions(paused.run_id)
    assert record.node_id == "draft" and record.is_open_blocking
    cp = await _cp(store, paused.run_id)
    assert cp.executions[0].status == "paused" and cp.executions[0].session is not None
    # one id from the ask to the store and back: the node's session raised it in its scope
    session_paused = cp.executions[0].session.paused
    assert session_paused is not None
    assert [a.interrupt_id for a in session_paused.awaiting] == [record.id] == [ask.id]
    answered = await runner.answer(paused.run_id, ask.id, {"answer": "safety"}, resume=True)
    assert answered.run is not None and [i.id for i in answered.run.interrupts] == ["int-approve.1"]
    cp = await _cp(store, paused.run_id)
    assert cp.executions[0].output == {
        "draft": "Lead: Answer: safety | asked with: Draft the notes. Feedback: "
        "{{outputs.approve.feedback}}"
    }
    assert turns(tmp_path) == ["turn 1", "tool asked", "turn 2"], "nothing ran twice"


async def test_a_watching_person_answers_inline_and_nothing_pauses(
    tmp_path: Path, store: Store
) -> None:
    flow = write_flow(tmp_path, ASKING_FLOW, writer=True)
    ui = ScriptedDialogUI(["speed", "Approve"])
    runner = Runner(store, env={}, cwd=tmp_path)
    done = await start_graph(runner, flow, surface=Surface(ui=ui, mode="tui"))
    assert done.status is RunStatus.FINISHED and done.text.startswith("LEAD: ANSWER: SPEED")
    assert [c.method for c in ui.calls] == ["select", "select"]
    assert await store.list_interactions(done.run_id) == []


async def test_auto_approve_resolves_every_ask_without_a_pause(
    tmp_path: Path, store: Store
) -> None:
    flow = write_flow(tmp_path, ASKING_FLOW, writer=True)
    runner = Runner(store, env={"PI_ASK_USER_AUTO_APPROVE": "1"}, cwd=tmp_path)
    done = await start_graph(runner, flow)
    assert done.status is RunStatus.FINISHED
    assert "USER DECLINED TO ANSWER" in done.text  # the question declined, the gate approved


FORM = """\
schema form:
  channel: string [enum: "stable", "beta"]
  score: int
  ratio: float
  ok: bool
  tags: string[] [enum: "docs", "perf"]
  comment: string

human ask:
  instructions: "Tell us"
  output: form

workflow w:
  entry: ask
  ask -> done
"""


async def test_a_human_form_asks_each_field_and_types_the_answers(
    tmp_path: Path, store: Store
) -> None:
    from ag_ui.core import ResumeEntry

    runner = Runner(store, env={}, cwd=tmp_path)
    paused = await start_graph(runner, write_flow(tmp_path, FORM))
    by_field = {(i.metadata or {})["field"]: i for i in paused.interrupts}
    assert sorted(by_field) == ["channel", "comment", "ok", "ratio", "score", "tags"]
    assert not by_field["channel"].allow_other and by_field["tags"].selection == "multiple"
    assert [o.value for o in by_field["ok"].options] == ["true", "false"]
    assert by_field["score"].message == "Tell us (score) (a whole number)"

    def entry(field: str, payload: object, status: str = "resolved") -> ResumeEntry:
        return ResumeEntry(interrupt_id=by_field[field].id, status=status, payload=payload)

    again = await runner.resume(paused.run_id, [
        entry("channel", {"answer": "Beta"}), entry("score", {"answer": "seven"}),
        entry("ratio", {"answer": "nan"}), entry("ok", {"answer": "Yes"}),
        entry("tags", {"answers": ["perf", "docs"]}), entry("comment", None, "cancelled"),
    ])  # fmt: skip
    # An unreadable number is asked again, nothing else; so is one JSON cannot hold (it was
    # stored as null), or one in digits other than ASCII's.
    retry, ratio = sorted(again.interrupts, key=lambda i: i.id, reverse=True)
    assert retry.id == "int-ask.1.score.2" and ratio.id == "int-ask.1.ratio.2"
    assert retry.message == (
        "Tell us (score) (a whole number: the last answer did not read as one; 2 of 3)"
    )
    assert ratio.message == (
        "Tell us (ratio) (a number: the last answer did not read as one; 2 of 3)"
    )
    await runner.answer(paused.run_id, retry.id, {"answer": "\u0663"})  # ARABIC-INDIC THREE
    done = await runner.answer(paused.run_id, ratio.id, {"answer": "1e400"}, resume=True)
    assert done.run is not None and done.run.status is RunStatus.PAUSED_WAITING_HUMAN
    by_id = {i.id: i for i in done.run.interrupts}
    assert sorted(by_id) == ["int-ask.1.ratio.3", "int-ask.1.score.3"]
    await runner.answer(paused.run_id, "int-ask.1.score.3", {"answer": " 7 "})
    done = await runner.answer(paused.run_id, "int-ask.1.ratio.3", {"answer": "0.5"}, resume=True)
    assert done.run is not None and done.run.status is RunStatus.FINISHED
    cp = await _cp(store, paused.run_id)
    assert cp.executions[0].output == {
        "channel": "beta", "score": 7, "ratio": 0.5, "ok": True,
        "tags": ["docs", "perf"],  # picks in the options' order, whatever the order sent
        "comment": "", "_declined": ["comment"],
    }  # fmt: skip


COUNT = """\
schema count_out:
  n: int

tool count:
  command: `echo x >> count.log && echo "{\\"n\\": $(wc -l < count.log)}"`
  output: count_out

"""
FLAKY = (
    COUNT
    + """\
tool flaky:
  command: `test -f fixed && echo '{"fine": true}' || { echo broken >&2; exit 3; }`

workflow w:
  entry: count
  count -> flaky
  flaky -> done
"""
)
SLOW = (
    COUNT
    + """\
tool slow:
  command: "sleep 5"
  timeout: "300ms"

workflow w:
  entry: count
  count -> slow
  slow -> done
"""
)


async def test_a_failing_command_is_resumable_and_a_retry_does_not_rerun_finished_nodes(
    tmp_path: Path, store: Store
) -> None:
    flow = write_flow(tmp_path, FLAKY)
    runner = Runner(store, env={"PATH": "/usr/bin:/bin"}, cwd=tmp_path)
    failed = await start_graph(runner, flow)
    assert failed.status is RunStatus.FAILED_RESUMABLE
    assert failed.error == "node flaky failed: the command exited with 3: broken"
    (tmp_path / "fixed").touch()
    done = await runner.retry(failed.run_id)
    assert done.status is RunStatus.FINISHED
    assert (tmp_path / "count.log").read_text() == "x\n", "count ran once"
    cp = await _cp(store, failed.run_id)
    assert [(r.node, r.visit, r.output) for r in cp.executions] == [
        ("count", 1, {"n": 1}), ("flaky", 1, {"fine": True}),
    ]  # fmt: skip


async def test_a_node_past_its_timeout_fails_resumably(tmp_path: Path, store: Store) -> None:
    flow = write_flow(tmp_path, SLOW)
    runner = Runner(store, env={"PATH": "/usr/bin:/bin"}, cwd=tmp_path)
    result = await start_graph(runner, flow)
    assert result.status is RunStatus.FAILED_RESUMABLE
    assert result.error == "node slow failed: the command ran past its time bound (0.3s)"


OUTPUTS = """\
tool a:
  command: `{command}`

tool b:
  command: `echo '{{"b": 1}}'`

workflow w:
  entry: a
  a -> b
  b -> done
"""
PY = "python3 -c"
BAD_OUTPUTS = {
    "nested deeper than a run keeps": (
        f"{PY} \"print('{{\\\"x\\\": ' + '[' * 250 + ']' * 250 + '}}')\"",
        "node a failed: the command's output: it nests deeper than 100 levels",
    ),
    "nested deeper than the parser goes": (
        f"{PY} \"print('[' * 5000 + ']' * 5000)\"",
        "node a failed: the command's output: it nests deeper than 100 levels",
    ),
    "past the bytes kept": (
        f"{PY} \"import json; print(json.dumps({{'x': 'y' * 1100000}}))\"",
        "node a failed: the command wrote more than 1,000,000 bytes on standard output; write "
        "less, or write it to a file and output the file's path",
    ),
}


@pytest.mark.parametrize("bad", BAD_OUTPUTS.values(), ids=BAD_OUTPUTS.keys())
async def test_a_command_output_no_run_could_use_fails_the_node(
    tmp_path: Path, store: Store, bad: tuple[str, str]
) -> None:
    """Too deep an output left the run ``running`` for good (nothing could record it, not even
    the failure); one past the bytes kept was cut, read as text, and the run went on."""
    command, error = bad
    flow = write_flow(tmp_path, OUTPUTS.format(command=command))
    result = await start_graph(Runner(store, env={"PATH": "/usr/bin:/bin"}, cwd=tmp_path), flow)
    assert (result.status, result.error) == (RunStatus.FAILED, error)
    assert (await store.get_run(result.run_id)).status is RunStatus.FAILED


async def test_a_command_too_long_to_start_fails_the_node_saying_so(
    tmp_path: Path, store: Store
) -> None:
    """A value too long for one argument (a kernel limit) raised out of the engine."""
    flow = write_flow(tmp_path, OUTPUTS.format(command="echo {{vars.big}} >/dev/null").replace(
        "tool a:", "vars:\n  big: string\n\ntool a:"))  # fmt: skip
    runner = Runner(store, env={"PATH": "/usr/bin:/bin"}, cwd=tmp_path)
    result = await start_graph(runner, flow, vars={"big": "y" * 200_000})
    assert result.status is RunStatus.FAILED
    assert result.error == "node a failed: the command could not start: Argument list too long"


async def test_budgets_stop_the_run(tmp_path: Path, store: Store) -> None:
    loop = """\
compute tick:
  expr:
    t: "1"

workflow w:
  entry: tick
  budget:
    max_iterations: 3
  tick -> tick as again(10)
  tick -> done
"""
    runner = Runner(store, env={}, cwd=tmp_path)
    result = await start_graph(runner, write_flow(tmp_path / "a", loop))
    assert result.status is RunStatus.FAILED
    assert result.error == "budget exceeded: max_iterations (3) reached"
    slow = SLOW.replace('"300ms"', '"30s"').replace(
        "  entry: count", '  entry: count\n  budget:\n    max_duration: "500ms"'
    )
    runner = Runner(store, env={"PATH": "/usr/bin:/bin"}, cwd=tmp_path)
    result = await start_graph(runner, write_flow(tmp_path / "b", slow))
    assert result.status is RunStatus.FAILED
    assert result.error == "node slow failed: budget exceeded: max_duration (500ms) spent"


ROUTED = """\
schema verdict:
  score: int
  approved: bool

judge rate:
  model: "openai:local-model"
  output: verdict

router gate:
  mode: condition

compute high:
  expr:
    said: "concat('high ', input.score)"

compute low:
  expr:
    said: "'low'"

workflow w:
  entry: rate
  rate -> gate with { score: "{{input.score}}" }
  gate -> high when "outputs.rate.score > 5 && input.score == '9'"
  gate -> low else
  high -> done
  low -> done
"""


async def test_a_model_outage_fails_resumably_and_the_retry_finishes(
    tmp_path: Path, store: Store
) -> None:
    reply = json.dumps({"score": 9, "approved": True})
    with fake_openai([503, 503, 503, reply]) as api:
        env = {"OPENAI_BASE_URL": api.base_url, "OPENAI_API_KEY": "sk-test-0000"}
        runner = Runner(store, env=env, cwd=tmp_path)
        failed = await start_graph(runner, write_flow(tmp_path, ROUTED))
        assert failed.status is RunStatus.FAILED_RESUMABLE
        cp = await _cp(store, failed.run_id)
        assert cp.executions[0].code in ("unavailable", "transient_exhausted")
        done = await runner.retry(failed.run_id)
    assert done.status is RunStatus.FINISHED and done.text == "high 9"
    assert '"required": ["score", "approved"]' in api.requests[-1]["body"]["messages"][0]["content"]


async def test_interaction_none_resolves_the_nodes_asks_itself(
    tmp_path: Path, store: Store
) -> None:
    quiet = "  output: draft_out\n  interaction: none\n"
    flow = ASKING_FLOW.replace("  output: draft_out\n", quiet, 1)
    flow = flow.replace("agent draft:", "judge draft:")
    runner = Runner(store, env={}, cwd=tmp_path)
    paused = await start_graph(runner, write_flow(tmp_path, flow, writer=True))
    assert [i.id for i in paused.interrupts] == ["int-approve.1"], "the draft asked no one"
    cp = await _cp(store, paused.run_id)
    assert cp.executions[0].kind == "judge"
    assert "User declined to answer" in cp.executions[0].output["draft"]  # type: ignore[index]
    started = [e.data for e in await store.list_events(paused.run_id)
               if e.type == "node_started"]  # fmt: skip
    assert started[0]["kind"] == "judge"


async def test_a_command_reading_a_value_no_node_gave_fails_before_it_runs(
    tmp_path: Path, store: Store
) -> None:
    """``{{outputs.a.missing}}`` has no value: the command is not run with the placeholder in
    it. Before, the reference stayed as written and bash took it as a literal word: the
    command ran (here: wrote the file ``{{outputs.a.missing}}``) and the node finished."""
    flow = write_flow(tmp_path, OUTPUTS.format(command="echo '{\"x\": 1}'").replace(
        "tool b:\n  command: `echo '{\"b\": 1}'`",
        "tool b:\n  command: `touch {{outputs.a.missing}} && echo '{\"b\": 1}'`",
    ))  # fmt: skip
    runner = Runner(store, env={"PATH": "/usr/bin:/bin"}, cwd=tmp_path)
    failed = await start_graph(runner, flow)
    assert failed.status is RunStatus.FAILED, failed.error
    assert failed.error == (
        "node b failed: the command reads {{outputs.a.missing}}, which has no value: it was "
        "not run (give the value, or read it only where a node has set it)"
    )
    assert not (tmp_path / "{{outputs.a.missing}}").exists(), "nothing ran"


async def test_a_graph_runs_asks_expire_on_the_runners_clock(tmp_path: Path, store: Store) -> None:
    """An agent node's ask and a human node's both count their lifetime from the runner's
    "now" (an engine replaying a run gives its own clock), not from the wall clock."""
    flow = write_flow(tmp_path, ASKING_FLOW, writer=True)
    now = datetime(2031, 5, 4, 12, 0, tzinfo=UTC)
    runner = Runner(store, env={}, cwd=tmp_path, clock=lambda: now)
    paused = await start_graph(runner, flow)
    [ask] = paused.interrupts
    assert ask.expires_at == "2031-05-11T12:00:00Z"  # a week on
    answered = await runner.answer(paused.run_id, ask.id, {"answer": "speed"}, resume=True)
    assert answered.run is not None
    [approval] = answered.run.interrupts  # the human node's
    assert approval.expires_at == "2031-05-11T12:00:00Z"


@contextmanager
def calls_to(*functions: Callable[..., Any]) -> Iterator[Counter[str]]:
    """Count the calls made to ``functions`` in this thread while the block runs, watching
    with the interpreter's profiler hook (nothing of ours is replaced)."""
    codes = {f.__code__: f.__name__ for f in functions}
    counted: Counter[str] = Counter()

    def watch(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code in codes:
            counted[codes[frame.f_code]] += 1

    before = sys.getprofile()
    sys.setprofile(watch)
    try:
        yield counted
    finally:
        sys.setprofile(before)


async def test_an_answer_compiles_the_workflow_once_and_resolves_each_model_once(
    tmp_path: Path, store: Store
) -> None:
    """The claim checks that the run can go on (the stored workflow is read, the agents'
    models resolve) and the leg runs on what it built: neither is done twice per resume."""
    flow = write_flow(tmp_path, ASKING_FLOW, writer=True)
    runner = Runner(store, env={}, cwd=tmp_path)
    paused = await start_graph(runner, flow)
    [ask] = paused.interrupts
    with calls_to(compile_stored, resolve_agent) as counted:
        answered = await runner.answer(paused.run_id, ask.id, {"answer": "speed"}, resume=True)
    assert answered.run is not None and answered.run.interrupts  # the human node asks next
    assert counted == {"compile_stored": 1, "resolve_agent": 1}  # the draft node's agent
