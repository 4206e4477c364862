"""The users file: who the people are, their groups, how each signs in, and who they are in Slack.

A TOML file, written by ``pi-recipes users add NAME --group G [--file F]`` and read by ``serve
--users F``, ``slack --users F`` and the command line (``--as``)::

    [[user]]
    name = "ada"
    groups = ["release"]
    token = "$argon2id$v=19$..."   # the hash of the token `users add` printed once
    slack = ["U012ABCDEF"]          # the Slack user ids that are this person
    email = "ada@example.com"

    [slack]
    usergroups = { S0RELEASE = "release" }   # a Slack user group's id -> a group here

    [cli]
    impersonate = false   # may the command line record another name (--as NAME)?

A token is ``pr_<name>_<secret>``: its name says whose hash to verify (argon2id, through
argon2-cffi), so a sign-in costs one verification whatever the number of users, and a verified
token is remembered for a while (:data:`VERIFIED_FOR`) so a page's requests cost none. The
file never holds a token, only its hash; a bad file is a :class:`~interactions.UsageError`
listing every mistake, and nothing starts.
"""

from __future__ import annotations

import hashlib
import secrets
import time
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from interactions import UsageError
from interactions.people import Identity, check_approvers

__all__ = [
    "TOKEN_PREFIX",
    "USERS_ENV",
    "VERIFIED_FOR",
    "User",
    "Users",
    "add_user",
    "find_users",
    "load_users",
    "new_token",
]

TOKEN_PREFIX = "pr_"
"""How a person's token starts: ``pr_<name>_<secret>``."""

VERIFIED_FOR = 300.0
"""Seconds a verified token is remembered (a revoked one stops working within this)."""

USERS_ENV = "PI_RECIPES_USERS"
"""The environment variable naming the users file when no ``--users`` is given."""

_USER_KEYS = ("name", "groups", "token", "slack", "email")


@dataclass(frozen=True)
class User:
    """One person of the users file."""

    name: str
    groups: frozenset[str] = frozenset()
    token_hash: str | None = None
    slack: frozenset[str] = frozenset()
    email: str | None = None

    def identity(self, via: str) -> Identity:
        """This person as an answer records them, established ``via`` a sign-in way."""
        return Identity(self.name, self.groups, via=via)


@dataclass
class Users:
    """The people of a users file, and what it says of Slack and the command line."""

    path: Path | None = None
    users: Mapping[str, User] = field(default_factory=dict)
    slack_groups: Mapping[str, str] = field(default_factory=dict)
    cli_impersonate: bool = False
    _verified: dict[str, tuple[float, Identity]] = field(default_factory=dict, repr=False)

    def by_token(self, token: str, *, now: float | None = None) -> Identity | None:
        """The person a bearer token signs in, or ``None`` (not a person's token, unknown,
        wrong)."""
        if not token.startswith(TOKEN_PREFIX):
            return None
        at = time.monotonic() if now is None else now
        key = hashlib.sha256(token.encode()).hexdigest()
        known = self._verified.get(key)
        if known is not None and at - known[0] < VERIFIED_FOR:
            return known[1]
        name = token[len(TOKEN_PREFIX):].partition("_")[0]  # a name holds no "_"
        user = self.users.get(name)
        if user is None or user.token_hash is None or not _verify(user.token_hash, token):
            return None
        identity = user.identity("users-file")
        if len(self._verified) >= 1024:
            self._verified.clear()
        self._verified[key] = (at, identity)
        return identity

    def by_name(self, name: str, *, via: str) -> Identity | None:
        """The person called ``name`` (``None`` when the file has no such person)."""
        user = self.users.get(name)
        return user.identity(via) if user is not None else None

    def by_slack(self, user_id: str, usergroups: Iterable[str] = ()) -> Identity | None:
        """The person a Slack user id is (their groups, and the groups their Slack user groups
        map to), or ``None`` when the file maps no person to it."""
        for user in self.users.values():
            if user_id in user.slack:
                mapped = {self.slack_groups[g] for g in usergroups if g in self.slack_groups}
                return Identity(user.name, user.groups | mapped, via="slack")
        return None

    def members(self, group: str) -> list[str]:
        """The names of a group's members."""
        return sorted(u.name for u in self.users.values() if group in u.groups)


def load_users(path: str | Path) -> Users:
    """Read and check the users file at ``path``; ``UsageError`` listing every mistake."""
    where = Path(path)
    try:
        data = tomllib.loads(where.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read the users file {where}: {exc.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"the users file {where} is not TOML: {exc}") from None
    problems: list[str] = []
    users: dict[str, User] = {}
    for index, table in enumerate(_tables(data.get("user", []), "user", problems)):
        user = _user(table, f"{where}: user {index + 1}", problems)
        if user is not None and user.name in users:
            problems.append(f"{where}: user {index + 1}: {user.name!r} is named twice")
        elif user is not None:
            users[user.name] = user
    slack = data.get("slack", {})
    groups = slack.get("usergroups", {}) if isinstance(slack, dict) else None
    if not isinstance(groups, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in groups.items()
    ):
        problems.append(f'{where}: [slack] usergroups must map ids to groups: {{ S01 = "ops" }}')
        groups = {}
    cli = data.get("cli", {})
    impersonate = cli.get("impersonate", False) if isinstance(cli, dict) else None
    if not isinstance(impersonate, bool):
        problems.append(f"{where}: [cli] impersonate must be true or false")
        impersonate = False
    unknown = sorted(set(data) - {"user", "slack", "cli"})
    if unknown:
        problems.append(f"{where}: unknown table {', '.join(unknown)}: a users file holds "
                        "[[user]], [slack] and [cli]")  # fmt: skip
    if problems:
        shown = "\n".join(f"  {p}" for p in problems)
        raise UsageError(f"the users file {where} has {len(problems)} problem(s):\n{shown}")
    return Users(where, users, groups, impersonate)


def find_users(
    given: str | Path | None, env: Mapping[str, str], *, default: str | Path | None = None
) -> Users | None:
    """The users file a host reads: ``given`` (``--users``), else :data:`USERS_ENV` in
    ``env``, else ``default`` when that file exists; ``None`` when there is none. A file named
    (by the option or the variable) must exist and be right: ``UsageError`` otherwise."""
    named = given or env.get(USERS_ENV, "").strip() or None
    if named is not None:
        return load_users(named)
    if default is not None and Path(default).is_file():
        return load_users(default)
    return None


def _tables(value: Any, name: str, problems: list[str]) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not all(isinstance(t, dict) for t in value):
        problems.append(f"`{name}` must be [[{name}]] tables")
        return []
    return value


def _user(table: dict[str, Any], at: str, problems: list[str]) -> User | None:
    found = len(problems)
    unknown = sorted(set(table) - set(_USER_KEYS))
    if unknown:
        problems.append(f"{at}: unknown key {', '.join(unknown)}; a user takes "
                        f"{', '.join(_USER_KEYS)}")  # fmt: skip
    name = table.get("name")
    try:
        Identity(name if isinstance(name, str) else "")
    except UsageError:
        problems.append(f"{at}: `name` must be a name (letters, digits and ._@+-:), got {name!r}")
    groups = table.get("groups", [])
    try:
        check_approvers(groups if isinstance(groups, list) else [None])  # type: ignore[list-item]
    except UsageError:
        problems.append(f"{at}: `groups` must be a list of names, got {groups!r}")
    token = table.get("token")
    if token is not None and (not isinstance(token, str) or not token.startswith("$argon2")):
        problems.append(f"{at}: `token` must be an argon2 hash (pi-recipes users add writes "
                        "it); never a token itself")  # fmt: skip
    slack = table.get("slack", [])
    if not isinstance(slack, list) or not all(isinstance(s, str) for s in slack):
        problems.append(f"{at}: `slack` must be a list of Slack user ids")
    email = table.get("email")
    if email is not None and (not isinstance(email, str) or "@" not in email):
        problems.append(f"{at}: `email` must be an address")
    if len(problems) > found or not isinstance(name, str):
        return None
    return User(name, frozenset(groups), token, frozenset(slack), email)


def new_token(name: str) -> str:
    """A new token for the person ``name``: ``pr_<name>_<secret>``."""
    return f"{TOKEN_PREFIX}{name}_{secrets.token_urlsafe(24)}"


def add_user(
    path: str | Path,
    name: str,
    *,
    groups: Iterable[str] = (),
    slack: Iterable[str] = (),
    email: str | None = None,
) -> str:
    """Add ``name`` to the users file at ``path`` (made when missing) with a new token; return
    the token (shown once: the file keeps its hash). Replacing a person's entry keeps nothing of
    the old one. ``UsageError`` for a bad name, group or file."""
    where = Path(path)
    Identity(name)  # a bad name fails here
    check_approvers(groups)
    text = where.read_text(encoding="utf-8") if where.exists() else ""
    if text:
        load_users(where)  # refuse to add to a file that is broken
    token = new_token(name)
    entry = _entry(name, list(groups), _hash(token), list(slack), email)
    kept = _without(text, name)
    where.parent.mkdir(parents=True, exist_ok=True)
    written = (kept.rstrip() + "\n\n" if kept.strip() else "") + entry
    fresh = where.with_name(f".{where.name}.{secrets.token_hex(4)}")
    fresh.write_text(written, encoding="utf-8")
    fresh.chmod(0o600)
    fresh.replace(where)
    load_users(where)  # what was written reads back
    return token


def _entry(
    name: str, groups: list[str], token_hash: str, slack: list[str], email: str | None
) -> str:
    def toml_list(items: list[str]) -> str:
        return "[" + ", ".join(_quoted(i) for i in items) + "]"

    lines = ["[[user]]", f"name = {_quoted(name)}", f"groups = {toml_list(groups)}",
             f"token = {_quoted(token_hash)}"]  # fmt: skip
    if slack:
        lines.append(f"slack = {toml_list(slack)}")
    if email:
        lines.append(f"email = {_quoted(email)}")
    return "\n".join(lines) + "\n"


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _without(text: str, name: str) -> str:
    """``text`` without the ``[[user]]`` table of ``name`` (a whole table: its header up to
    the next table's)."""
    blocks: list[list[str]] = [[]]
    for line in text.splitlines():
        if line.strip().startswith("["):
            blocks.append([])
        blocks[-1].append(line)
    kept = []
    for block in blocks:
        header = block[0].strip() if block else ""
        if header == "[[user]]" and any(
            line.strip() == f"name = {_quoted(name)}" for line in block
        ):
            continue
        kept.append("\n".join(block))
    return "\n".join(b for b in kept if b.strip())


def _hash(token: str) -> str:
    from argon2 import PasswordHasher

    return PasswordHasher().hash(token)


def _verify(token_hash: str, token: str) -> bool:
    from argon2 import PasswordHasher
    from argon2.exceptions import InvalidHashError, VerificationError

    try:
        return PasswordHasher().verify(token_hash, token)
    except (VerificationError, InvalidHashError):
        return False
