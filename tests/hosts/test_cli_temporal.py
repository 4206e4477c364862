"""The command line on the Temporal engine: a worker in one process, a run started in another,
answered and finished from others; refusals exit with the codes of the other engines."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hosts.cli_helpers import OPERATOR, RELEASE, cli_env, pi

pytest.importorskip("temporalio", reason="the temporal extra is not installed")

from recipes.temporal import EngineAddress
from tests.recipes.temporal.workers import worker_process


@pytest.fixture
def engine_url(temporal_server: str) -> Iterator[str]:
    """The URL of an engine whose queue a ``pi-recipes worker`` of the release demo polls."""
    address = EngineAddress(temporal_server, "default", f"cli-{uuid.uuid4().hex[:12]}")
    with worker_process(RELEASE, address):
        yield address.url()


def test_pause_then_answer_from_other_processes_to_the_end(engine_url: str, tmp_path: Path) -> None:
    started = pi("run", RELEASE, "Release v2.0.0", "--engine", engine_url, cwd=tmp_path)
    assert started.returncode == 0, started.stderr
    assert "paused, waiting for 1 answer" in started.stdout
    assert (
        f"--engine {engine_url}" in started.stdout or f"--engine '{engine_url}'" in started.stdout
    )
    run_id = started.stdout.split()[1]
    assert not (tmp_path / ".pi-recipes" / "state.db").exists()  # no store file: the engine

    env = cli_env(PI_RECIPES_ENGINE=engine_url)
    listed = pi("runs", "list", "--json", cwd=tmp_path, env=env)
    assert [r["id"] for r in json.loads(listed.stdout)] == [run_id]
    pending = pi("runs", "pending", run_id, cwd=tmp_path, env=env)
    assert "int-call_channel: Where should v2.0.0 be published?" in pending.stdout

    answered = pi("runs", "answer", run_id, "int-call_channel", "beta", "--resume",
                  cwd=tmp_path, env=env)  # fmt: skip
    assert answered.returncode == 0, answered.stderr
    assert "int-call_publish: Publish v2.0.0 to beta?" in answered.stdout

    other = pi("runs", "answer", run_id, "int-call_channel", "stable", cwd=tmp_path, env=env)
    assert other.returncode == 3 and "already answered" in other.stderr
    unknown = pi("runs", "answer", run_id, "int-nope", "x", cwd=tmp_path, env=env)
    assert unknown.returncode == 4, unknown.stderr
    off_schema = pi("runs", "answer", run_id, "int-call_publish", '{"approved": "yes"}',
                    cwd=tmp_path, env=env)  # fmt: skip
    assert off_schema.returncode == 6, off_schema.stderr

    final = pi("runs", "answer", run_id, "int-call_publish", '{"approved": true}', "--resume",
               "--by", "ada", cwd=tmp_path, env=env)  # fmt: skip
    assert final.returncode == 0, final.stderr
    assert "Published v2.0.0. Approved." in final.stdout
    shown = json.loads(pi("runs", "show", run_id, "--json", cwd=tmp_path, env=env).stdout)
    assert shown["status"] == "finished"
    assert [i["answer"]["answered_by"] for i in shown["interactions"]] == [OPERATOR, "ada"]
    ended = pi("runs", "cancel", run_id, cwd=tmp_path, env=env)
    assert ended.returncode == 3  # an ended run cannot be cancelled


def test_engine_usage_errors(tmp_path: Path) -> None:
    both = pi("runs", "list", "--store", "x.db", "--engine", "temporal://127.0.0.1:1/default",
              cwd=tmp_path)  # fmt: skip
    assert both.returncode == 2 and "not both" in both.stderr
    wrong = pi("runs", "list", "--engine", "http://127.0.0.1:1", cwd=tmp_path)
    assert wrong.returncode == 2 and "temporal://" in wrong.stderr
    in_store = pi("runs", "list", "--store", "temporal://127.0.0.1:1/default", cwd=tmp_path)
    assert in_store.returncode == 2 and "--engine" in in_store.stderr
    graph = pi("graph", "run", "flow.iter", "--engine", "temporal://127.0.0.1:1/x", cwd=tmp_path)
    assert graph.returncode == 2 and "not on an engine" in graph.stderr
    tiny = pi("worker", RELEASE, "--temporal", "127.0.0.1:1", "--history-limit", "1000",
              cwd=tmp_path)  # fmt: skip
    assert tiny.returncode == 2 and "history_limit must exceed" in tiny.stderr
