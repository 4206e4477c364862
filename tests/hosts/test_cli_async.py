"""``pi-recipes runs questions`` and ``runs answer`` for async questions, from other processes:
eight processes answering the same question leave one winner (the others exit 3, nothing
overwritten); the last answer an await pause waits for continues the run."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import anyio

from interactions.store import RunStatus, open_sqlite_store
from recipes.runs import Runner, RunResult
from tests.hosts.cli_helpers import PI_RECIPES, cli_env
from tests.recipes.runs.conftest import RECIPES


def _with_store(db: Path, work: Any) -> Any:
    async def go() -> Any:
        async with await open_sqlite_store(db) as store:
            return await work(store)

    return anyio.run(go)


def test_eight_processes_answer_one_question_and_one_wins(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    paused: RunResult = _with_store(
        db, lambda store: Runner(store, env={}).start(f"{RECIPES}:async_author", "Write it.")
    )
    run_id = paused.run_id
    name, licence = f"{run_id}_author_async_1", f"{run_id}_author_async_2"
    pending = subprocess.run(
        [PI_RECIPES, "runs", "pending", run_id, "--json", "--store", str(db)],
        cwd=tmp_path, env=cli_env(), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert [p["id"] for p in json.loads(pending.stdout)] == [name, licence], "not the await"
    base = [PI_RECIPES, "runs", "answer", run_id, name]
    racers = [
        subprocess.Popen([*base, f"name-{n}", "--json", "--store", str(db)], cwd=tmp_path,
                         env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
        for n in range(8)
    ]
    results = [(p.wait(timeout=60), *p.communicate(timeout=60)) for p in racers]
    winners = [n for n, (code, _, _) in enumerate(results) if code == 0]
    assert len(winners) == 1, results
    assert sorted(code for code, _, _ in results) == [0] + [3] * 7
    [winner] = winners
    assert json.loads(results[winner][1]) == {
        "run_id": run_id, "interaction_id": name, "queued": True, "resumed": False
    }  # fmt: skip
    assert all("already answered" in err for code, _, err in results if code == 3)
    record = _with_store(db, lambda store: store.get_interaction(run_id, name))
    assert record.answer is not None and record.answer.payload == {"answer": f"name-{winner}"}

    listed = subprocess.run(
        [PI_RECIPES, "runs", "questions", run_id, "--json", "--store", str(db)],
        cwd=tmp_path, env=cli_env(), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert [q["id"] for q in json.loads(listed.stdout)["interactions"]] == [licence]
    last = subprocess.run(
        [PI_RECIPES, "runs", "answer", run_id, licence, "MIT", "--json", "--store", str(db)],
        cwd=tmp_path, env=cli_env(), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert last.returncode == 0, last.stderr
    assert json.loads(last.stdout) == {
        "run_id": run_id, "interaction_id": licence, "queued": False, "resumed": True
    }  # fmt: skip
    done: RunResult = _with_store(db, lambda store: Runner(store).status(run_id))
    assert done.status is RunStatus.FINISHED
    assert done.text.endswith(
        f"- [{name}] Q: Project name? — A: name-{winner}\n- [{licence}] Q: Licence? — A: MIT"
    )
