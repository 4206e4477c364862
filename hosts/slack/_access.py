"""Who may answer a card: the host's allow-list, checked against Slack's membership lists.

User ids are checked as given; user groups (``usergroups.users.list``) and a channel's members
(``conversations.members``) are asked from Slack and kept for ``ttl`` seconds. A lookup that
fails (a missing scope, Slack down, a channel longer than :data:`MAX_PAGES` pages) allows no
one: the allow-list fails closed, and says so (:class:`MembersUnknown`) rather than calling the
person not allowed.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Awaitable, Callable

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from hosts.slack._client import slack_error
from hosts.slack._config import AllowList

__all__ = ["Access", "MembersUnknown"]

logger = logging.getLogger("hosts.slack")

MAX_PAGES = 50
"""Pages of a channel's members read (1,000 a page); a longer list is not guessed at: its
members past them are told the list could not be read, not that they may not answer."""


class MembersUnknown(Exception):
    """Slack would not list the members of a user group or channel of the allow-list, and no
    other entry allows the person: whether they may answer is unknown. ``error`` is Slack's
    error code (or the HTTP status of a reply that is not Slack's, or the connection error's or
    timeout's name)."""

    def __init__(self, key: str, error: str) -> None:
        super().__init__(f"cannot check {key} for the allow-list: {error}")
        self.key = key
        self.error = error


class _TooLong(Exception):
    """A member list longer than the host reads."""


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
        """Whether ``user`` may answer a card posted in ``channel``.

        Raises :class:`MembersUnknown` when a member list Slack would not give could have
        allowed them (and nothing else did): the caller says so, and lets no one answer.
        """
        if self.allow.open or user in self.allow.users:
            return True
        lookups: list[tuple[str, Callable[[], Awaitable[frozenset[str]]]]] = [
            (f"group:{group}", functools.partial(self._group, group))
            for group in sorted(self.allow.groups)
        ]  # keyed as group_members keys them: one cache for both
        if self.allow.channel_members:
            lookups.append((f"channel:{channel}", functools.partial(self._channel, channel)))
        unknown: MembersUnknown | None = None
        for key, fetch in lookups:
            try:
                if user in await self._members(key, fetch):
                    return True
            except MembersUnknown as exc:
                unknown = unknown or exc
        if unknown is not None:
            raise unknown
        return False

    async def group_members(self, group: str) -> frozenset[str]:
        """The members of the Slack user group ``group`` (``S…``), kept ``ttl`` seconds as
        the allow-list's are. Raises :class:`MembersUnknown` when Slack would not list them."""
        return await self._members(f"group:{group}", functools.partial(self._group, group))

    async def _members(
        self, key: str, fetch: Callable[[], Awaitable[frozenset[str]]]
    ) -> frozenset[str]:
        now = self._clock()
        cached = self._cache.get(key)
        if cached is not None and cached[0] > now:
            return cached[1]
        try:
            members = await fetch()
        except _TooLong as exc:
            error = str(exc)
        except SlackApiError as exc:
            error = slack_error(exc)
        except (aiohttp.ClientError, TimeoutError) as exc:  # a timeout is not a ClientError
            error = type(exc).__name__
        else:
            self._cache[key] = (now + self._ttl, members)
            return members
        unknown = MembersUnknown(key, error)
        logger.warning("%s", unknown)
        raise unknown

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
                return frozenset(members)
        raise _TooLong(f"the channel has more members than the {MAX_PAGES} pages read")
