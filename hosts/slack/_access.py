"""Who may answer a card: the host's allow-list, checked against Slack's membership lists.

User ids are checked as given; user groups (``usergroups.users.list``) and a channel's members
(``conversations.members``) are asked from Slack and kept for ``ttl`` seconds. A lookup that
fails (a missing scope, Slack down) refuses: the allow-list fails closed.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Awaitable, Callable

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from hosts.slack._config import AllowList

__all__ = ["Access"]

logger = logging.getLogger("hosts.slack")

MAX_PAGES = 50  # 50 pages of 1,000 members: a bound, not a limit anyone meets


class Access:
    """Decides :meth:`may_answer` for one host's allow-list."""

    def __init__(
        self,
        allow: AllowList,
        client: AsyncWebClient,
        *,
        ttl: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.allow = allow
        self._client = client
        self._ttl = ttl
        self._clock = clock
        self._cache: dict[str, tuple[float, frozenset[str]]] = {}

    async def may_answer(self, user: str, channel: str) -> bool:
        """Whether ``user`` may answer a card posted in ``channel``."""
        if self.allow.open or user in self.allow.users:
            return True
        for group in sorted(self.allow.groups):
            if user in await self._members(f"group:{group}", functools.partial(self._group, group)):
                return True
        if self.allow.channel_members:
            found = await self._members(f"channel:{channel}", lambda: self._channel(channel))
            return user in found
        return False

    async def _members(
        self, key: str, fetch: Callable[[], Awaitable[frozenset[str]]]
    ) -> frozenset[str]:
        now = self._clock()
        cached = self._cache.get(key)
        if cached is not None and cached[0] > now:
            return cached[1]
        try:
            members = await fetch()
        except SlackApiError as exc:
            logger.warning("cannot check %s for the allow-list: %s", key, exc.response.get("error"))
            return frozenset()
        self._cache[key] = (now + self._ttl, members)
        return members

    async def _group(self, group: str) -> frozenset[str]:
        response = await self._client.usergroups_users_list(usergroup=group)
        return frozenset(str(u) for u in response.get("users") or [])

    async def _channel(self, channel: str) -> frozenset[str]:
        members: set[str] = set()
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            response = await self._client.conversations_members(
                channel=channel, limit=1000, cursor=cursor
            )
            members.update(str(m) for m in response.get("members") or [])
            cursor = (response.get("response_metadata") or {}).get("next_cursor") or None
            if not cursor:
                break
        return frozenset(members)
