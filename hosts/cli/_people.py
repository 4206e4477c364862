"""Who answers from the command line: the local operator, or the name ``--as`` gives.

An answer given with ``runs answer`` (or ``runs resume --entries``) records the operator as
``cli:<os user>`` (:func:`getpass.getuser`), in the groups the users file gives a person of
that name (``cli:<os user>``, else ``<os user>``), if any. ``--as NAME`` (``--by``, its older
spelling) records ``NAME`` instead, in ``NAME``'s groups; a users file refuses it unless it
says ``[cli] impersonate = true`` (``UsageError``, exit 2, nothing stored). Without a users file
``--as`` records the name as given, as ``--by`` always did.

The users file is ``--users FILE``, else ``$PI_RECIPES_USERS``, else ``.pi-recipes/users.toml``
where it exists. :func:`mine` is what ``runs pending --mine`` lists.
"""

from __future__ import annotations

import getpass
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path

from hosts._kit import Users, find_users
from hosts.cli._parser import DEFAULT_USERS
from interactions import UsageError
from interactions.people import Identity, may_answer
from interactions.reminders import approvers_now
from interactions.store import InteractionRecord

__all__ = ["CLI_PREFIX", "mine", "operator"]

CLI_PREFIX = "cli:"
"""How the local operator is recorded: ``cli:<os user>``."""


def operator(given_users: Path | None, as_name: str | None, env: Mapping[str, str]) -> Identity:
    """Who the command line answers as (see the module docs). ``UsageError`` for a users file
    that is missing or wrong, a bad name, or ``--as`` where the users file forbids it."""
    users = find_users(given_users, env, default=DEFAULT_USERS)
    if as_name is None:
        local = getpass.getuser()
        name = f"{CLI_PREFIX}{local}"
        return Identity(name, _groups(users, name, local), via="cli")
    identity = Identity(as_name, via="cli")  # a bad name fails here
    if users is not None and not users.cli_impersonate:
        raise UsageError(
            f"--as {as_name}: the users file {users.path} does not let the command line answer "
            f"for another ([cli] impersonate = true would); nothing was stored. Answer without "
            f"--as to be recorded as {CLI_PREFIX}{getpass.getuser()}"
        )
    return Identity(identity.name, _groups(users, as_name), via="cli")


def _groups(users: Users | None, *names: str) -> frozenset[str]:
    for name in names:
        person = users.by_name(name, via="cli") if users is not None else None
        if person is not None:
            return person.groups
    return frozenset()


def mine(
    records: Iterable[InteractionRecord],
    identity: Identity,
    escalated: Collection[tuple[str, str]] = (),
) -> list[InteractionRecord]:
    """What ``identity`` may answer of ``records``: first those whose approvers name them or
    one of their groups, then those open to anyone; newest first within each (others' are
    left out). ``escalated`` holds the ``(run_id, id)`` of those whose escalation is stored:
    whom they escalate to may answer them too. Each is sorted by its stored metadata, so one
    stored in a form this version cannot read is listed for whom it was meant (marked: it
    cannot be answered here)."""
    assigned: list[InteractionRecord] = []
    anyone: list[InteractionRecord] = []
    for record in records:
        approvers = approvers_now(record.metadata, (record.run_id, record.id) in escalated)
        if not approvers:
            anyone.append(record)
        elif may_answer(approvers, identity.name, identity.groups):
            assigned.append(record)

    def newest_first(found: list[InteractionRecord]) -> list[InteractionRecord]:
        return sorted(found, key=lambda r: r.requested_at, reverse=True)

    return newest_first(assigned) + newest_first(anyone)
