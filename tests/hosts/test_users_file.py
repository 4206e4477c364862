"""The users file: ``pi-recipes users add`` prints a person's token once and keeps only its
argon2 hash (mode 0600); the token signs that person in with their groups, a wrong one no one;
a Slack user id maps to its person; a bad file lists every mistake and nothing starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from hosts._kit import add_user, load_users
from interactions import UsageError
from interactions.people import Identity
from tests.hosts.cli_helpers import pi


def test_users_add_prints_the_token_once_and_keeps_only_its_hash(tmp_path: Path) -> None:
    added = pi("users", "add", "ada", "--group", "release", "--slack", "U0ADA", cwd=tmp_path)
    assert added.returncode == 0, added.stderr
    token = added.stdout.strip()
    assert token.startswith("pr_ada_") and "\n" not in token
    assert "the token above is shown once" in added.stderr
    file = tmp_path / ".pi-recipes" / "users.toml"
    assert token not in file.read_text(encoding="utf-8")
    assert "$argon2id$" in file.read_text(encoding="utf-8")
    assert file.stat().st_mode & 0o777 == 0o600

    users = load_users(file)
    assert users.by_token(token) == Identity("ada", frozenset({"release"}), via="users-file")
    assert users.by_token(token[:-1] + ("x" if token[-1] != "x" else "y")) is None
    assert users.by_token("pr_bob_" + token.partition("_ada_")[2]) is None, "not bob's"
    assert users.by_token("some-shared-token") is None
    assert users.by_slack("U0ADA") == Identity("ada", frozenset({"release"}), via="slack")
    assert users.by_slack("U0BOB") is None


def test_adding_a_person_again_gives_a_new_token_and_the_old_one_stops(tmp_path: Path) -> None:
    file = tmp_path / "users.toml"
    old = add_user(file, "ada", groups=["release"])
    add_user(file, "bob")
    new = add_user(file, "ada", groups=["ops"])
    users = load_users(file)
    assert sorted(users.users) == ["ada", "bob"]
    assert users.by_token(old) is None
    assert users.by_token(new) == Identity("ada", frozenset({"ops"}), via="users-file")


def test_a_bad_users_file_lists_each_mistake(tmp_path: Path) -> None:
    file = tmp_path / "users.toml"
    file.write_text(
        '[[user]]\nname = "ada smith"\ntoken = "pr_ada_plain"\n\n'
        '[[user]]\nname = "bob"\ncolour = "red"\n\n[cli]\nimpersonate = "yes"\n',
        encoding="utf-8",
    )
    with pytest.raises(UsageError) as bad:
        load_users(file)
    said = str(bad.value)
    assert said.startswith(f"the users file {file} has 4 problem(s)")
    for part in ("`name` must be a name", "`token` must be an argon2 hash",
                 "unknown key colour", "[cli] impersonate must be true or false"):  # fmt: skip
        assert part in said, said
    refused = pi("users", "add", "ada smith", "--file", str(tmp_path / "u.toml"), cwd=tmp_path)
    assert refused.returncode == 2 and not (tmp_path / "u.toml").exists()
