"""Who may answer: an ask's approvers, and the identity a host establishes for an answer.

An ask may name its approvers (``approvers=["ada", "group:release"]``): people by name and
groups by ``group:NAME``. The interrupt carries them in its ``metadata`` (:data:`APPROVERS`; an
AG-UI client reads them there, and one that ignores them still works), with the number of
distinct approvals an approval needs (:data:`REQUIRED_APPROVALS`, when more than one).

An answer is recorded with the :class:`Identity` the host established (a signed-in user, a
mapped Slack user, the command line's operator), never with a name the request carries. Where
an interrupt names approvers, :func:`may_answer` decides, and an answer by anyone else is
refused with :class:`~interactions.NotAllowedError` (HTTP 403), storing nothing. An interrupt
naming none may be answered by anyone who may reach it, as before.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from interactions._errors import NotAllowedError, UsageError

__all__ = [
    "APPROVERS",
    "GROUP_PREFIX",
    "REQUIRED_APPROVALS",
    "Identity",
    "approvers_of",
    "check_approvers",
    "check_not_allowed",
    "may_answer",
    "people_metadata",
    "required_approvals_of",
    "who",
]

APPROVERS = "approvers"
"""The key, in an interrupt's ``metadata``, of the names and ``group:NAME`` entries of the
people who may answer it (absent or empty: anyone who may reach it)."""

REQUIRED_APPROVALS = "required_approvals"
"""The key, in an approval's ``metadata``, of the distinct approvals it needs (absent: one)."""

GROUP_PREFIX = "group:"
"""An approver entry naming a group: ``group:release``."""

MAX_APPROVERS = 100
"""The most entries an ask may name."""

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+\-:]{0,199}")
"""A person's or a group's name: a letter or digit, then letters, digits and ``._@+-:``
(``cli:ada``, ``ada@example.com``)."""


@dataclass(frozen=True)
class Identity:
    """Who answers, as the host established it: ``name`` (recorded as ``answered_by``), the
    ``groups`` they belong to, and ``via``, how the host knows (``users-file``, ``proxy``,
    ``jwt``, ``token``, ``slack``, ``cli``)."""

    name: str
    groups: frozenset[str] = field(default_factory=frozenset)
    via: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.fullmatch(self.name):
            raise UsageError(f"an identity's name must match {_NAME.pattern}, got {self.name!r}")
        object.__setattr__(self, "groups", frozenset(self.groups))


def who(answered_by: str | Identity | None) -> tuple[str | None, frozenset[str]]:
    """The name recorded for an answer and the groups it counts in: an :class:`Identity`'s, or
    a bare name (no groups), or nobody."""
    if isinstance(answered_by, Identity):
        return answered_by.name, answered_by.groups
    return answered_by, frozenset()


def check_approvers(approvers: Iterable[str] | None) -> tuple[str, ...]:
    """``approvers`` checked (each a name or ``group:NAME``), in order, without repeats;
    ``UsageError`` saying which entry is wrong."""
    if approvers is None:
        return ()
    if isinstance(approvers, str):
        raise UsageError(f"approvers is a list of names and group:NAME entries, got {approvers!r}")
    found: dict[str, None] = {}
    for entry in approvers:
        name = entry.removeprefix(GROUP_PREFIX) if isinstance(entry, str) else entry
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise UsageError(
                f"an approver is a name or group:NAME (letters, digits and ._@+-:), got "
                f"{entry!r}"
            )
        found[entry] = None
    if len(found) > MAX_APPROVERS:
        raise UsageError(f"an ask names at most {MAX_APPROVERS} approvers, got {len(found)}")
    return tuple(found)


def people_metadata(
    approvers: Iterable[str] | None, required_approvals: int | None = None
) -> dict[str, Any]:
    """The metadata entries an ask adds for its approvers and the approvals it needs (none
    when it names neither); ``UsageError`` for a bad entry or count."""
    out: dict[str, Any] = {}
    names = check_approvers(approvers)
    if names:
        out[APPROVERS] = list(names)
    if required_approvals is not None:
        if (
            not isinstance(required_approvals, int)
            or isinstance(required_approvals, bool)
            or not 1 <= required_approvals <= MAX_APPROVERS
        ):
            raise UsageError(
                f"required_approvals must be a whole number from 1 to {MAX_APPROVERS}, got "
                f"{required_approvals!r}"
            )
        if required_approvals > 1:
            out[REQUIRED_APPROVALS] = required_approvals
    return out


def approvers_of(metadata: Mapping[str, Any] | None) -> tuple[str, ...]:
    """The approvers an interrupt's ``metadata`` names (``()``: anyone)."""
    named = (metadata or {}).get(APPROVERS)
    return tuple(e for e in named if isinstance(e, str)) if isinstance(named, list) else ()


def required_approvals_of(metadata: Mapping[str, Any] | None) -> int:
    """The distinct approvals an interrupt's ``metadata`` asks for (1 when it names none)."""
    count = (metadata or {}).get(REQUIRED_APPROVALS)
    return count if isinstance(count, int) and not isinstance(count, bool) and count > 1 else 1


def may_answer(approvers: Sequence[str], name: str | None, groups: Iterable[str] = ()) -> bool:
    """Whether someone called ``name``, in ``groups``, may answer an interrupt naming
    ``approvers``: anyone when it names none; else a named person or a member of a named
    group."""
    if not approvers:
        return True
    if name is None:
        return False
    if name in approvers:
        return True
    return any(f"{GROUP_PREFIX}{group}" in approvers for group in groups)


def check_not_allowed(
    approvers: Sequence[str],
    name: str | None,
    groups: Iterable[str] = (),
    *,
    run_id: str | None = None,
    interaction_id: str | None = None,
) -> None:
    """Raise :class:`~interactions.NotAllowedError` when ``name`` may not answer (see
    :func:`may_answer`), saying who may."""
    if may_answer(approvers, name, groups):
        return
    who = f"{name!r}" if name is not None else "no one signed in"
    raise NotAllowedError(
        f"only {', '.join(approvers)} may answer {interaction_id or 'this question'}; "
        f"the answer came from {who}",
        run_id=run_id,
        interaction_id=interaction_id,
        reason="not_an_approver",
        approvers=tuple(approvers),
    )
