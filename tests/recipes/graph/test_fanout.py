"""``fan_out_all``: branches run at once (bounded by ``max_parallel_branches``); a human pause
parks its branch only; the run pauses once every branch has arrived or parked."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from ag_ui.core import ResumeEntry

from interactions import ConflictError
from interactions.store import RunStatus, Store, open_sqlite_store
from recipes.graph import start_graph
from recipes.graph.runtime import GraphCheckpoint
from recipes.runs import Runner
from tests.recipes.graph.flows import ASKING_BESIDE_FLAKY, WRITER, turns, write_flow
from tests.recipes.runs.conftest import postgres_store

pytestmark = pytest.mark.anyio
ENV = {"PATH": "/usr/bin:/bin"}


@pytest.fixture(params=["sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    """A real SQLite file, or PostgreSQL when ``PI_RECIPES_TEST_POSTGRES`` names a server (a
    fresh schema per test)."""
    if request.param == "sqlite":
        async with await open_sqlite_store(tmp_path / "state.db") as opened:
            yield opened
        return
    async with postgres_store("the fan-out tests") as pg:
        yield pg


async def _cp(store: Store, run_id: str) -> GraphCheckpoint:
    return GraphCheckpoint.model_validate((await store.get_run(run_id)).checkpoint)


HALF_HUMAN = """\
schema note_out:
  note: string

schema ok_out:
  ok: bool

schema sum_out:
  total: string

router split:
  mode: fan_out_all

human review:
  instructions: "Review {{input.topic}}?"
  output: note_out

tool work:
  command: `echo done >> work.log && echo '{"ok": true}'`
  output: ok_out

compute collect:
  output: sum_out
  expr:
    total: "concat(outputs.review.note, ' / ', if(outputs.work.ok, 'ok', 'ko'))"

workflow fan:
  entry: split
  split -> review with { topic: "the docs" }
  split -> work
  review -> collect
  work -> collect
  collect -> done
"""


async def test_a_paused_branch_parks_while_the_other_finishes(tmp_path: Path, store: Store) -> None:
    runner = Runner(store, env=ENV, cwd=tmp_path)
    paused = await start_graph(runner, write_flow(tmp_path, HALF_HUMAN))
    assert paused.status is RunStatus.PAUSED_WAITING_HUMAN
    [ask] = paused.interrupts
    assert ask.id == "int-review.1" and ask.message == "Review the docs?"
    cp = await _cp(store, paused.run_id)
    states = {b.branch: b.state for b in cp.fanout.branches}  # type: ignore[union-attr]
    assert states == {"split>review": "parked", "split>work": "arrived"}
    assert [(r.node, r.branch, r.status) for r in cp.executions] == [
        ("split", "main", "finished"), ("review", "split>review", "paused"),
        ("work", "split>work", "finished"),
    ]  # fmt: skip
    assert [r.asking for r in cp.executions] == [None] * 3, "the question is stored once"
    assert (tmp_path / "work.log").read_text() == "done\n"
    done = await runner.answer(paused.run_id, ask.id, {"answer": "fine"}, resume=True)
    assert done.run is not None and done.run.status is RunStatus.FINISHED
    assert done.run.text == "fine / ok"
    assert (tmp_path / "work.log").read_text() == "done\n", "the finished branch did not rerun"
    types = [e.type for e in await store.list_events(paused.run_id)]
    assert "join_ready" in types


TWO_HUMANS = """\
schema note_out:
  note: string

router split:
  mode: fan_out_all

human left:
  instructions: "Left?"
  output: note_out

human right:
  instructions: "Right?"
  output: note_out

workflow fan:
  entry: split
  split -> left
  split -> right
  left -> done
  right -> done
"""


async def test_every_parked_branch_waits_in_one_pause(tmp_path: Path, store: Store) -> None:
    runner = Runner(store, env=ENV, cwd=tmp_path)
    paused = await start_graph(runner, write_flow(tmp_path, TWO_HUMANS))
    assert sorted(i.id for i in paused.interrupts) == ["int-left.1", "int-right.1"]
    done = await runner.resume(paused.run_id, [
        ResumeEntry(interrupt_id="int-left.1", status="resolved", payload={"answer": "L"}),
        ResumeEntry(interrupt_id="int-right.1", status="resolved", payload={"answer": "R"}),
    ])  # fmt: skip
    assert done.status is RunStatus.FINISHED
    cp = await _cp(store, paused.run_id)
    assert cp.outputs["left"] == {"note": "L"} and cp.outputs["right"] == {"note": "R"}


def _timed(parallel: int) -> str:
    tool = (
        "tool {n}:\n  command: `echo start {n} >> log && touch {n}.ready && "
        "for i in $(seq 100); do test -f {o}.ready && break; sleep 0.02; done; "
        "echo end {n} >> log && echo '{{\"met\": '$(test -f {o}.ready && echo true || "
        "echo false)'}}'`\n\n"
    )
    return (
        "router split:\n  mode: fan_out_all\n\n"
        + tool.format(n="a", o="b") + tool.format(n="b", o="a")
        + f"workflow fan:\n  entry: split\n  budget:\n    max_parallel_branches: {parallel}\n"
        "  split -> a\n  split -> b\n  a -> done\n  b -> done\n"
    )  # fmt: skip


async def test_max_parallel_branches_bounds_how_many_run_at_once(
    tmp_path: Path, store: Store
) -> None:
    runner = Runner(store, env=ENV, cwd=tmp_path / "one")
    one = await start_graph(runner, write_flow(tmp_path / "one", _timed(1)))
    log = (tmp_path / "one" / "log").read_text().split("\n")
    assert log[0].startswith("start") and log[1].startswith("end"), "one at a time"
    cp = await _cp(store, one.run_id)
    assert sorted(r.output["met"] for r in cp.executions if r.node in "ab") == [False, True]
    runner = Runner(store, env=ENV, cwd=tmp_path / "two")
    two = await start_graph(runner, write_flow(tmp_path / "two", _timed(2)))
    cp = await _cp(store, two.run_id)
    assert [r.output["met"] for r in cp.executions if r.node in "ab"] == [True, True]


FAILING_BRANCH = """\
schema note_out:
  note: string

router split:
  mode: fan_out_all

human review:
  instructions: "Review?"
  output: note_out

tool flaky:
  command: `test -f fixed && echo '{"fine": true}' || exit 4`

workflow fan:
  entry: split
  split -> review
  split -> flaky
  review -> done
  flaky -> done
"""


TWO_FAILING = """\
router split:
  mode: fan_out_all

tool left:
  command: `test -f fixed && echo '{"left": true}' || exit 4`

tool right:
  command: `test -f fixed && echo '{"right": true}' || exit 5`

workflow fan:
  entry: split
  split -> left
  split -> right
  left -> done
  right -> done
"""


async def test_every_failed_branch_is_named_in_the_runs_error(tmp_path: Path, store: Store) -> None:
    runner = Runner(store, env=ENV, cwd=tmp_path)
    failed = await start_graph(runner, write_flow(tmp_path, TWO_FAILING))
    assert failed.status is RunStatus.FAILED_RESUMABLE
    assert failed.error == (
        "2 branches failed: "
        "branch split>left: node left failed: the command exited with 4: ; "
        "branch split>right: node right failed: the command exited with 5: "
    )
    (tmp_path / "fixed").touch()
    done = await runner.retry(failed.run_id)
    assert done.status is RunStatus.FINISHED, "the retry runs both again"


async def test_a_failed_branch_fails_the_run_and_a_retry_goes_on(
    tmp_path: Path, store: Store
) -> None:
    runner = Runner(store, env=ENV, cwd=tmp_path)
    failed = await start_graph(runner, write_flow(tmp_path, FAILING_BRANCH))
    assert failed.status is RunStatus.FAILED_RESUMABLE
    assert failed.error == "branch split>flaky: node flaky failed: the command exited with 4: "
    (tmp_path / "fixed").touch()
    [stored] = await store.list_interactions(failed.run_id, pending=True)
    assert stored.id == "int-review.1", "stored with the failure"
    paused = await runner.retry(failed.run_id)  # the parked branch still waits on it
    assert [i.id for i in paused.interrupts] == ["int-review.1"]
    done = await runner.answer(failed.run_id, "int-review.1", {"answer": "ok"}, resume=True)
    assert done.run is not None and done.run.status is RunStatus.FINISHED


ASKING_BRANCH = """\
schema draft_out:
  draft: string

router split:
  mode: fan_out_all

agent draft:
  recipe: ./writer.py
  output: draft_out

compute other:
  expr:
    x: "1"

workflow fan:
  entry: split
  split -> draft
  split -> other
  draft -> done
  other -> done
"""


async def test_an_ask_inside_a_branch_agent_parks_that_branch(tmp_path: Path, store: Store) -> None:
    (tmp_path / "writer.py").write_text(WRITER, encoding="utf-8")
    runner = Runner(store, env=ENV, cwd=tmp_path)
    paused = await start_graph(runner, write_flow(tmp_path, ASKING_BRANCH))
    assert [i.id for i in paused.interrupts] == ["int-draft.1.call_pick"]
    done = await runner.answer(paused.run_id, "int-draft.1.call_pick", {"answer": "speed"},
                               resume=True)  # fmt: skip
    assert done.run is not None and done.run.status is RunStatus.FINISHED
    cp = await _cp(store, paused.run_id)
    assert cp.outputs["draft"]["draft"].startswith("Lead: Answer: speed")


async def test_a_retry_before_the_parked_question_is_answered_pauses_on_it(
    tmp_path: Path, store: Store
) -> None:
    """The sibling's failure stores the parked agent's question; a retry reruns the failed
    branch only, and the run pauses on that same question, whose answer resumes the agent's
    conversation (its tool does not run again)."""
    runner = Runner(store, env=ENV, cwd=tmp_path)
    failed = await start_graph(runner, write_flow(tmp_path, ASKING_BESIDE_FLAKY, writer=True))
    assert failed.status is RunStatus.FAILED_RESUMABLE
    assert [r.id for r in await store.list_interactions(failed.run_id, pending=True)] == [
        "int-draft.1.call_pick"
    ]
    (tmp_path / "fixed").touch()
    paused = await runner.retry(failed.run_id)
    assert paused.status is RunStatus.PAUSED_WAITING_HUMAN
    assert [i.id for i in paused.interrupts] == ["int-draft.1.call_pick"]
    done = await runner.answer(failed.run_id, "int-draft.1.call_pick", {"answer": "speed"},
                               resume=True)  # fmt: skip
    assert done.run is not None and done.run.status is RunStatus.FINISHED
    assert turns(tmp_path) == ["turn 1", "tool asked", "turn 2"]
    events = [(e.type, e.data) for e in await store.list_events(failed.run_id)]
    asked = [d for t, d in events if t == "human_input_requested"]
    assert [d["interaction_id"] for d in asked] == ["int-draft.1.call_pick"], "logged once"
    [run_failed] = [d for t, d in events if t == "run_failed"]
    assert run_failed["parked_node_ids"] == ["draft"]
    assert [d["node_ids"] for t, d in events if t == "run_paused"] == [["draft"]]


FAILING_FOR_GOOD = ASKING_BESIDE_FLAKY.replace(
    "tool flaky:", "schema ok_out:\n  ok: bool\n\ntool flaky:\n  output: ok_out"
)  # its output never fits its schema: a failure no retry cures


async def test_a_run_that_fails_for_good_closes_the_parked_question(
    tmp_path: Path, store: Store
) -> None:
    """A run that ends ``failed`` stores the parked branch's question closed with it: an answer
    is refused as coming after the run's end, and the node path no longer says it waits."""
    runner = Runner(store, env=ENV, cwd=tmp_path)
    path = write_flow(tmp_path, FAILING_FOR_GOOD, writer=True)
    (tmp_path / "fixed").touch()  # the command succeeds: its output is what fails
    failed = await start_graph(runner, path)
    assert failed.error is not None and "does not fit schema ok_out" in failed.error
    assert failed.status is RunStatus.FAILED
    [record] = await store.list_interactions(failed.run_id)
    assert record.id == "int-draft.1.call_pick"
    assert record.answer is not None and (record.answer.status, record.answer.via) == (
        "cancelled", "run_end",
    )  # fmt: skip
    with pytest.raises(ConflictError) as refused:
        await runner.answer(failed.run_id, "int-draft.1.call_pick", {"answer": "speed"})
    assert refused.value.reason == "run_ended"
    details = runner.view(await store.get_run(failed.run_id)).details
    assert (
        "  … draft#1 (agent) [split>draft] was waiting for int-draft.1.call_pick when the run "
        "ended" in details
    )


CLASHING = """\
schema pick_out:
  note: string
  topic: string

schema sum_out:
  seen: string

router split:
  mode: fan_out_all

compute left:
  output: pick_out
  expr:
    note: "'from the left'"
    topic: "'docs'"

compute right:
  output: pick_out
  expr:
    note: "'from the right'"
    topic: "'docs'"

compute collect:
  output: sum_out
  expr:
    seen: "input.note"

workflow fan:
  entry: split
  split -> left
  split -> right
  left -> collect
  right -> collect
  collect -> done
"""


async def test_a_field_branches_bring_with_different_values_is_named_at_the_join(
    tmp_path: Path, store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    """The join's input kept the last branch's value of a field both branches brought, and
    nothing said the other's was lost."""
    runner = Runner(store, env=ENV, cwd=tmp_path)
    done = await start_graph(runner, write_flow(tmp_path, CLASHING))
    assert done.status is RunStatus.FINISHED
    cp = await _cp(store, done.run_id)
    assert cp.outputs["collect"] == {"seen": "from the right"}  # the last branch's, as before
    [ready] = [e for e in await store.list_events(done.run_id) if e.type == "join_ready"]
    assert ready.data["conflicts"] == {"note": ["split>left", "split>right"]}  # not `topic`
    [said] = [r.getMessage() for r in caplog.records if "different values" in r.getMessage()]
    assert said == (
        f"run {done.run_id}: the branches of split bring different values of `note` to "
        "collect; its input keeps the last branch's. Read each branch's own as "
        "outputs.<node>.<field>, or give the edges into collect `with` mappings to names of "
        "their own"
    )
