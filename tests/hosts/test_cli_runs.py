"""The command line across processes: pause in one, answer and resume in others."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.hosts.cli_helpers import OPERATOR, PI_RECIPES, RELEASE, cli_env, only_run_id, pi, pi_json
from tests.recipes.runs.conftest import CUT_SHORT


def test_no_interactive_pauses_prints_commands_and_exits_0(tmp_path: Path) -> None:
    done = pi("run", RELEASE, "Release v1.4.0", "--no-interactive", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    run_id = only_run_id(tmp_path)
    assert f"Run {run_id} paused, waiting for 1 answer" in done.stdout
    assert "int-call_channel: Where should v1.4.0 be published?" in done.stdout
    assert f"pi-recipes runs answer {run_id} int-call_channel" in done.stdout
    assert (tmp_path / ".pi-recipes" / "state.db").exists()


def test_without_a_terminal_run_never_waits_for_input(tmp_path: Path) -> None:
    done = pi("run", RELEASE, "Release v1.4.0", cwd=tmp_path)  # stdin is /dev/null
    assert done.returncode == 0 and "paused" in done.stdout


def test_a_cancelled_run_says_so_once_and_refuses_a_later_answer(tmp_path: Path) -> None:
    pi("run", RELEASE, "Release v2.0.0", "--no-interactive", cwd=tmp_path)
    run_id = only_run_id(tmp_path)
    cancelled = pi("runs", "cancel", run_id, cwd=tmp_path)
    assert cancelled.returncode == 0, cancelled.stderr
    assert cancelled.stdout.splitlines()[-1] == f"Run {run_id} cancelled."
    late = pi("runs", "answer", run_id, "int-call_channel", "beta", "--resume", cwd=tmp_path)
    assert late.returncode == 3
    declined = pi("runs", "answer", run_id, "int-call_channel", "--cancel", cwd=tmp_path)
    assert declined.returncode == 3, declined.stdout  # the cancel closed it: no one declined
    assert "was cancelled before this answer; nothing was stored" in declined.stderr
    assert f"run {run_id} was cancelled before this answer; nothing was stored" in late.stderr


def test_answer_and_resume_in_other_processes_to_the_end(tmp_path: Path) -> None:
    pi("run", RELEASE, "Release v2.0.0", "--no-interactive", cwd=tmp_path)
    run_id = only_run_id(tmp_path)
    answered = pi("runs", "answer", run_id, "int-call_channel", '{"answer": "beta"}', cwd=tmp_path)
    assert answered.returncode == 0 and "Answered int-call_channel" in answered.stdout
    assert pi_json("runs", "show", run_id, cwd=tmp_path)["status"] == "paused_waiting_human"

    resumed = pi("runs", "resume", run_id, cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert "int-call_publish: Publish v2.0.0 to beta?" in resumed.stdout
    worded = pi("runs", "answer", run_id, "int-call_publish", "yes", cwd=tmp_path)
    assert worded.returncode == 6  # it spoke of an "answer" key no one typed
    assert worded.stderr.startswith(
        "pi-recipes: invalid payload: int-call_publish is an approval: answer "
        "'{\"approved\": true}' or '{\"approved\": false, \"feedback\": \"...\"}'"
    )

    entries = tmp_path / "answers.json"
    entries.write_text(
        json.dumps(
            [
                {
                    "interruptId": "int-call_publish",
                    "status": "resolved",
                    "payload": {"approved": True},
                }
            ]
        )
    )
    final = pi("runs", "resume", run_id, "--entries", str(entries), "--by", "ada", cwd=tmp_path)
    assert final.returncode == 0, final.stderr
    assert "Published v2.0.0. Approved." in final.stdout
    shown = pi_json("runs", "show", run_id, cwd=tmp_path)
    assert shown["status"] == "finished"
    assert [i["answer"]["answered_by"] for i in shown["interactions"]] == [OPERATOR, "ada"]
    approval = shown["interactions"][1]["descriptor"]  # whole, as the pause record's wire form
    assert (approval["message"], approval["allowOther"]) == ("Publish v2.0.0 to beta?", False)
    assert approval["responseSchema"]["required"] == ["approved"]
    assert approval["id"] == "int-call_publish" and approval["expiresAt"]
    text = pi("runs", "show", run_id, cwd=tmp_path).stdout
    assert "int-call_publish: Publish v2.0.0 to beta? [answered {\"approved\": true} by ada" in text
    again = pi("runs", "resume", run_id, "--entries", str(entries), cwd=tmp_path)
    assert again.returncode == 0, "an identical replay is safe"


def test_answer_with_resume_continues_at_once(tmp_path: Path) -> None:
    pi("run", RELEASE, "Release v3", "--no-interactive", cwd=tmp_path)
    run_id = only_run_id(tmp_path)
    done = pi("runs", "answer", run_id, "int-call_channel", "--cancel", "--resume", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Declined int-call_channel" in done.stdout  # --cancel says what it did
    assert "int-call_publish: Publish v3 to stable?" in done.stdout


def test_an_answer_cut_at_the_output_limit_is_said_wherever_the_run_is_shown(
    tmp_path: Path,
) -> None:
    pi("run", CUT_SHORT, "Write the report", "--no-interactive", cwd=tmp_path)
    run_id = only_run_id(tmp_path)
    done = pi("runs", "answer", run_id, "int-w1", '{"approved": true}', "--resume", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-3:] == [
        "The report, part one of three: sales",
        "Warning: The model's last answer stopped at the model's output limit (max_tokens), "
        "so it may be cut short; raise the model's max_tokens or ask for less.",
        f"Run {run_id} finished.",
    ]
    shown = pi("runs", "show", run_id, cwd=tmp_path)
    assert lines[-2] in shown.stdout.splitlines()
    assert "max_tokens" in pi_json("runs", "show", run_id, cwd=tmp_path)["warning"]


@pytest.mark.parametrize(
    ("args", "code", "label"),
    [
        (["int-call_channel", '{"answer": "beta"}'], 3, "conflict"),
        (["int-nope", '{"answer": "beta"}'], 4, "unknown interaction"),
        (["int-call_channel", '{"answer": 5}'], 6, "invalid payload"),
        (["int-call_channel", '{"approved": true}'], 6, "invalid payload"),
        (["int-call_channel", '{"answer": ""}'], 6, "invalid payload"),
        (["int-call_channel"], 2, "usage"),
    ],
)
def test_refused_answers_exit_non_zero_with_the_reason(
    tmp_path: Path, args: list[str], code: int, label: str
) -> None:
    pi("run", RELEASE, "Release v4", "--no-interactive", cwd=tmp_path)
    run_id = only_run_id(tmp_path)
    if code == 3:
        assert (
            pi(
                "runs", "answer", run_id, "int-call_channel", '{"answer": "stable"}', cwd=tmp_path
            ).returncode
            == 0
        )
    done = pi("runs", "answer", run_id, *args, cwd=tmp_path)
    assert done.returncode == code
    assert done.stderr.startswith(f"pi-recipes: {label}: ")


def test_unknown_run_and_expired_interaction(tmp_path: Path) -> None:
    missing = pi("runs", "show", "run-missing", cwd=tmp_path)
    assert missing.returncode == 4 and "unknown run" in missing.stderr
    for resume in ([], ["--resume"]):  # a mistyped run id is named, not its interaction
        typo = pi("runs", "answer", "run-missing", "int-call_channel", "{}", *resume, cwd=tmp_path)
        assert typo.returncode == 4
        assert typo.stderr.startswith("pi-recipes: unknown run: ") and "run-missing" in typo.stderr
    env = cli_env(PI_INTERRUPT_TTL_SECONDS="0.001")
    pi("run", RELEASE, "Release v5", "--no-interactive", cwd=tmp_path, env=env)
    run_id = only_run_id(tmp_path)
    shown = pi("runs", "show", run_id, cwd=tmp_path).stdout.splitlines()
    assert any(line.startswith("  int-call_channel: Where should v5 be published? [expired at ")
               and line.endswith(", unanswered: runs expire settles it]") for line in shown)
    assert "Next:" in shown and "Answer and resume with:" not in shown  # fmt: skip
    assert any(line.startswith("  int-call_channel expired unanswered; settle it") and
               line.endswith(" runs expire") for line in shown)  # fmt: skip
    expired = pi("runs", "answer", run_id, "int-call_channel", '{"answer": "beta"}', cwd=tmp_path)
    assert expired.returncode == 5 and "expired" in expired.stderr
    settled = pi("runs", "expire", cwd=tmp_path)
    assert settled.returncode == 0 and "Publish v5 to stable?" in settled.stdout
    late = pi("runs", "answer", run_id, "int-call_channel", '{"answer": "beta"}', cwd=tmp_path)
    assert late.returncode == 5, late.stderr  # it was a conflict (exit 3), as if answered
    assert "was settled as expired; it can no longer be answered" in late.stderr


def test_eight_processes_answer_at_once_exactly_one_wins(tmp_path: Path) -> None:
    pi("run", RELEASE, "Release v6", "--no-interactive", cwd=tmp_path)
    run_id = only_run_id(tmp_path)
    answers = [f"channel-{n}" for n in range(8)]
    procs = [
        subprocess.Popen(
            [PI_RECIPES, "runs", "answer", run_id, "int-call_channel", json.dumps({"answer": a})],
            cwd=tmp_path, env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL, text=True,
        )
        for a in answers
    ]  # fmt: skip
    outcomes = []
    for proc in procs:
        _, err = proc.communicate(timeout=60)
        outcomes.append((proc.returncode, err))
    winners = [n for n, (code, _) in enumerate(outcomes) if code == 0]
    assert len(winners) == 1, outcomes
    assert all(code == 3 and "conflict" in err for code, err in outcomes if code != 0)
    (stored,) = [
        i
        for i in pi_json("runs", "show", run_id, cwd=tmp_path)["interactions"]
        if i["id"] == "int-call_channel"
    ]
    assert stored["answer"]["payload"] == {"answer": answers[winners[0]]}


PAUSE_AND_HANG = """
import sys, anyio
from interactions.store import open_sqlite_store
from recipes.runs import Runner

async def main():
    async with await open_sqlite_store(sys.argv[1]) as store:
        result = await Runner(store, env={}).start(sys.argv[2], "Release v7")
        print(result.run_id, flush=True)
        await anyio.sleep_forever()

anyio.run(main)
"""


def test_resume_in_another_process_after_kill_9(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    with subprocess.Popen(
        [sys.executable, "-c", PAUSE_AND_HANG, str(db), RELEASE],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
    ) as first:  # fmt: skip
        try:
            assert first.stdout is not None
            run_id = first.stdout.readline().strip()
            assert run_id.startswith("run-"), first.stderr.read() if first.stderr else ""
        finally:
            os.kill(first.pid, signal.SIGKILL)
            first.wait(timeout=30)
    assert first.returncode == -signal.SIGKILL
    store = ["--store", str(db)]
    answered = pi(
        "runs",
        "answer",
        run_id,
        "int-call_channel",
        '{"answer": "nightly"}',
        "--resume",
        *store,
        cwd=tmp_path,
    )
    assert answered.returncode == 0, answered.stderr
    assert "Publish v7 to nightly?" in answered.stdout
    final = pi(
        "runs",
        "answer",
        run_id,
        "int-call_publish",
        '{"approved": true}',
        "--resume",
        *store,
        cwd=tmp_path,
    )
    assert final.returncode == 0 and "Published v7. Approved." in final.stdout


def test_rpc_command_serves_the_protocol(tmp_path: Path) -> None:
    done = pi("rpc", RELEASE, cwd=tmp_path, input='{"type":"get_state","id":"s1"}\nnot json\n')
    assert done.returncode == 0, done.stderr
    state, parse_error = (json.loads(line) for line in done.stdout.splitlines())
    assert state["type"] == "response" and state["id"] == "s1" and state["success"] is True
    assert parse_error["command"] == "parse" and parse_error["success"] is False


def test_pending_question_hint_says_whether_own_answers_are_accepted(tmp_path: Path) -> None:
    done = pi("run", RELEASE, "Release v9", "--no-interactive", cwd=tmp_path)
    assert "      - Stable — every user gets it\n" in done.stdout  # labels, with descriptions
    assert "one of the options (or your own answer)" in done.stdout
    assert """int-call_channel '{"answer": "Stable"}' --resume""" in done.stdout


def test_an_answer_by_label_or_plain_text_records_the_options_value(tmp_path: Path) -> None:
    pi("run", RELEASE, "Release v10", "--no-interactive", cwd=tmp_path)
    run_id = only_run_id(tmp_path)
    done = pi("runs", "answer", run_id, "int-call_channel", "Beta", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    [record] = [i for i in pi_json("runs", "show", run_id, cwd=tmp_path)["interactions"]]
    assert record["answer"]["payload"] == {"answer": "beta"}
    shown = pi("runs", "show", run_id, cwd=tmp_path).stdout
    assert f'[answered {{"answer": "beta"}} by {OPERATOR} via cli]' in shown


def test_piped_output_is_not_rewrapped(tmp_path: Path) -> None:
    env = {k: v for k, v in cli_env().items() if k != "COLUMNS"}  # a pipe: no width to wrap to
    done = pi("run", RELEASE, "Release v11", "--no-interactive", cwd=tmp_path, env=env)
    [hint] = [line for line in done.stdout.splitlines() if "runs answer" in line]
    assert len(hint) > 80 and hint.endswith("--resume")


def test_answer_resume_says_what_is_still_missing(tmp_path: Path) -> None:
    parallel = str(Path(__file__).resolve().parents[1] / "recipes/runs/recipes_for_tests.py")
    pi("run", f"{parallel}:parallel", "pizza", "--no-interactive", cwd=tmp_path)
    run_id = only_run_id(tmp_path)
    done = pi("runs", "answer", run_id, "int-c1", "teal", "--resume", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Not resumed: the run still waits for int-c3." in done.stdout


def test_an_answer_stored_where_the_run_cannot_continue_says_it_is_stored(
    tmp_path: Path,
) -> None:
    """``runs answer --resume`` where the recipe file is gone: the answer is stored, the run
    cannot continue in that process. It used to print only the recipe's error (exit 2), as if
    the answer had been refused; it now says the answer is stored and how to continue."""
    recipe = tmp_path / "release.py"
    recipe.write_text(Path(RELEASE).read_text(encoding="utf-8"), encoding="utf-8")
    pi("run", str(recipe), "Release v5", "--no-interactive", cwd=tmp_path)
    run_id = only_run_id(tmp_path)
    recipe.rename(tmp_path / "elsewhere.py")
    done = pi("runs", "answer", run_id, "int-call_channel", "beta", "--resume", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout.splitlines() == [f"Answered int-call_channel of {run_id}."]
    assert f"the answer is stored, but run {run_id} cannot continue in this process" in (
        done.stderr
    )
    assert "no such recipe file" in done.stderr
    assert done.stderr.rstrip().endswith(f"runs resume {run_id}")
    [record] = [i for i in pi_json("runs", "show", run_id, cwd=tmp_path)["interactions"]
                if i["id"] == "int-call_channel"]  # fmt: skip
    assert record["answer"]["payload"] == {"answer": "beta"}
    (tmp_path / "elsewhere.py").rename(recipe)
    resumed = pi("runs", "resume", run_id, cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert "int-call_publish" in resumed.stdout, "the run went on to its next question"


def test_resume_refuses_a_run_it_cannot_continue_instead_of_showing_it(tmp_path: Path) -> None:
    """``runs resume RUN`` on a run that is not paused used to print the run and exit 0, as if
    it had continued it; it now says why it did not (exit 3) and what would continue it."""
    pi("run", RELEASE, "Release v7", "--no-interactive", cwd=tmp_path)
    run_id = only_run_id(tmp_path)
    waiting = pi("runs", "resume", run_id, cwd=tmp_path)
    assert waiting.returncode == 3 and "still waits for an answer" in waiting.stderr
    assert pi("runs", "cancel", run_id, cwd=tmp_path).returncode == 0
    cancelled = pi("runs", "resume", run_id, cwd=tmp_path)
    assert cancelled.returncode == 3 and cancelled.stdout == ""
    assert f"run {run_id} was not resumed: it is cancelled" in cancelled.stderr

    pi("run", RELEASE, "Release v8", "--auto-approve", cwd=tmp_path)
    finished = next(r["id"] for r in pi_json("runs", "list", cwd=tmp_path) if r["id"] != run_id)
    again = pi("runs", "resume", finished, cwd=tmp_path)
    assert again.returncode == 0 and f"Run {finished} finished." in again.stdout


def test_resume_of_a_run_still_waiting_says_what_is_open_and_how_to_answer(
    tmp_path: Path,
) -> None:
    """``runs resume RUN`` while questions are open used to exit 6 ("invalid payload: ... still
    waits for answers to ['int-c1', ...]") though the user gave no payload; it is refused as
    any resume of a run it cannot continue (exit 3), naming the open questions and the exact
    commands that answer them. Nothing is written."""
    parallel = str(Path(__file__).resolve().parents[1] / "recipes/runs/recipes_for_tests.py")
    store = tmp_path / "elsewhere.db"
    pi("run", f"{parallel}:parallel", "pizza", "--no-interactive", "--store", str(store),
       cwd=tmp_path)  # fmt: skip
    (run,) = pi_json("runs", "list", "--store", str(store), cwd=tmp_path)
    run_id = run["id"]
    refused = pi("runs", "resume", run_id, "--store", str(store), cwd=tmp_path)
    assert refused.returncode == 3 and refused.stdout == ""
    lines = refused.stderr.splitlines()
    open_ids = [i["id"] for i in pi_json("runs", "pending", run_id, "--store", str(store),
                                         cwd=tmp_path)]  # fmt: skip
    assert len(open_ids) > 1
    assert lines[0] == (
        f"pi-recipes: conflict: run {run_id} was not resumed: it still waits for answers "
        f"to {', '.join(open_ids)}"
    )
    assert lines[1] == "pi-recipes: answer and resume with:"
    commands = lines[2:]
    assert len(commands) == len(open_ids)
    for command, iid in zip(commands, open_ids, strict=True):
        assert f"pi-recipes runs answer {run_id} {iid} " in command
        assert command.endswith(f"--store {store} --resume")
    after = pi_json("runs", "show", run_id, "--store", str(store), cwd=tmp_path)
    assert after["status"] == "paused_waiting_human" and after["version"] == run["version"]
