"""Who a Slack user is, for the answers they give: the users file's mapping (``slack --users``).

With a users file, a Slack user id the file maps (``slack = ["U…"]`` on a person) answers as
that person, with their groups and the groups their Slack user groups map to (``[slack]
usergroups = { S… = "release" }``; membership read with ``usergroups.users.list`` and kept
for a while, as the allow-list's is); a user the file does not map answers as
``slack:<USER_ID>``, in no group. Without a users file, a click answers as the bare Slack user
id, as it always has. Either way an interrupt naming approvers refuses anyone it does not name
(:func:`interactions.people.may_answer`).

A user group Slack would not list counts for no one (fail closed): its lookup failure is
returned with the identity, so the host can say "Slack would not say" rather than "not
allowed" to someone it might have allowed.
"""

from __future__ import annotations

from hosts._kit import Users
from hosts.slack._access import Access, MembersUnknown
from interactions.people import Identity

__all__ = ["SLACK_PREFIX", "SlackPeople"]

SLACK_PREFIX = "slack:"
"""The name an unmapped Slack user answers as: ``slack:<USER_ID>``."""


class SlackPeople:
    """Turns a Slack user id into who answers (see the module docs)."""

    def __init__(self, users: Users | None, access: Access) -> None:
        self.users = users
        self._access = access

    async def identity(self, user: str) -> tuple[str | Identity, MembersUnknown | None]:
        """Who ``user`` answers as, and the first user-group lookup that failed (its group
        not counted), if any."""
        if self.users is None:
            return user, None
        if self.users.by_slack(user) is None:
            return Identity(f"{SLACK_PREFIX}{user}", via="slack"), None
        usergroups: list[str] = []
        unknown: MembersUnknown | None = None
        for group in sorted(self.users.slack_groups):
            try:
                if user in await self._access.group_members(group):
                    usergroups.append(group)
            except MembersUnknown as exc:
                unknown = unknown or exc
        identity = self.users.by_slack(user, usergroups)
        assert identity is not None
        return identity, unknown
