"""The command line on stores an earlier pi-recipes wrote: the ``runs`` commands read them, and
answer and continue their runs, each a real ``pi-recipes`` process; a graph run stored with a
workflow a rule added since refuses continues under the rules it started with.

The stores are working copies of ``tests/fixtures/stores`` (see
``tests/recipes/runs/test_stored_by_earlier_versions.py`` for the promise, and
``make_fixtures.py`` for the runs): the SQLite file copied, the PostgreSQL dump loaded into a
fresh database when ``PI_RECIPES_TEST_POSTGRES`` names a server (skipped without one). The
runs name their recipes by module, so the processes get the repository on ``PYTHONPATH``, as a
user's deployment has their recipes' package installed.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from interactions.store import open_store
from recipes.graph import start_graph
from recipes.runs import Runner
from tests.fixtures.stores.copies import RUN_IDS, postgres_copy, sqlite_copy
from tests.hosts.cli_helpers import ROOT, cli_env, pi


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """What ``--store`` names: a copy of a stored fixture (a file, or a database)."""
    if request.param == "sqlite":
        yield str(sqlite_copy(tmp_path))
        return
    server = os.environ.get("PI_RECIPES_TEST_POSTGRES")
    if not server:
        pytest.skip("set PI_RECIPES_TEST_POSTGRES to open the stored PostgreSQL fixture")
    with postgres_copy(server) as conninfo:
        yield conninfo


def runs(*args: str, store: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``pi-recipes runs ARGS --store STORE`` with the fixtures' recipes importable."""
    return pi("runs", *args, "--store", store, cwd=cwd, env=cli_env(PYTHONPATH=str(ROOT)))


def ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)
    return done.stdout


def test_the_runs_commands_read_an_old_store(store: str, tmp_path: Path) -> None:
    listed = json.loads(ok(runs("list", "--json", store=store, cwd=tmp_path)))
    assert sorted((r["id"], r["status"]) for r in listed) == sorted(
        (run_id, "failed_resumable" if run_id == "run-fixture-retry" else "paused_waiting_human")
        for run_id in RUN_IDS
    )
    pending = json.loads(ok(runs("pending", "--json", store=store, cwd=tmp_path)))
    assert sorted((r["run_id"], r["id"]) for r in pending) == [
        ("run-fixture-async", "run-fixture-async_author_async_2"),
        ("run-fixture-batch", "int-call_colour"),
        ("run-fixture-batch", "int-call_toppings"),
        ("run-fixture-graph-agent", "int-draft.1.call_pick"),
        ("run-fixture-graph-human", "int-review.1.approved"),
        ("run-fixture-graph-human", "int-review.1.channel"),
        ("run-fixture-question", "int-call_channel"),
        ("run-fixture-replay", "int-call_deploy.2"),
    ]
    asked = json.loads(ok(runs("questions", "run-fixture-async", "--json", store=store,
                               cwd=tmp_path)))  # fmt: skip
    assert [q["id"] for q in asked["interactions"]] == ["run-fixture-async_author_async_2"]

    shown = ok(runs("show", "run-fixture-graph-human", store=store, cwd=tmp_path))
    assert "int-draft.1.call_pick" in shown and '"safety"' in shown, shown
    assert "int-review.1.approved" in shown and "int-review.1.channel" in shown, shown
    shown = ok(runs("show", "run-fixture-retry", store=store, cwd=tmp_path))
    assert "Answer: friendly" in shown and "HTTP 503" in shown, shown


def test_runs_answer_and_retry_continue_old_runs(store: str, tmp_path: Path) -> None:
    answered = ok(runs("answer", "run-fixture-question", "int-call_channel",
                       '{"answer": "Stable"}', "--resume", store=store, cwd=tmp_path))  # fmt: skip
    assert "Done: Answer: stable" in answered, answered
    assert "Run run-fixture-question finished." in answered, answered

    approval = '{"approved": true, "feedback": "after the docs"}'
    ok(runs("answer", "run-fixture-graph-human", "int-review.1.approved", approval,
            store=store, cwd=tmp_path))  # fmt: skip
    published = ok(runs("answer", "run-fixture-graph-human", "int-review.1.channel", "beta",
                        "--resume", store=store, cwd=tmp_path))  # fmt: skip
    assert "Run run-fixture-graph-human finished." in published, published
    output = '{"notes": "Lead: Answer: safety", "feedback": "after the docs", "channel": "beta"}'
    assert output in published, published

    retried = ok(runs("retry", "run-fixture-retry", store=store, cwd=tmp_path))
    assert "Done: Answer: friendly" in retried, retried
    listed = json.loads(ok(runs("list", "--json", store=store, cwd=tmp_path)))
    finished = {r["id"] for r in listed if r["status"] == "finished"}
    assert finished == {"run-fixture-question", "run-fixture-graph-human", "run-fixture-retry"}


STORED_FLOW = """\
schema verdict:
  ok: bool

schema tally_out:
  {field}: string

human check:
  instructions: "Ship it?"
  output: verdict

compute tally:
  output: tally_out
  expr:
    {field}: "if(outputs.check.ok, 'shipped', 'held')"

workflow w:
  entry: check
  check -> tally -> done
"""


def test_runs_answer_continues_a_graph_run_stored_before_a_rule_was_added(
    store: str, tmp_path: Path
) -> None:
    """A graph run an earlier version started with an output field named `_note` (which P013
    now refuses in a new workflow) is answered and continued by `runs answer --resume`. Before,
    the resume compiled the stored workflow under today's rules and refused it."""
    flow = tmp_path / "flow.iter"
    flow.write_text(STORED_FLOW.format(field="note"), encoding="utf-8")
    earlier = STORED_FLOW.format(field="_note")

    async def started_earlier() -> tuple[str, str]:
        async with await open_store(store) as opened:
            paused = await start_graph(Runner(opened, env={}, cwd=tmp_path), flow)
            run = await opened.get_run(paused.run_id)  # as the earlier version stored it
            await opened.update_run(run.id, expected_version=run.version,
                                    checkpoint={**run.checkpoint, "source": earlier})  # fmt: skip
            return paused.run_id, paused.interrupts[0].id

    run_id, ask = anyio.run(started_earlier)
    (tmp_path / "earlier.iter").write_text(earlier, encoding="utf-8")
    refused = pi("graph", "validate", "earlier.iter", cwd=tmp_path)
    assert refused.returncode == 1 and "[P013]" in refused.stdout, "a new run gets the rule"
    done = runs("answer", run_id, ask, '{"answer": "yes"}', "--resume", store=store, cwd=tmp_path)
    out = ok(done)
    assert f"Run {run_id} finished." in out, out
    assert '"_note": "shipped"' in out, out
