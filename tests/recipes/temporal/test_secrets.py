"""On the Temporal engine, a credential a recipe's exception quotes stays out of everything
the engine keeps: the workflow's history (failures Temporal stores) and the run read back."""

from __future__ import annotations

from typing import Any

import pytest
from temporalio.client import Client

from interactions.store import RunStatus
from tests.recipes.temporal.conftest import RECIPES, Worker, open_engine
from tests.recipes.temporal.recipes_for_temporal import LEAK_ENV

pytestmark = pytest.mark.anyio

TOKEN = "tok.TEMPORALLEAK.0123456789/+=Lp3D"


@pytest.mark.parametrize("recipe", ["leaky_tool", "leaky_model"])
async def test_a_credential_in_a_recipes_exception_stays_out_of_the_history(
    address: Any, worker: Worker, monkeypatch: pytest.MonkeyPatch, recipe: str
) -> None:
    monkeypatch.setenv(LEAK_ENV, TOKEN)  # the model reads the process's; the tool its ctx.env
    run_id = f"run-leak-{recipe}"
    async with worker(f"{RECIPES}:{recipe}", env={LEAK_ENV: TOKEN}), open_engine(address) as engine:
        try:
            ended = await engine.runner.start(f"{RECIPES}:{recipe}", "Go", run_id=run_id)
            status = ended.status
        except Exception:  # the model's failure fails the run, and reaches the caller
            status = (await engine.store.get_run(run_id)).status
        run = await engine.store.get_run(run_id)
        kept = repr(run) + repr(await engine.store.list_events(run_id))
    client = await Client.connect(address.target, namespace=address.namespace)
    history = (await client.get_workflow_handle(run_id).fetch_history()).to_json()
    assert status in (RunStatus.FINISHED, RunStatus.FAILED)
    assert "***" in kept  # the failure is there, scrubbed
    for place in (history, kept):
        assert TOKEN not in place and "TEMPORALLEAK" not in place
