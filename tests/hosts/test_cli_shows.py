"""The command line shows what it asks: an approval whole (body and sections), a workflow's
human node with what it was given; a multiple choice answered as people write a list; a
workflow that ends in ``fail`` after an answer exits 1 and says so.

The commands run in this process (``hosts.cli.main``), as the installed command runs them;
crossing processes is what the other CLI tests are about."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from hosts.cli import main
from tests.hosts.cli_helpers import RELEASE

REVIEW = """\
schema draft_out:
  draft: string

schema pick_out:
  files: string[] [enum: "a.log", "b.log", "c, d.log"]

schema approval_out:
  approved: bool
  feedback: string

compute draft:
  output: draft_out
  expr:
    draft: "'Delete a.log and b.log'"

human pick:
  instructions: "Which files go?"
  output: pick_out

human approve:
  instructions: "Approve the cleanup?"
  output: approval_out

workflow cleanup:
  entry: draft
  draft -> pick
  pick -> approve with { draft: "{{outputs.draft.draft}}", files: "{{input.files}}" }
  approve -> done when approved
  approve -> fail
"""


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _run_id(capsys: pytest.CaptureFixture[str]) -> str:
    code, out, _ = _cli(capsys, "runs", "list", "--json")
    assert code == 0
    (run,) = json.loads(out)
    return str(run["id"])


def test_an_approval_is_shown_whole_paused_pending_and_in_show(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _cli(capsys, "run", RELEASE, "Release v1.4.0", "--no-interactive")
    assert code == 0, err
    run_id = _run_id(capsys)
    code, paused, err = _cli(
        capsys, "runs", "answer", run_id, "int-call_channel", "Beta", "--resume"
    )
    assert code == 0, err
    shown = [
        "  int-call_publish: Publish v1.4.0 to beta?",
        "      The build passed and the changelog is ready.",
        "      Changelog:",
        "        - faster resume",
        "        - clearer errors",
    ]
    lines = paused.splitlines()
    at = lines.index(shown[0])
    assert lines[at : at + len(shown)] == shown
    _, pending, _ = _cli(capsys, "runs", "pending")
    assert pending.splitlines()[1 : 1 + len(shown)] == shown
    _, show, _ = _cli(capsys, "runs", "show", run_id)
    assert "\n".join(shown) in show


def test_a_workflow_question_shows_its_input_and_a_list_answers_a_multiple_choice(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (here / "flow.iter").write_text(REVIEW, encoding="utf-8")
    code, out, err = _cli(capsys, "graph", "run", "flow.iter", "--no-interactive")
    assert code == 0, err
    assert "  int-pick.1: Which files go?\n      draft:\n        Delete a.log and b.log\n" in out
    run_id = _run_id(capsys)

    code, _, err = _cli(capsys, "runs", "answer", run_id, "int-pick.1", "  ")
    assert code == 6
    assert "int-pick.1 is a multiple choice and the answer is empty" in err
    assert "or decline it with --cancel" in err
    _, pending, _ = _cli(capsys, "runs", "pending", "--json")
    assert [p["answer"] for p in json.loads(pending)] == [None], "the refusal stored nothing"

    code, out, err = _cli(
        capsys, "runs", "answer", run_id, "int-pick.1", "A.log, c, d.log", "--resume"
    )
    assert code == 0, err
    assert "int-approve.1: Approve the cleanup?" in out
    assert '      files:\n        ["a.log","c, d.log"]' in out
    assert "      draft:\n        Delete a.log and b.log" in out


def test_a_workflow_that_ends_in_fail_after_an_answer_exits_1_and_says_so(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (here / "flow.iter").write_text(REVIEW, encoding="utf-8")
    assert _cli(capsys, "graph", "run", "flow.iter", "--no-interactive")[0] == 0
    run_id = _run_id(capsys)
    assert _cli(capsys, "runs", "answer", run_id, "int-pick.1", "a.log", "--resume")[0] == 0
    code, out, err = _cli(
        capsys, "runs", "answer", run_id, "int-approve.1", '{"approved": false}', "--resume"
    )
    assert code == 1, (out, err)
    assert f"Run {run_id} failed." in out
    assert "will not continue" not in out + err, "it continued: this answer ended it"


def test_an_answer_to_a_run_stopped_before_it_is_still_a_conflict(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (here / "flow.iter").write_text(REVIEW, encoding="utf-8")
    assert _cli(capsys, "graph", "run", "flow.iter", "--no-interactive")[0] == 0
    run_id = _run_id(capsys)
    assert _cli(capsys, "runs", "cancel", run_id)[0] == 0
    code, out, err = _cli(capsys, "runs", "answer", run_id, "int-pick.1", "a.log", "--resume")
    assert code == 3, (out, err)
    assert f"run {run_id} was cancelled before this answer; nothing was stored" in err


def test_run_and_graph_run_print_json_whose_commands_answer_the_run(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _cli(capsys, "run", RELEASE, "Release v1.4.0", "--json")
    assert code == 0, err
    started = json.loads(out)
    assert started["status"] == "paused_waiting_human"
    (question,) = started["questions"]
    assert question["id"] == "int-call_channel"
    assert question["message"] == "Where should v1.4.0 be published?"
    assert started["interrupts"][0]["options"][0] == {
        "label": "Stable",
        "value": "stable",
        "description": "every user gets it",
    }
    program, *args = shlex.split(question["answer_command"])
    assert program == "pi-recipes" and args[:2] == ["runs", "answer"]
    code, out, err = _cli(capsys, *args, "--json")
    assert code == 0, err
    (approval,) = json.loads(out)["run"]["questions"]
    assert approval["id"] == "int-call_publish"

    (here / "flow.iter").write_text(REVIEW, encoding="utf-8")
    code, out, err = _cli(capsys, "graph", "run", "flow.iter", "--json")
    assert code == 0, err
    graph = json.loads(out)
    assert [q["id"] for q in graph["questions"]] == ["int-pick.1"]
    assert graph["questions"][0]["answer_command"].endswith(
        f'runs answer {graph["run_id"]} int-pick.1 \'{{"answers": ["a.log"]}}\' --resume'
    )
