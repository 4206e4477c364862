"""The examples run as a user would run them: as scripts, in a fresh process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_ask_channels_example_shows_every_channel() -> None:
    done = subprocess.run(
        [sys.executable, "examples/ask_channels.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].endswith("| Approved.")
    assert "Answer: #33d | Revision requested. Feedback: a darker blue" in lines[2]
    assert "Awaiting user response. (pause the run on int-c3)" in lines[3]
    assert "User interaction is unavailable" in lines[4]


def test_release_example_end_to_end_under_auto_approve(tmp_path: Path) -> None:
    """The README's main job, headless: the auto-approve flag resolves every ask."""
    script = Path(sys.executable).parent / "pi-recipes"
    done = subprocess.run(
        [str(script), "run", str(ROOT / "examples" / "release.py"), "Release v1.0.0"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        env={"PATH": "/usr/bin:/bin", "PI_ASK_USER_AUTO_APPROVE": "1"},
    )
    assert done.returncode == 0, done.stderr
    assert "Published v1.0.0. Approved." in done.stdout
    assert "finished" in done.stdout


def test_release_notes_workflow_pauses_answers_and_publishes(tmp_path: Path) -> None:
    """The graph example on the embedded default: a durable run answered from new processes."""
    script = str(Path(sys.executable).parent / "pi-recipes")
    env = {"PATH": "/usr/bin:/bin"}

    def pi(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([script, *args], cwd=tmp_path, capture_output=True, text=True,
                              timeout=60, stdin=subprocess.DEVNULL, env=env)  # fmt: skip

    flow = str(ROOT / "examples" / "release_notes.iter")
    assert pi("graph", "validate", flow).returncode == 0
    started = pi("graph", "run", flow, "--var", "version=v2.0.0")
    assert started.returncode == 0, started.stderr
    assert "Which change should lead the notes of v2.0.0?" in started.stdout
    run_id = pi("runs", "list").stdout.split("\t")[0]
    asked = pi("runs", "answer", run_id, "int-draft.1.call_highlight", "Clearer errors",
               "--resume")  # fmt: skip
    assert "int-approve.1: Publish these release notes?" in asked.stdout, asked.stderr
    done = pi("runs", "answer", run_id, "int-approve.1", '{"approved": true}', "--resume")
    assert done.returncode == 0, done.stderr
    assert "v2.0.0: Every refusal now says what to do next." in done.stdout
    assert f"Run {run_id} finished." in done.stdout


def test_release_notes_workflow_under_auto_approve(tmp_path: Path) -> None:
    script = Path(sys.executable).parent / "pi-recipes"
    done = subprocess.run(
        [str(script), "graph", "run", str(ROOT / "examples" / "release_notes.iter")],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
        env={"PATH": "/usr/bin:/bin", "PI_ASK_USER_AUTO_APPROVE": "1"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Release notes for dev readers. v1.4.0: Many small fixes." in done.stdout
    assert "finished" in done.stdout


def test_async_questions_workflow_answered_from_another_process(tmp_path: Path) -> None:
    """The async demo of docs/async-questions.md: the run posts two questions and waits at its gate;
    ``runs questions`` lists them and ``runs answer`` answers them from other processes."""
    import queue
    import threading

    script = str(Path(sys.executable).parent / "pi-recipes")
    env = {"PATH": "/usr/bin:/bin"}
    with subprocess.Popen(
        [script, "graph", "run", str(ROOT / "examples" / "async_questions.iter")], cwd=tmp_path,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True,
        env=env,
    ) as running:  # fmt: skip
        lines: queue.Queue[str] = queue.Queue()
        out = running.stdout
        assert out is not None
        threading.Thread(target=lambda: [lines.put(x) for x in out], daemon=True).start()
        try:
            printed = [lines.get(timeout=30) for _ in range(4)]  # the two questions, posted
            assert printed[0].startswith("? draft asks (")
            assert "What is the project called?" in printed[0]
            command = printed[1].split("answer from anywhere: ")[1].split()
            run_id, name = command[3], command[4]

            def pi(*args: str) -> subprocess.CompletedProcess[str]:
                return subprocess.run([script, *args], cwd=tmp_path, capture_output=True,
                                      text=True, timeout=60, stdin=subprocess.DEVNULL,
                                      env=env)  # fmt: skip

            listed = pi("runs", "questions", run_id).stdout
            assert "Q: What is the project called?" in listed and "Q: Which tone?" in listed
            assert pi("runs", "answer", run_id, name, "Pipette").returncode == 0
            tone = pi("runs", "answer", run_id, f"{run_id}_draft_async_2", "friendly")
            assert tone.returncode == 0, tone.stderr
            assert running.wait(timeout=60) == 0
            rest = "".join(lines.get(timeout=5) for _ in range(lines.qsize()))
            assert "# Pipette\n\nA friendly README: install it, use it, test it." in rest
            assert f"Run {run_id} finished." in rest
        finally:
            if running.poll() is None:
                running.kill()


def test_async_questions_workflow_under_auto_approve_never_waits(tmp_path: Path) -> None:
    script = Path(sys.executable).parent / "pi-recipes"
    done = subprocess.run(
        [str(script), "graph", "run", str(ROOT / "examples" / "async_questions.iter")],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
        env={"PATH": "/usr/bin:/bin", "PI_ASK_USER_AUTO_APPROVE": "1"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "# <NAME>\n\nA <TONE> README" in done.stdout, "declined at once: placeholders kept"
    assert "finished" in done.stdout
