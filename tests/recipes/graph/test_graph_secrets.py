"""A graph run keeps the credentials of its environment out of what it records when a node
fails quoting one: a command that prints it on stderr, a recipe's model that raises with it."""

from __future__ import annotations

from pathlib import Path

import pytest

from interactions.store import MemoryStore, RunStatus
from interactions.testing.store_conformance import store_snapshot
from recipes.graph import start_graph
from recipes.runs import Runner
from tests.recipes.graph.flows import write_flow

pytestmark = pytest.mark.anyio

TOKEN = "tok.GRAPHLEAK.0123456789/+=Qz4P"  # GITHUB_TOKEN: no known key shape

COMMAND_FLOW = """\
tool fetch:
  command: `echo "refused: token=$GITHUB_TOKEN" >&2; exit 3`
  env: [GITHUB_TOKEN]

workflow leak:
  entry: fetch
  fetch -> done
"""

LEAKY = '''\
import os


class LeakyModel:
    name = "leaky:model"

    async def stream(self, request):
        raise RuntimeError(f"the gateway refused {os.environ['GITHUB_TOKEN']}")
        yield


def recipe(api):
    api.register_agent("leaky", "Say hello.")
    api.set_demo_model(LeakyModel())
'''

AGENT_FLOW = """\
agent hello:
  recipe: ./leaky.py
  user: "Say hello."

workflow leak:
  entry: hello
  hello -> done
"""


@pytest.mark.parametrize("flow", [COMMAND_FLOW, AGENT_FLOW], ids=["command", "agent"])
async def test_a_node_failure_quoting_a_credential_is_recorded_scrubbed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flow: str
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    (tmp_path / "leaky.py").write_text(LEAKY, encoding="utf-8")
    async with MemoryStore() as store:
        runner = Runner(store, cwd=tmp_path)  # the process's environment, as the CLI's
        try:
            ended = await start_graph(runner, write_flow(tmp_path, flow))
            status = ended.status
        except RuntimeError as exc:  # a node's crash is recorded, then raised to the caller
            assert TOKEN in str(exc)  # the caller's own exception is left as it was
            [run] = await store.list_runs()
            status = run.status
        assert status in (RunStatus.FAILED, RunStatus.FAILED_RESUMABLE)
        recorded = repr(await store_snapshot(store))
    assert TOKEN not in recorded and "GRAPHLEAK" not in recorded
    assert "***" in recorded  # the failure is recorded, scrubbed
