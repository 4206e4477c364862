"""Who answers from the command line: the operator (``cli:<os user>``), ``--as NAME`` where the
users file lets it, approvers refusing anyone else (exit 8), and ``runs pending --mine``."""

from __future__ import annotations

import json
from pathlib import Path

from tests.hosts.cli_helpers import cli_env, pi, pi_json
from tests.hosts.slack.harness import RECIPES

GATED = f"{RECIPES}:gated"  # asks "Ship it?"; only ada or group:release may answer
OPEN = f"{RECIPES}:flavours"  # asks anyone


def users(tmp_path: Path, *, impersonate: bool) -> Path:
    """The project's users file: ada in release; the operator 'carol' in nothing."""
    path = tmp_path / ".pi-recipes" / "users.toml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(
        '[[user]]\nname = "ada"\ngroups = ["release"]\n\n'
        '[[user]]\nname = "carol"\ngroups = ["ops"]\n\n'
        f"[cli]\nimpersonate = {str(impersonate).lower()}\n"
    )
    return path


def as_os_user(name: str) -> dict[str, str]:
    return cli_env(LOGNAME=name, USER=name)  # getpass.getuser() reads LOGNAME first


def pause(tmp_path: Path, recipe: str) -> str:
    done = pi("run", recipe, "Go", "--no-interactive", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["run_id"])


def answered_by(tmp_path: Path, run_id: str) -> str | None:
    [record] = pi_json("runs", "show", run_id, cwd=tmp_path)["interactions"]
    answer = record["answer"]
    return answer["answered_by"] if answer else None


def test_the_operator_is_recorded_and_refused_where_approvers_name_others(tmp_path: Path) -> None:
    users(tmp_path, impersonate=False)
    open_run, gated_run = pause(tmp_path, OPEN), pause(tmp_path, GATED)
    carol = as_os_user("carol")

    refused = pi("runs", "answer", gated_run, "int-c1", "Ship", cwd=tmp_path, env=carol)
    assert refused.returncode == 8, refused.stderr
    [line] = refused.stderr.splitlines()
    assert line == (
        "pi-recipes: not allowed: only ada, group:release may answer int-c1; the answer came "
        "from 'cli:carol'"
    )
    assert answered_by(tmp_path, gated_run) is None

    impersonating = pi("runs", "answer", gated_run, "int-c1", "Ship", "--as", "ada",
                       cwd=tmp_path, env=carol)  # fmt: skip
    assert impersonating.returncode == 2
    assert "does not let the command line answer for another" in impersonating.stderr
    assert "nothing was stored" in impersonating.stderr
    assert answered_by(tmp_path, gated_run) is None

    done = pi("runs", "answer", open_run, "int-c1", "Vanilla", cwd=tmp_path, env=carol)
    assert done.returncode == 0, done.stderr
    assert answered_by(tmp_path, open_run) == "cli:carol"

    ada = as_os_user("ada")  # cli:ada is in release (ada's groups in the users file)
    done = pi("runs", "answer", gated_run, "int-c1", "Ship", cwd=tmp_path, env=ada)
    assert done.returncode == 0, done.stderr
    assert answered_by(tmp_path, gated_run) == "cli:ada"


def test_as_records_another_name_in_their_groups_where_the_users_file_lets_it(
    tmp_path: Path,
) -> None:
    elsewhere = tmp_path / "people.toml"  # named by --users, not found by default
    elsewhere.write_text('[[user]]\nname = "dan"\ngroups = ["release"]\n\n'
                         "[cli]\nimpersonate = true\n")  # fmt: skip
    gated_run = pause(tmp_path, GATED)
    carol = as_os_user("carol")

    unknown = pi("runs", "answer", gated_run, "int-c1", "Ship", "--as", "dan",
                 cwd=tmp_path, env=carol)  # fmt: skip
    assert unknown.returncode == 8  # without the file dan is in no group
    hostile = pi("runs", "answer", gated_run, "int-c1", "Ship", "--as", "<!channel> dan",
                 cwd=tmp_path, env=carol)  # fmt: skip
    assert hostile.returncode == 2  # a name, never markup: names are checked as everywhere
    assert "an identity's name must match" in hostile.stderr
    done = pi("runs", "answer", gated_run, "int-c1", "Ship", "--by", "dan", "--users",
              str(elsewhere), cwd=tmp_path, env=carol)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert answered_by(tmp_path, gated_run) == "dan"


def test_pending_mine_lists_what_is_mine_then_what_is_anyones(tmp_path: Path) -> None:
    file = users(tmp_path, impersonate=False)
    open_run, gated_run = pause(tmp_path, OPEN), pause(tmp_path, GATED)

    def mine(who: str) -> list[str]:
        env = as_os_user(who) | {"PI_RECIPES_USERS": str(file)}
        done = pi("runs", "pending", "--mine", "--json", cwd=tmp_path, env=env)
        assert done.returncode == 0, done.stderr
        return [r["run_id"] for r in json.loads(done.stdout)]

    assert mine("ada") == [gated_run, open_run]  # assigned to her group first
    assert mine("carol") == [open_run]
    everything = pi_json("runs", "pending", cwd=tmp_path)
    assert {r["run_id"] for r in everything} == {open_run, gated_run}
    shown = pi("runs", "pending", gated_run, cwd=tmp_path)
    assert "int-c1: Ship it?\n" in shown.stdout
    assert "\n      only ada, group:release may answer\n" in shown.stdout


QUORUM = str(Path(__file__).parent.parent / "recipes" / "runs" / "quorum_recipe.py")


def test_an_approval_two_must_give_counts_each_vote_and_continues_on_the_second(
    tmp_path: Path,
) -> None:
    path = tmp_path / ".pi-recipes" / "users.toml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(
        '[[user]]\nname = "ada"\ngroups = ["release"]\n\n'
        '[[user]]\nname = "grace"\ngroups = ["release"]\n\n[cli]\nimpersonate = true\n'
    )
    run_id = pause(tmp_path, QUORUM)
    vote = ("runs", "answer", run_id, "int-call_release", '{"approved": true}')
    first = pi(*vote, "--as", "ada", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert first.stdout == (
        f"Counted: 1 of 2 approvals for int-call_release of {run_id} (ada); it stays open "
        "until enough approve.\n"
    )
    again = pi(*vote, "--as", "ada", cwd=tmp_path)
    assert again.stdout.startswith("Already counted: 1 of 2 approvals"), again.stdout
    stranger = pi(*vote, "--as", "carol", cwd=tmp_path)
    assert stranger.returncode == 8 and "only group:release may answer" in stranger.stderr
    second = pi(*vote, "--as", "grace", "--resume", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert "Tool said: Approved by ada, grace." in second.stdout
