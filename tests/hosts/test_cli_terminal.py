"""``pi-recipes run`` on a real pseudo-terminal: arrow keys, typing, Ctrl-C."""

from __future__ import annotations

from pathlib import Path

import pexpect

from tests.hosts.cli_helpers import PI_RECIPES, RELEASE, cli_env

DOWN = "\x1b[B"
ENTER = "\r"


def spawn(tmp_path: Path, *args: str) -> pexpect.spawn:
    child = pexpect.spawn(
        PI_RECIPES,
        ["run", RELEASE, *args],
        cwd=str(tmp_path),
        env=cli_env(),
        encoding="utf-8",
        timeout=20,
        dimensions=(40, 120),
    )
    return child


def finish(child: pexpect.spawn) -> int:
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus is not None
    return int(child.exitstatus)


def test_arrow_keys_pick_an_option_and_approve(tmp_path: Path) -> None:
    child = spawn(tmp_path, "Release v1.4.0")
    child.expect("Where should v1.4.0 be published")
    child.send(DOWN + ENTER)  # Stable -> Beta
    child.expect("Asking for approval to publish to beta")
    child.expect("Publish v1.4.0 to beta")
    child.send(ENTER)  # Approve
    child.expect("Published v1.4.0. Approved.")
    child.expect("idle: 2 tool call")
    assert finish(child) == 0
    assert not (tmp_path / ".pi-recipes").exists(), "a terminal run needs no store"


def test_other_answer_typed_and_changes_requested_with_feedback(tmp_path: Path) -> None:
    child = spawn(tmp_path, "Release v2.1.0")
    child.expect("Where should v2.1.0 be published")
    child.send(DOWN * 3 + ENTER)  # Other
    child.expect("Type your answer")
    child.send("canary" + ENTER)
    child.expect("Publish v2.1.0 to canary")
    child.send(DOWN + ENTER)  # Request changes
    child.expect("Feedback")
    child.send("wait for the load test" + ENTER)
    child.expect("Did not publish v2.1.0: Revision requested. Feedback: wait for the load test")
    assert finish(child) == 0


def test_ctrl_c_in_a_dialog_aborts_the_turn(tmp_path: Path) -> None:
    child = spawn(tmp_path, "Release v3.0.0")
    child.expect("Where should v3.0.0 be published")
    child.sendcontrol("c")
    child.expect("aborted")
    assert finish(child) == 130


def test_auto_approve_flag_for_this_run_only(tmp_path: Path) -> None:
    child = spawn(tmp_path, "Release v4.0.0", "--auto-approve")
    child.expect("No channel was chosen, so I'll use stable")
    child.expect("Published v4.0.0. Approved.")
    assert finish(child) == 0


def test_descriptions_show_and_escape_declines(tmp_path: Path) -> None:
    child = spawn(tmp_path, "Release v3.0.0")
    child.expect("Where should v3.0.0 be published")
    child.expect("every user gets it")  # the highlighted option's description
    child.send("\x1b")  # Escape: the question is declined
    child.expect("No channel was chosen, so I'll use stable")
    child.expect("Publish v3.0.0 to stable")
    child.send("\x1b[B\x1b[B\r")  # Decline
    child.expect("Did not publish v3.0.0: User declined to answer")
    assert finish(child) == 0
