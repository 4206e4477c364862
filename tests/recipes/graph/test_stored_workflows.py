"""A graph run continues under the workflow it started with, whatever the engine learned since:
a compile rule added after the run was stored does not refuse its resume (the stored source
was validated when the run started), while a rule that guards running it at all (a wait with
no bound) still does; an ``await_answers`` gate cut by the run's
``max_duration`` fails as the budget's doing. On a real SQLite file and on PostgreSQL (when
``PI_RECIPES_TEST_POSTGRES`` names a server)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from interactions.store import RunStatus, Store, open_sqlite_store
from recipes.graph import GraphError, compile_graph, start_graph
from recipes.graph.runtime import GraphCheckpoint
from recipes.runs import Runner
from tests.recipes.runs.conftest import postgres_store

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    if request.param == "sqlite":
        async with await open_sqlite_store(tmp_path / "state.db") as opened:
            yield opened
    else:
        async with postgres_store("the stored-workflow tests") as pg:
            yield pg


TODAY = """\
schema verdict:
  ok: bool

schema tally_out:
  note: string

human check:
  instructions: "Ship it?"
  output: verdict

compute tally:
  output: tally_out
  expr:
    note: "if(outputs.check.ok, 'shipped', 'held')"

workflow w:
  entry: check
  check -> tally -> done
"""

EARLIER = TODAY.replace("  note:", "  _note:").replace("    note:", "    _note:")
"""The same workflow as a version before P013 (no output field named with a leading ``_``)
accepted it, and stored it with the run."""


async def test_a_rule_added_after_a_run_started_does_not_refuse_its_resume(
    tmp_path: Path, store: Store
) -> None:
    with pytest.raises(GraphError) as refused:
        compile_graph(EARLIER, file="flow.iter")
    assert [d.code for d in refused.value.diagnostics if d.is_error] == ["P013"], "new runs"

    flow = tmp_path / "flow.iter"
    flow.write_text(TODAY, encoding="utf-8")
    runner = Runner(store, env={}, cwd=tmp_path)
    paused = await start_graph(runner, flow)
    assert paused.status is RunStatus.PAUSED_WAITING_HUMAN
    [ask] = paused.interrupts
    stored = await store.get_run(paused.run_id)  # as the earlier version wrote it
    await store.update_run(paused.run_id, expected_version=stored.version,
                           checkpoint={**stored.checkpoint, "source": EARLIER})  # fmt: skip

    answered = await runner.answer(paused.run_id, ask.id, {"answer": "yes"}, resume=True)
    assert answered.run is not None, answered
    assert answered.run.status is RunStatus.FINISHED, answered.run.error
    cp = GraphCheckpoint.model_validate((await store.get_run(paused.run_id)).checkpoint)
    assert cp.outputs["tally"] == {"_note": "shipped"}
    assert cp.source == EARLIER, "the run keeps the workflow it started with"


BAD_FROM = """\
schema out:
  text: string

compute a:
  output: out
  expr:
    text: "'drafted'"

await_answers gate:
  from: a
  timeout: "30m"

workflow w:
  entry: a
  budget:
    max_duration: "{budget}"
  a -> gate -> done
"""


async def test_a_gate_cut_by_the_runs_max_duration_fails_as_the_budget(
    tmp_path: Path, store: Store
) -> None:
    """The gate's `from:` names a node that posts no questions (C242, a warning), so it can
    only wait out its bound; here the run's max_duration, not its 30m timeout, is that bound.
    Before, it failed AWAIT_FROM_INVALID saying it waited out its timeout (30m)."""
    flow = tmp_path / "flow.iter"
    flow.write_text(BAD_FROM.format(budget="500ms"), encoding="utf-8")
    failed = await start_graph(Runner(store, env={}, cwd=tmp_path), flow)
    assert failed.status is RunStatus.FAILED
    assert failed.error is not None
    assert failed.error.startswith("node gate failed: budget exceeded: max_duration (500ms) spent")
    assert "waited out its timeout" not in failed.error
    assert "C242" in failed.error, "the workflow's own defect is still named"
    cp = GraphCheckpoint.model_validate((await store.get_run(failed.run_id)).checkpoint)
    assert (cp.executions[-1].node, cp.executions[-1].code) == ("gate", "BUDGET_EXCEEDED")
    events = [e.data for e in await store.list_events(failed.run_id) if e.type == "node_failed"]
    assert [e["code"] for e in events] == ["BUDGET_EXCEEDED"]


GATED = """\
schema verdict:
  ok: bool

human check:
  instructions: "Ship it?"
  output: verdict

agent draft:
  model: "scripted:draft.json"
  interaction: async

await_answers gate:
  from: draft
  timeout: "1m"

workflow w:
  entry: check
  check -> draft -> gate -> done
"""


async def test_a_rule_that_guards_running_at_all_still_holds_on_resume(
    tmp_path: Path, store: Store
) -> None:
    """A wait with no bound (C241) breaks the engine's own promise, not a naming convention:
    a stored workflow that has one is refused when it would continue, saying why, and the run
    is not claimed (the answer is kept for when it can go on)."""
    flow = tmp_path / "flow.iter"
    flow.write_text(GATED, encoding="utf-8")
    (tmp_path / "draft.json").write_text('{"turns": [{"text": "drafted"}]}', encoding="utf-8")
    runner = Runner(store, env={}, cwd=tmp_path)
    paused = await start_graph(runner, flow)
    [ask] = paused.interrupts
    stored = await store.get_run(paused.run_id)
    unbounded = GATED.replace('  timeout: "1m"\n', "")
    await store.update_run(paused.run_id, expected_version=stored.version,
                           checkpoint={**stored.checkpoint, "source": unbounded})  # fmt: skip
    with pytest.raises(GraphError) as refused:
        await runner.answer(paused.run_id, ask.id, {"answer": "yes"}, resume=True)
    assert [d.code for d in refused.value.diagnostics] == ["C241"]
    assert "error [C241]: await_answers `gate` has no `timeout:`" in str(refused.value)
    after = await store.get_run(paused.run_id)
    assert after.status is RunStatus.PAUSED_WAITING_HUMAN, "not claimed: it waits, answered"
    assert after.checkpoint["source"] == unbounded
