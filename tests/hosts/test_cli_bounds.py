"""A run's bounds through the command line, each command a real process: a compute node that
grows past what a value may hold, or a tool that runs out of memory, fails its run at once with
one line; a leg busy computing (a tool in a loop that never awaits) stops on the first signal,
its run left to retry. On SQLite and PostgreSQL."""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from shlex import quote as quote_arg
from urllib.parse import quote

import pytest

from tests.hosts.cli_helpers import PI_RECIPES, cli_env, pi, pi_json

HERE = Path(__file__).parent
BOUNDS = HERE / "bounds_recipe.py"
SERVER = os.environ.get("PI_RECIPES_TEST_POSTGRES")


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[list[str]]:
    """The ``--store`` arguments of a command: none (the default SQLite file in the working
    folder), or a fresh schema of ``PI_RECIPES_TEST_POSTGRES``."""
    if request.param == "sqlite":
        yield []
        return
    if not SERVER:
        pytest.skip("set PI_RECIPES_TEST_POSTGRES to run the bounds tests on PostgreSQL")
    import psycopg

    schema = f"pi_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(SERVER, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
        try:
            sep = "&" if "?" in SERVER else "?"
            yield ["--store", f"{SERVER}{sep}options={quote(f'-csearch_path={schema}')}"]
        finally:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


def _count(n: int) -> str:
    return "[" + ", ".join(str(i) for i in range(n)) + "]"


def _compute_flow(*exprs: str) -> str:
    fields = "".join(f'    v{i}: "{e}"\n' for i, e in enumerate(exprs))
    return f"compute grow:\n  expr:\n{fields}\nworkflow w:\n  entry: grow\n  grow -> done\n"


GROWING = {
    "doubling reduce": (
        [f"reduce({_count(40)}, [0], (acc, x) => [acc, acc])"],
        "VALUE_TOO_LARGE: v0: a value grew past 1,000,000 elements and characters",
    ),
    "string repeat": (
        [f"reduce({_count(40)}, 'ab', (s, x) => s + s)"],
        "VALUE_TOO_LARGE: v0: a value grew past 1,000,000 elements and characters",
    ),
    "string concat": (
        [f"reduce({_count(40)}, 'ab', (s, x) => concat(s, s, s))"],
        "VALUE_TOO_LARGE: v0: a value grew past 1,000,000 elements and characters",
    ),
    "nested map blow-up": (
        [f"reduce({_count(12)}, [1], (acc, x) => map({_count(10)}, i => acc))"],
        "VALUE_TOO_LARGE: v0: a value grew past 1,000,000 elements and characters",
    ),
    "big output": (
        [f"reduce({_count(19)}, 'x', (s, i) => s + s)"] * 2,
        "OUTPUT_TOO_LARGE: its output is 1,048,593 bytes as JSON, more than the 1,000,000",
    ),
}  # fmt: skip
"""Each compute node's expressions, and the start of the failure ``runs show`` gives it."""


@pytest.mark.parametrize("case", GROWING.values(), ids=GROWING.keys())
def test_a_compute_past_its_bounds_fails_the_run_with_one_line(
    tmp_path: Path, store: list[str], case: tuple[list[str], str]
) -> None:
    """Before, a doubling ``reduce`` took gigabytes and minutes and left the run ``running``;
    a large output was kept, several times over, in the store."""
    exprs, said = case
    (tmp_path / "flow.iter").write_text(_compute_flow(*exprs))
    done = pi("graph", "run", "flow.iter", *store, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    (line,) = done.stdout.splitlines()
    assert line.startswith("Run run-") and " failed. node grow failed: " in line
    assert said.split(": ", 1)[1] in line
    (run,) = pi_json("runs", "list", *store, cwd=tmp_path)
    assert run["status"] == "failed"
    shown = pi("runs", "show", run["id"], *store, cwd=tmp_path).stdout
    assert f"  ✗ grow#1 (compute) {said}" in shown
    if not store:
        assert (tmp_path / ".pi-recipes" / "state.db").stat().st_size < 3_000_000


def test_a_tool_out_of_memory_fails_the_recipe_run(tmp_path: Path, store: list[str]) -> None:
    """Before, the ``MemoryError`` was handed to the model as the tool's error, and the run went
    on (and finished) in a process out of memory; the command printed a traceback when it
    stopped one."""
    done = pi("run", f"{BOUNDS}:hog", "go", *store, cwd=tmp_path)
    assert done.returncode == 1
    (run,) = pi_json("runs", "list", *store, cwd=tmp_path)
    assert run["status"] == "failed"
    (line,) = done.stderr.splitlines()
    assert line.startswith("pi-recipes: error: the process ran out of memory (MemoryError); ")
    assert line.endswith(
        f"runs show {run['id']}" + (f" --store {quote_arg(store[1])}" if store else "")
    )
    shown = pi("runs", "show", run["id"], *store, cwd=tmp_path).stdout
    assert "✗ take_memory (m1): The run failed on this call: the process ran out of memory" in shown
    assert "It went on." not in done.stdout + shown


def test_a_tool_out_of_memory_fails_the_graph_run(tmp_path: Path, store: list[str]) -> None:
    """The same in a graph's agent node: the agent read the error and the node finished."""
    (tmp_path / "hog.py").write_text(BOUNDS.read_text() + "\n\nrecipe = hog\n")
    (tmp_path / "flow.iter").write_text(
        "agent work:\n  recipe: ./hog.py\n\nworkflow w:\n  entry: work\n  work -> done\n"
    )
    done = pi("graph", "run", "flow.iter", *store, cwd=tmp_path)
    assert done.returncode == 1
    (run,) = pi_json("runs", "list", *store, cwd=tmp_path)
    assert run["status"] == "failed"
    (line,) = done.stderr.splitlines()
    assert line.startswith("pi-recipes: error: the process ran out of memory (MemoryError); ")
    shown = pi("runs", "show", run["id"], *store, cwd=tmp_path).stdout
    assert "✗ work#1 (agent) MemoryError: MemoryError: the process ran out of memory" in shown
    assert "It went on." not in done.stdout + shown


def _stopped_while_spinning(
    tmp_path: Path, sent: signal.Signals, *args: str
) -> subprocess.CompletedProcess[str]:
    """Run ``pi-recipes ARGS``; once its tool computes (``started`` exists), send ``sent``
    once; return how the command ended (bounded: a command still running 30 s after the
    signal is killed, and the test fails)."""
    process = subprocess.Popen(
        [PI_RECIPES, *args], cwd=tmp_path, env=cli_env(), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "started").exists():
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the tool never started"
            time.sleep(0.05)
        process.send_signal(sent)
        out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def _stopped_line(err: str, run_id: str, name: str, store: list[str]) -> None:
    (line,) = err.splitlines()
    assert line.startswith(f"pi-recipes: stopped by {name}: run {run_id} was interrupted: ")
    assert line.endswith(
        f"runs retry {run_id}" + (f" --store {quote_arg(store[1])}" if store else "")
    )


@pytest.mark.parametrize("sent", [signal.SIGTERM, signal.SIGINT])
def test_a_recipe_run_computing_in_a_tool_stops_on_the_first_signal(
    tmp_path: Path, store: list[str], sent: signal.Signals
) -> None:
    """A tool computing in a loop that never awaits kept the event loop from taking SIGTERM:
    the command went on until the tool ended (only SIGKILL stopped it, leaving the run
    ``running``)."""
    done = _stopped_while_spinning(
        tmp_path, sent, "run", f"{BOUNDS}:spin", "go", "--no-interactive", *store
    )
    assert done.returncode == 128 + sent, done.stderr
    (run,) = pi_json("runs", "list", *store, cwd=tmp_path)
    assert run["status"] == "failed_resumable"
    _stopped_line(done.stderr, run["id"], "SIGTERM" if sent == signal.SIGTERM else "Ctrl-C", store)
    shown = pi_json("runs", "show", run["id"], *store, cwd=tmp_path)
    assert shown["error"].startswith("interrupted before the leg finished (Ctrl-C, SIGTERM")
    retried = pi("runs", "retry", run["id"], *store, cwd=tmp_path)
    assert retried.returncode == 0, retried.stderr
    assert f"Run {run['id']} finished." in retried.stdout
    assert pi_json("runs", "show", run["id"], *store, cwd=tmp_path)["status"] == "finished"


SPINNING_FLOW = """\
schema result_out:
  result: string

agent work:
  recipe: ./spin.py
  output: result_out

compute after:
  expr:
    said: "'after ' + outputs.work.result"

workflow w:
  entry: work
  work -> after
  after -> done
"""


def test_a_graph_run_computing_in_a_node_stops_on_sigterm(tmp_path: Path, store: list[str]) -> None:
    """The same, in a graph: an agent node whose tool computes without awaiting."""
    (tmp_path / "spin.py").write_text(BOUNDS.read_text() + "\n\nrecipe = spin\n")
    (tmp_path / "flow.iter").write_text(SPINNING_FLOW)
    done = _stopped_while_spinning(tmp_path, signal.SIGTERM, "graph", "run", "flow.iter", *store)
    assert done.returncode == 143, done.stderr
    (run,) = pi_json("runs", "list", *store, cwd=tmp_path)
    assert run["status"] == "failed_resumable"
    _stopped_line(done.stderr, run["id"], "SIGTERM", store)
    retried = pi("runs", "retry", run["id"], *store, cwd=tmp_path)
    assert retried.returncode == 0, retried.stderr
    assert f"Run {run['id']} finished." in retried.stdout
    assert "after done" in retried.stdout


def test_a_command_that_will_not_stop_ends_within_the_bound(tmp_path: Path) -> None:
    """A tool that swallows even the stop raised in it goes on computing: the command ends at
    once 20 s after the signal, saying so, and ``runs recover`` frees the run it could not
    record."""
    done = _stopped_while_spinning(
        tmp_path, signal.SIGTERM, "run", f"{BOUNDS}:stubborn", "go", "--no-interactive"
    )
    assert done.returncode == 143
    assert done.stderr.splitlines()[-1] == (
        "pi-recipes: stopped by SIGTERM: the command did not stop within 20 s and was ended; "
        "a run it drove and could not record is found and freed by: pi-recipes runs recover"
    )
    (run,) = pi_json("runs", "list", cwd=tmp_path)
    assert run["status"] == "running"
    marked = pi("runs", "recover", "--older-than", "0", cwd=tmp_path)
    assert marked.returncode == 0 and "Marked 1 stranded run(s)" in marked.stdout
    assert pi_json("runs", "show", run["id"], cwd=tmp_path)["status"] == "failed_resumable"
