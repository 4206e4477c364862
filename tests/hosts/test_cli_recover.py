"""A run whose process dies mid-leg is stranded in ``running``; ``runs recover`` then
``runs retry`` finish it in another process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.hosts.cli_helpers import cli_env, pi, pi_json

RECIPE = '''
import sys, anyio
from pathlib import Path
from recipes.messages import AssistantMessage, ToolCall, ToolResultMessage, text_of
from recipes.models import ScriptedModel

FLAG = Path(__file__).with_name("block.flag")

def recipe(api):
    @api.tool
    async def deploy(tool_call_id, params, ctx, on_update) -> str:
        """Deploy."""
        if FLAG.exists():
            print("deploying", flush=True)
            await anyio.sleep_forever()
        return "deployed"

    def report(request):
        results = [m for m in request.messages if isinstance(m, ToolResultMessage)]
        return AssistantMessage(text="Done: " + text_of(results[-1].content))

    api.register_agent("ops", "Deploy.")
    api.set_demo_model(ScriptedModel(
        [AssistantMessage(tool_calls=[ToolCall(id="d1", name="deploy")]), report], label="ops"))
'''

DRIVER = """
import sys, anyio
from interactions.store import open_sqlite_store
from recipes.runs import Runner

async def main():
    async with await open_sqlite_store(sys.argv[1]) as store:
        await Runner(store, env={}).start(sys.argv[2], "deploy it")

anyio.run(main)
"""


def test_stranded_run_is_recovered_and_retried(tmp_path: Path) -> None:
    recipe = tmp_path / "ops.py"
    recipe.write_text(RECIPE, encoding="utf-8")
    flag = tmp_path / "block.flag"
    flag.touch()
    db = tmp_path / "state.db"
    with subprocess.Popen(
        [sys.executable, "-c", DRIVER, str(db), str(recipe)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_env(),
    ) as driver:  # fmt: skip
        try:
            assert driver.stdout is not None
            assert driver.stdout.readline().strip() == "deploying"
        finally:
            os.kill(driver.pid, signal.SIGKILL)
            driver.wait(timeout=30)
    store = ["--store", str(db)]
    (run,) = pi_json("runs", "list", *store, cwd=tmp_path)
    assert run["status"] == "running", "the dead process left its run running"

    young = pi("runs", "recover", "--older-than", "3600", *store, cwd=tmp_path)
    assert young.returncode == 0 and "Marked 0 stranded run(s)" in young.stdout
    marked = pi("runs", "recover", "--older-than", "0", *store, cwd=tmp_path)
    assert marked.returncode == 0 and "Marked 1 stranded run(s)" in marked.stdout
    assert f"runs retry {run['id']}" in marked.stdout

    flag.unlink()
    done = pi("runs", "retry", run["id"], *store, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Done: deployed" in done.stdout
    assert pi_json("runs", "show", run["id"], *store, cwd=tmp_path)["status"] == "finished"


def test_a_run_recovered_while_its_process_lives_stops_there(tmp_path: Path) -> None:
    """``runs recover`` took a slow process for a dead one: that process stops its agent and
    says why, and the retry elsewhere is the only one that goes on."""
    recipe = tmp_path / "ops.py"
    recipe.write_text(RECIPE, encoding="utf-8")
    flag = tmp_path / "block.flag"
    flag.touch()
    db = tmp_path / "state.db"
    store = ["--store", str(db)]
    with subprocess.Popen(
        [sys.executable, "-c", DRIVER, str(db), str(recipe)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_env(),
    ) as driver:  # fmt: skip
        try:
            assert driver.stdout is not None and driver.stderr is not None
            assert driver.stdout.readline().strip() == "deploying"
            marked = pi("runs", "recover", "--older-than", "0", *store, cwd=tmp_path)
            assert "Marked 1 stranded run(s)" in marked.stdout
            driver.wait(timeout=30)  # its tool would deploy forever
            said = driver.stderr.read()
        finally:
            if driver.poll() is None:
                os.kill(driver.pid, signal.SIGKILL)
    assert driver.returncode != 0
    (run,) = pi_json("runs", "list", *store, cwd=tmp_path)
    assert f"run {run['id']} was marked failed_resumable (stranded:" in said
    assert "the agent was stopped and what it did in this leg was not recorded" in said
    assert f"retry it with: pi-recipes runs retry {run['id']}" in said
    assert run["status"] == "failed_resumable"  # the stopped process wrote nothing over it

    flag.unlink()
    done = pi("runs", "retry", run["id"], *store, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Done: deployed" in done.stdout
