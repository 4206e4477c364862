"""Graph runs through the command line, each step a real process: pause in one, answer and
resume in another; kill -9 in the middle of a node, then recover and retry elsewhere."""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import time
from pathlib import Path

import pexpect
import pytest

from tests.hosts.cli_helpers import PI_RECIPES, cli_env, only_run_id, pi, pi_json
from tests.recipes.graph.async_flows import DRAFT, flow_of, write_demo
from tests.recipes.graph.flows import ASKING_BESIDE_FLAKY, ASKING_FLOW, turns, write_flow

ENTER = "\r"


def test_an_ask_inside_a_node_answered_from_other_processes(tmp_path: Path) -> None:
    write_flow(tmp_path, ASKING_FLOW, writer=True)
    started = pi("graph", "run", "flow.iter", cwd=tmp_path)
    assert started.returncode == 0, started.stderr
    run_id = only_run_id(tmp_path)
    assert f"runs answer {run_id} int-draft.1.call_pick" in started.stdout
    assert "Which change leads v2?" in started.stdout
    (listed,) = pi_json("runs", "list", cwd=tmp_path)
    assert (listed["kind"], listed["status"]) == ("graph", "paused_waiting_human")
    pending = pi_json("runs", "pending", run_id, cwd=tmp_path)
    assert [p["node_id"] for p in pending] == ["draft"]

    answered = pi("runs", "answer", run_id, "int-draft.1.call_pick", "Safety", "--resume",
                  cwd=tmp_path)  # fmt: skip
    assert answered.returncode == 0, answered.stderr
    assert "int-approve.1: Approve the notes?" in answered.stdout
    entries = tmp_path / "entries.json"
    entries.write_text(json.dumps([{"interruptId": "int-approve.1", "status": "resolved",
                                    "payload": {"approved": True}}]))  # fmt: skip
    resumed = pi("runs", "resume", run_id, "--entries", str(entries), cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert f"Run {run_id} finished." in resumed.stdout
    assert "LEAD: ANSWER: SAFETY" in resumed.stdout
    assert turns(tmp_path) == ["turn 1", "tool asked", "turn 2"], "the node was not re-run"

    shown = pi("runs", "show", run_id, cwd=tmp_path)
    assert shown.returncode == 0
    lines = shown.stdout.splitlines()
    assert lines[0] == f"{run_id}  finished  graph  agent=release"  # no model: nodes have theirs
    path = lines[lines.index("path:") + 1 :][:3]
    assert path[0].startswith('  ✓ draft#1 (agent) {"draft":"Lead: Answer: safety')
    assert path[1] == '  ✓ approve#1 (human) {"approved":true,"feedback":""}'
    assert path[2].startswith('  ✓ publish#1 (compute) {"notes":"LEAD: ANSWER: SAFETY')
    again = pi("runs", "retry", run_id, cwd=tmp_path)
    assert again.returncode == 3 and "only a failed_resumable run" in again.stderr


def test_a_question_parked_beside_a_failed_branch_is_answered_then_retried(
    tmp_path: Path,
) -> None:
    """One branch's agent asks while its sibling fails. Before, ``runs show`` said the run
    waited for the question, ``runs answer`` refused its id as unknown, and ``runs retry``
    started the agent over, running its tool again."""
    write_flow(tmp_path, ASKING_BESIDE_FLAKY, writer=True)
    failed = pi("graph", "run", "flow.iter", "--no-interactive", cwd=tmp_path)
    assert failed.returncode == 1 and "failed_resumable" in failed.stdout, failed.stderr
    run_id = only_run_id(tmp_path)
    shown = pi("runs", "show", run_id, cwd=tmp_path).stdout
    assert "  … draft#1 (agent) [split>draft] waiting for int-draft.1.call_pick" in shown
    assert "  int-draft.1.call_pick: Which change leads v2? [pending]" in shown
    answered = pi("runs", "answer", run_id, "int-draft.1.call_pick", "safety", cwd=tmp_path)
    assert answered.returncode == 0, answered.stderr
    said = answered.stdout.splitlines()
    assert said[0] == f"Answered int-draft.1.call_pick of {run_id}."
    assert said[1].startswith("The run is failed_resumable: it continues, with this answer, ")
    assert said[1].endswith(f"pi-recipes runs retry {run_id}") and len(said) == 2
    (tmp_path / "fixed").touch()
    done = pi("runs", "retry", run_id, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"Run {run_id} finished." in done.stdout
    assert turns(tmp_path) == ["turn 1", "tool asked", "turn 2"], "the agent went on, not over"
    shown = pi("runs", "show", run_id, cwd=tmp_path).stdout
    assert '  ✓ draft#1 (agent) [split>draft] {"draft":"Lead: Answer: safety' in shown


def test_launch_values_are_refused_before_the_run_starts(tmp_path: Path) -> None:
    flow = ASKING_FLOW.replace("schema draft_out:", 'vars:\n  tone: string [enum: "dry", '
                               '"warm"] = "dry"\n\nschema draft_out:')  # fmt: skip
    write_flow(tmp_path, flow, writer=True)
    done = pi("graph", "run", "flow.iter", "--var", "tone=loud", cwd=tmp_path)
    assert done.returncode == 2
    assert "[C126]: var `tone`: 'loud' is not one of 'dry', 'warm'" in done.stderr
    twice = pi("graph", "run", "flow.iter", "--var", "tone=dry", "--var", "tone=warm",
               cwd=tmp_path)  # fmt: skip
    assert twice.returncode == 2  # the last one won, silently
    assert "[C109]: --var tone is given twice ('dry', then 'warm')" in twice.stderr
    assert not (tmp_path / ".pi-recipes").exists() or pi_json("runs", "list", cwd=tmp_path) == []


KILLABLE = """\
schema count_out:
  n: int

tool count:
  command: `echo x >> count.log && echo "{\\"n\\": $(wc -l < count.log)}"`
  output: count_out

tool slow:
  command: |
    if test -f second; then echo '{"slow": "done"}'
    else touch second; echo started > gate.fifo; sleep 30; fi

compute after:
  expr:
    total: "outputs.count.n"

workflow w:
  entry: count
  count -> slow
  slow -> after
  after -> done
"""


def _wait_for_line(fifo: Path, within: float) -> str:
    """The first line written to ``fifo``, waiting at most ``within`` seconds (opened for
    reading and writing, so it neither blocks nor reads as closed before a writer comes)."""
    fd = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
    try:
        deadline = time.monotonic() + within
        data = b""
        while b"\n" not in data:
            left = deadline - time.monotonic()
            assert left > 0, "the node never started"
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                data += os.read(fd, 100)
        return data.decode().strip()
    finally:
        os.close(fd)


def _run_until_gate(
    tmp_path: Path, flow: str, *args: str, writer: bool = False, stderr: int = subprocess.DEVNULL
) -> subprocess.Popen[bytes]:
    """``graph run`` of ``flow`` in a process group of its own, returned once a node of it
    wrote ``started`` to ``gate.fifo`` (killed, failing the test, if none did within 30 s).
    Its stderr goes to ``stderr`` (dropped unless a test reads it)."""
    write_flow(tmp_path, flow, writer=writer)
    os.mkfifo(tmp_path / "gate.fifo")
    process = subprocess.Popen(
        [PI_RECIPES, "graph", "run", "flow.iter", *args], cwd=tmp_path, env=cli_env(),
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr,
        start_new_session=True,
    )  # fmt: skip
    try:
        assert _wait_for_line(tmp_path / "gate.fifo", within=30) == "started"
    except BaseException:
        _kill(process)
        raise
    return process


def _kill(process: subprocess.Popen[bytes]) -> None:
    """The machine dies: the engine and the commands of its nodes."""
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=30)


FLAKY_TOOL = """\
tool count:
  command: `echo '{"n": 1}'`

tool flaky:
  command: `test -f fixed && echo '{"ok": true}' || { echo 'not yet' >&2; exit 1; }`

workflow w:
  entry: count
  count -> flaky
  flaky -> done
"""


def test_a_retry_that_fails_again_exits_1_and_one_that_finishes_0(tmp_path: Path) -> None:
    """``runs retry`` of a graph run exited 0 whatever the run did, so ``runs retry RUN &&
    deploy`` deployed after a retry that failed again; and a failed run printed the last
    finished node's output first, as if it were the run's."""
    write_flow(tmp_path, FLAKY_TOOL)
    failed = pi("graph", "run", "flow.iter", "--no-interactive", cwd=tmp_path)
    assert failed.returncode == 1
    run_id = only_run_id(tmp_path)
    assert failed.stdout.splitlines()[0].startswith(f"Run {run_id} failed_resumable. node flaky")
    again = pi("runs", "retry", run_id, cwd=tmp_path)
    assert again.returncode == 1 and "failed_resumable" in again.stdout, again.stderr
    (tmp_path / "fixed").touch()
    done = pi("runs", "retry", run_id, cwd=tmp_path)
    assert done.returncode == 0 and f"Run {run_id} finished." in done.stdout, done.stderr


APPROVE_THEN_WORK = """\
schema approval_out:
  approved: bool
  feedback: string

human approve:
  instructions: "Approve?"
  output: approval_out

tool work:
  command: `echo started > gate.fifo; sleep 30; echo '{"done": true}'`

workflow w:
  entry: approve
  approve -> work
  work -> done
"""


def test_a_resume_with_entries_that_another_process_beat_exits_3(tmp_path: Path) -> None:
    """The loser of two resumes printed 'Run … running.' and exited 0, as if it had resumed
    the run, where a plain ``runs resume`` says another process continued it (exit 3)."""
    write_flow(tmp_path, APPROVE_THEN_WORK)
    assert pi("graph", "run", "flow.iter", "--no-interactive", cwd=tmp_path).returncode == 0
    run_id = only_run_id(tmp_path)
    os.mkfifo(tmp_path / "gate.fifo")
    first = subprocess.Popen(
        [PI_RECIPES, "runs", "answer", run_id, "int-approve.1", '{"approved": true}', "--resume"],
        cwd=tmp_path, env=cli_env(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        assert _wait_for_line(tmp_path / "gate.fifo", within=30) == "started"
        entries = tmp_path / "entries.json"
        entries.write_text(json.dumps([{"interruptId": "int-approve.1", "status": "resolved",
                                        "payload": {"approved": True}}]))  # fmt: skip
        late = pi("runs", "resume", run_id, "--entries", str(entries), cwd=tmp_path)
        assert late.returncode == 3, (late.stdout, late.stderr)
        assert late.stderr.startswith(
            f"pi-recipes: conflict: run {run_id} was not resumed: another process continued it"
        )
        again = pi("runs", "answer", run_id, "int-approve.1", '{"approved": true}', "--resume",
                   cwd=tmp_path)  # fmt: skip
        assert again.returncode == 0  # the same answer: a replay, and the run goes on there
        assert again.stdout.splitlines() == [
            f"Already answered identically: int-approve.1 of {run_id}.",
            f"Run {run_id} is running, in another process.",
        ]
    finally:
        _kill(first)


def test_kill_9_during_a_node_then_recover_and_retry_elsewhere(tmp_path: Path) -> None:
    _kill(_run_until_gate(tmp_path, KILLABLE))
    run_id = only_run_id(tmp_path)
    assert pi_json("runs", "show", run_id, cwd=tmp_path)["status"] == "running"
    marked = pi("runs", "recover", "--older-than", "0", cwd=tmp_path)
    assert marked.returncode == 0 and "Marked 1 stranded run(s)" in marked.stdout
    done = pi("runs", "retry", run_id, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"Run {run_id} finished." in done.stdout
    assert (tmp_path / "count.log").read_text() == "x\n", "the finished node did not run again"
    shown = pi("runs", "show", run_id, cwd=tmp_path).stdout
    assert '  ✓ count#1 (tool) {"n":1}' in shown
    assert '  ✓ slow#1 (tool) {"slow":"done"}' in shown and "count#2" not in shown


def _group_alive(pgid: int) -> bool:
    """Whether a live process (not a zombie) is left in process group ``pgid``."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        if fields[0] != "Z" and int(fields[2]) == pgid:
            return True
    return False


def test_a_node_command_dies_with_its_engine_so_a_retry_never_runs_beside_it(
    tmp_path: Path,
) -> None:
    """A node's command runs in a session of its own (Ctrl-C reaches the engine, which stops
    it). When the engine alone was killed, the command went on: ``runs retry`` then ran a
    second copy beside the first, which finished its work later all the same."""
    flow = KILLABLE.replace("touch second;", "touch second; echo $$ > slow.pid;").replace(
        "sleep 30;", "sleep 30; echo late >> late.log;"
    )
    process = _run_until_gate(tmp_path, flow)
    try:
        os.kill(process.pid, signal.SIGKILL)  # the engine only: not its group, not the node's
        process.wait(timeout=30)
        group = int((tmp_path / "slow.pid").read_text())
        deadline = time.monotonic() + 10
        while _group_alive(group) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _group_alive(group), "the node's command outlived its engine"
    finally:
        with contextlib.suppress(ProcessLookupError, ValueError, OSError):
            os.killpg(int((tmp_path / "slow.pid").read_text()), signal.SIGKILL)
    run_id = only_run_id(tmp_path)
    assert pi("runs", "recover", "--older-than", "0", cwd=tmp_path).returncode == 0
    done = pi("runs", "retry", run_id, cwd=tmp_path)
    assert done.returncode == 0 and f"Run {run_id} finished." in done.stdout, done.stderr
    assert not (tmp_path / "late.log").exists()


@pytest.mark.parametrize("sent", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_or_sigterm_during_a_node_leaves_the_run_to_retry(
    tmp_path: Path, sent: signal.Signals
) -> None:
    """A graph run stopped by Ctrl-C or SIGTERM used to stay ``running`` with no process
    behind it (``runs retry`` refused it); it is now ``failed_resumable``, as a recipe run is,
    and a retry goes on from its last recorded node. One line says so (it said nothing)."""
    process = _run_until_gate(tmp_path, KILLABLE, stderr=subprocess.PIPE)
    try:
        os.killpg(process.pid, sent)  # the terminal's Ctrl-C reaches the whole group
        _, said = process.communicate(timeout=30)
        assert process.returncode == 128 + sent
    finally:
        if process.poll() is None:
            _kill(process)
    run_id = only_run_id(tmp_path)
    name = "Ctrl-C" if sent == signal.SIGINT else "SIGTERM"
    (line,) = said.decode().splitlines()
    assert line.startswith(f"pi-recipes: stopped by {name}: run {run_id} was interrupted: it is ")
    assert line.endswith(f"failed_resumable; continue it with: pi-recipes runs retry {run_id}") or (
        line.endswith(f"/pi-recipes runs retry {run_id}")
    )
    shown = pi_json("runs", "show", run_id, cwd=tmp_path)
    assert shown["status"] == "failed_resumable"
    assert shown["error"].startswith("interrupted before the leg finished (Ctrl-C, SIGTERM")
    done = pi("runs", "retry", run_id, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"Run {run_id} finished." in done.stdout
    assert (tmp_path / "count.log").read_text() == "x\n", "the finished node did not run again"


PARKED_BESIDE_KILLED = """\
schema draft_out:
  draft: string

router split:
  mode: fan_out_all

agent draft:
  recipe: ./writer.py
  output: draft_out

tool settle:
  command: |
    until grep -q 'tool asked' turns.log 2>/dev/null; do sleep 0.05; done
    sleep 1; echo '{"settled": true}'

tool slow:
  command: |
    if test -f second; then echo '{"slow": "done"}'
    else touch second; echo started > gate.fifo; sleep 30; fi

workflow fan:
  entry: split
  split -> draft
  split -> settle
  settle -> slow
  draft -> done
  slow -> done
"""
"""``draft``'s agent asks and parks; a second later its sibling's ``settle`` ends (a write of
the checkpoint, the parked agent in it), then ``slow`` runs until the process is killed."""


def test_a_process_killed_beside_a_parked_branch_keeps_its_question(tmp_path: Path) -> None:
    """The questions of a branch parked in a leg are stored at the leg's end; a sibling's
    node that ends first writes the checkpoint. A process killed in between used to leave a
    parked agent whose question was never stored, so the retry ran the agent over, tool and
    all; the question is now kept in the checkpoint and stored by the next leg."""
    _kill(_run_until_gate(tmp_path, PARKED_BESIDE_KILLED, "--no-interactive", writer=True))
    run_id = only_run_id(tmp_path)
    assert pi_json("runs", "pending", run_id, cwd=tmp_path) == [], "stored only at the leg's end"
    assert (
        "  … draft#1 (agent) [split>draft] asked int-draft.1.call_pick: answerable once the run "
        "pauses (if its process died, a retry)" in pi("runs", "show", run_id, cwd=tmp_path).stdout
    )
    assert turns(tmp_path) == ["turn 1", "tool asked"]
    assert pi("runs", "recover", "--older-than", "0", cwd=tmp_path).returncode == 0

    paused = pi("runs", "retry", run_id, cwd=tmp_path)
    assert paused.returncode == 0, paused.stderr
    assert f"runs answer {run_id} int-draft.1.call_pick" in paused.stdout
    assert turns(tmp_path) == ["turn 1", "tool asked"], "the parked agent did not run again"
    done = pi("runs", "answer", run_id, "int-draft.1.call_pick", "Safety", "--resume",
              cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"Run {run_id} finished." in done.stdout
    assert turns(tmp_path) == ["turn 1", "tool asked", "turn 2"]
    shown = pi("runs", "show", run_id, cwd=tmp_path).stdout
    assert '  ✓ draft#1 (agent) [split>draft] {"draft":"Lead: Answer: safety' in shown
    assert "draft#2" not in shown


def test_a_terminal_run_asks_in_dialogs(tmp_path: Path) -> None:
    write_flow(tmp_path, ASKING_FLOW, writer=True)
    child = pexpect.spawn(PI_RECIPES, ["graph", "run", "flow.iter"], cwd=str(tmp_path),
                          env=cli_env(), encoding="utf-8", timeout=20,
                          dimensions=(40, 120))  # fmt: skip
    child.expect("Which change leads v2")
    child.send("\x1b[B" + ENTER)  # speed -> safety
    child.expect("Approve the notes")
    child.send(ENTER)  # Approve
    child.expect("LEAD: ANSWER: SAFETY")
    child.expect("finished")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


SERVER = os.environ.get("PI_RECIPES_TEST_POSTGRES")


@pytest.mark.skipif(not SERVER, reason="set PI_RECIPES_TEST_POSTGRES to run PostgreSQL tests")
def test_a_graph_run_on_postgresql_across_processes(tmp_path: Path) -> None:
    import uuid
    from urllib.parse import quote

    import psycopg

    assert SERVER is not None
    schema = f"pi_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(SERVER, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
        try:
            sep = "&" if "?" in SERVER else "?"
            url = f"{SERVER}{sep}options={quote(f'-csearch_path={schema}')}"
            write_flow(tmp_path, ASKING_FLOW, writer=True)
            store = ["--store", url]
            assert pi("graph", "run", "flow.iter", *store, cwd=tmp_path).returncode == 0
            (run,) = pi_json("runs", "list", *store, cwd=tmp_path)
            first = pi("runs", "answer", run["id"], "int-draft.1.call_pick", "speed",
                       "--resume", *store, cwd=tmp_path)  # fmt: skip
            assert first.returncode == 0, first.stderr
            last = pi("runs", "answer", run["id"], "int-approve.1", '{"approved": true}',
                      "--resume", *store, cwd=tmp_path)  # fmt: skip
            assert last.returncode == 0 and f"Run {run['id']} finished." in last.stdout
        finally:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


def test_ctrl_c_in_a_dialog_cancels_the_run(tmp_path: Path) -> None:
    write_flow(tmp_path, ASKING_FLOW, writer=True)
    child = pexpect.spawn(PI_RECIPES, ["graph", "run", "flow.iter"], cwd=str(tmp_path),
                          env=cli_env(), encoding="utf-8", timeout=20,
                          dimensions=(40, 120))  # fmt: skip
    child.expect("Which change leads v2")
    child.sendcontrol("c")
    child.expect("cancelled")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    (run,) = pi_json("runs", "list", cwd=tmp_path)
    assert run["status"] == "cancelled"


def test_answering_a_run_that_waits_for_a_retry_says_how_to_continue_it(tmp_path: Path) -> None:
    """An await node timed out: the run is failed_resumable. Before, ``runs answer --resume``
    said only "Queued" and left it there."""
    nodes = DRAFT + '\nawait_answers gate:\n  from: draft\n  timeout: "300ms"\n'
    write_demo(tmp_path, flow_of(nodes, "  draft -> gate\n  gate -> done\n"))
    failed = pi("graph", "run", "flow.iter", "--no-interactive", cwd=tmp_path)
    assert failed.returncode != 0 and "runs retry" in failed.stdout + failed.stderr
    run_id = only_run_id(tmp_path)
    answered = pi("runs", "answer", run_id, f"{run_id}_draft_async_1", "Pipette", "--resume",
                  cwd=tmp_path)  # fmt: skip
    assert answered.returncode == 0, answered.stderr
    assert (
        "Queued: the agent reads it when the run continues. The run is failed_resumable "
        "(--resume does not continue it): " in answered.stdout
    )
    assert f"pi-recipes runs retry {run_id}\n" in answered.stdout
    assert pi_json("runs", "show", run_id, cwd=tmp_path)["status"] == "failed_resumable"


def test_graph_run_shows_the_workflows_warnings(tmp_path: Path) -> None:
    nodes = DRAFT + '\nawait_answers gate:\n  from: nowhere\n  timeout: "1s"\n'
    write_demo(tmp_path, flow_of(nodes, "  draft -> gate\n  gate -> done\n"))
    ran = pi("graph", "run", "flow.iter", "--no-interactive", cwd=tmp_path)
    assert "warning [C242]: await_answers `gate` waits on `nowhere`" in ran.stderr, ran.stderr
    assert ran.returncode == 1, "the warning does not stop the run; the gate fails at its timeout"
    assert "`from: nowhere` is not a declared node (C242)" in ran.stdout + ran.stderr
