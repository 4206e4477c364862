"""Who may answer an ask, and who answered: approvers, identities, how many must agree.

An ask names its approvers (``approvers=["ada", "group:release"]``) and, for an approval, the
distinct approvals it needs (``required_approvals=2``); the interrupt carries both in its
``metadata`` (:data:`APPROVERS`, :data:`REQUIRED_APPROVALS`). A host establishes the
:class:`Identity` of whoever answers and every answer is checked with :func:`may_answer`: an
answer by anyone else is refused with :class:`~interactions.NotAllowedError` (HTTP 403, exit 8)
and nothing is stored.
"""

from interactions._people import (
    APPROVERS,
    GROUP_PREFIX,
    REQUIRED_APPROVALS,
    Identity,
    approvers_of,
    check_approvers,
    check_not_allowed,
    may_answer,
    people_metadata,
    required_approvals_of,
    who,
)

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
