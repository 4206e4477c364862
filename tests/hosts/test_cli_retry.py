"""A run that hits a provider outage ends failed_resumable; ``runs retry`` finishes it later.

The provider is a real HTTP server on 127.0.0.1 speaking the OpenAI wire format; the CLI talks
to it through ``OPENAI_BASE_URL``, as it would to vLLM or Ollama.
"""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

from tests.hosts.cli_helpers import cli_env, only_run_id, pi, pi_json
from tests.hosts.fake_openai import fake_openai

KEY = "sk-local-test-key-0000"


def test_outage_then_retry_finishes_the_run(tmp_path: Path) -> None:
    recipe = tmp_path / "chat.py"
    recipe.write_text(
        "def recipe(api):\n    api.register_agent('chat', 'Answer briefly.')\n", encoding="utf-8"
    )
    with fake_openai([503] * 6 + ["Recovered answer."]) as api:
        env = cli_env(OPENAI_BASE_URL=api.base_url, OPENAI_API_KEY=KEY)
        args = ["--model", "openai:local-model"]
        failed = pi("run", str(recipe), "Say hi", "--no-interactive", *args, cwd=tmp_path, env=env)
        assert failed.returncode == 1
        run_id = only_run_id(tmp_path)
        assert f"pi-recipes runs retry {run_id}" in failed.stderr
        assert KEY not in failed.stderr + failed.stdout
        assert pi_json("runs", "show", run_id, cwd=tmp_path)["status"] == "failed_resumable"
        assert len(api.requests) == 3, "bounded retries: three attempts, then it gave up"

        still = pi("runs", "retry", run_id, cwd=tmp_path, env=env)  # the outage goes on
        assert still.returncode == 1, "a retry that fails again is no success (it exited 0)"
        assert pi_json("runs", "show", run_id, cwd=tmp_path)["status"] == "failed_resumable"
        done = pi("runs", "retry", run_id, cwd=tmp_path, env=env)
        assert done.returncode == 0, done.stderr
        assert "Recovered answer." in done.stdout
    assert api.requests[-1]["headers"]["Authorization"] == f"Bearer {KEY}"
    assert [m["role"] for m in api.requests[-1]["body"]["messages"]] == ["system", "user"]
    assert pi_json("runs", "show", run_id, cwd=tmp_path)["status"] == "finished"
    again = pi("runs", "retry", run_id, cwd=tmp_path, env=env)
    assert again.returncode == 3 and "only a failed_resumable run" in again.stderr


def test_the_retry_command_printed_names_the_store_it_was_given(tmp_path: Path) -> None:
    """The hint said ``pi-recipes runs retry RUN``, which looks in the default store: with
    ``--store`` the run was not found there."""
    recipe = tmp_path / "chat.py"
    recipe.write_text(
        "def recipe(api):\n    api.register_agent('chat', 'Answer briefly.')\n", encoding="utf-8"
    )
    store = ["--store", "elsewhere.db"]
    with fake_openai([503, 503, 503, "Recovered answer."]) as api:
        env = cli_env(OPENAI_BASE_URL=api.base_url, OPENAI_API_KEY=KEY)
        args = ["--model", "openai:local-model", *store]
        failed = pi("run", str(recipe), "Say hi", "--no-interactive", *args, cwd=tmp_path, env=env)
        assert failed.returncode == 1
        (said,) = [line for line in failed.stderr.splitlines() if "runs retry" in line]
        command = shlex.split(said.split("retry it with: ")[1])
        assert command[1:] == ["runs", "retry", command[3], "--store", "elsewhere.db"]
        resumed = pi("runs", "resume", command[3], *store, cwd=tmp_path, env=env)
        assert resumed.returncode == 3  # not paused: it says how to go on, with the same command
        assert resumed.stderr.split("continue it with: ")[1].strip() == shlex.join(command)
        done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=60)  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "Recovered answer." in done.stdout
