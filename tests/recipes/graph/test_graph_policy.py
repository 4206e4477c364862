"""A workflow's agent node runs its recipe's tools behind their approval gates: a graph run keeps
the approval policy it started under, and continues under it in a process that names none; a
remembered decision ("approve always") is stored and audited as the recipe runner's are."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from interactions.store import DecisionStore, RunStatus, Store, open_sqlite_store
from recipes.decisions import TOOL_CALL_DECIDED
from recipes.graph import start_graph
from recipes.runs import Runner

RECIPE = Path(__file__).parent.parent / "runs" / "approval_many_recipe.py"

FLOW = """\
agent deploy:
  recipe: ./deployer.py
  user: "deploy prod staging prod"

workflow ship:
  entry: deploy
  deploy -> done
"""

pytestmark = pytest.mark.anyio


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    async with await open_sqlite_store(tmp_path / "state.db") as opened:
        yield opened


def _deploys(folder: Path) -> list[str]:
    log = folder / "deploys.log"
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


async def test_a_graph_run_keeps_its_policy_and_remembers_decisions(
    tmp_path: Path, store: Store
) -> None:
    shutil.copy(RECIPE, tmp_path / "deployer.py")
    flow = tmp_path / "flow.iter"
    flow.write_text(FLOW, encoding="utf-8")
    policy = tmp_path / "policy.toml"
    policy.write_text(
        '[[rule]]\ntool = "deploy"\nwhen = "args.env == \'staging\'"\naction = "deny"\n',
        encoding="utf-8",
    )
    started = await start_graph(
        Runner(store, env={"PI_RECIPES_POLICY": str(policy)}, cwd=tmp_path), flow
    )
    assert started.status is RunStatus.PAUSED_WAITING_HUMAN
    (gate,) = started.interrupts
    policy.unlink()  # the run kept what the file said

    bare = Runner(store, env={}, cwd=tmp_path)  # another process, naming no policy
    done = await bare.answer(
        started.run_id, gate.id, {"approved": True, "remember": {"scope": "run"}}, resume=True
    )
    assert done.run is not None and done.run.status is RunStatus.FINISHED, done
    assert _deploys(tmp_path) == ["prod", "prod"], "staging denied by the kept policy; the "
    "second prod approved by the remembered decision, without asking"
    assert len(await store.list_interactions(started.run_id)) == 1
    decided = [
        (e.data["decision"], e.data["by"])
        for e in await store.list_events(started.run_id)
        if e.type == TOOL_CALL_DECIDED
    ]
    assert decided == [("allowed", "answer"), ("denied", "policy"), ("allowed", "remembered")]
    assert isinstance(store, DecisionStore)
    (kept,) = await store.list_decisions(run_id=started.run_id)
    assert (kept.tool, kept.action, kept.scope) == ("deploy", "allow", "run")
