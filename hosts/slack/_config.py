"""The Slack host's configuration: what it runs, where cards go, who may answer, and its
secrets, which come from the environment only.

:class:`SlackSecrets` holds the tokens and the signing secret; its ``repr`` shows none of
them, and no error message quotes one. Nothing here writes them anywhere: they reach Slack's
client and the signature check, and nothing else.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from interactions import UsageError

if TYPE_CHECKING:
    from hosts._kit import Users

__all__ = [
    "API_URL_ENV",
    "APP_TOKEN_ENV",
    "BOT_TOKEN_ENV",
    "SECRET_ENVS",
    "SIGNING_SECRET_ENV",
    "AllowList",
    "SlackConfig",
    "SlackSecrets",
]

BOT_TOKEN_ENV = "SLACK_BOT_TOKEN"
APP_TOKEN_ENV = "SLACK_APP_TOKEN"
SIGNING_SECRET_ENV = "SLACK_SIGNING_SECRET"
API_URL_ENV = "SLACK_API_URL"
SECRET_ENVS = (BOT_TOKEN_ENV, APP_TOKEN_ENV, SIGNING_SECRET_ENV)
"""The variables a run's tools never see: the host holds them, the recipe does not."""

_USER = re.compile(r"[UW][A-Z0-9]{2,}")
_GROUP = re.compile(r"S[A-Z0-9]{2,}")
_CHANNEL = re.compile(r"[CGD][A-Z0-9]{2,}")
CHANNEL_MEMBERS = "channel"


@dataclass(frozen=True)
class AllowList:
    """Who may answer: user ids (``U…``/``W…``), members of user groups (``S…``), and/or the
    members of the channel the card is in (``channel``). Empty: anyone who sees the card."""

    users: frozenset[str] = frozenset()
    groups: frozenset[str] = frozenset()
    channel_members: bool = False

    @property
    def open(self) -> bool:
        """Whether anyone who can see a card may answer it."""
        return not (self.users or self.groups or self.channel_members)

    @classmethod
    def parse(cls, entries: Iterable[str]) -> AllowList:
        """Read ``--allow`` values (each may list several, comma-separated).

        Raises ``UsageError`` naming an entry that is none of the three kinds.
        """
        users: set[str] = set()
        groups: set[str] = set()
        members = False
        for entry in (e.strip() for given in entries for e in given.split(",")):
            if not entry:
                continue
            if entry == CHANNEL_MEMBERS:
                members = True
            elif _USER.fullmatch(entry):
                users.add(entry)
            elif _GROUP.fullmatch(entry):
                groups.add(entry)
            else:
                raise UsageError(
                    f"--allow {entry!r}: give Slack user ids (U…), user group ids (S…) "
                    f"or {CHANNEL_MEMBERS!r} (the members of the card's channel)"
                )
        return cls(users=frozenset(users), groups=frozenset(groups), channel_members=members)

    def describe(self) -> str:
        """The policy in words, for the startup line."""
        if self.open:
            return "anyone who can see a card"
        parts = [*sorted(self.users), *(f"members of {g}" for g in sorted(self.groups))]
        if self.channel_members:
            parts.append("members of the card's channel")
        return ", ".join(parts)


@dataclass(frozen=True)
class SlackSecrets:
    """The bot token (``xoxb-``), the app-level token (``xapp-``, Socket Mode) and the
    signing secret (HTTP endpoints). Never shown: ``repr`` hides them."""

    bot_token: str = field(repr=False)
    app_token: str | None = field(default=None, repr=False)
    signing_secret: str | None = field(default=None, repr=False)

    @classmethod
    def from_env(cls, env: Mapping[str, str], *, socket_mode: bool, http: bool) -> SlackSecrets:
        """Read the secrets a mode needs from ``env``.

        Raises ``UsageError`` naming the variable that is missing or of the wrong kind (never
        its value).
        """

        def get(name: str, prefix: str | None, needed: bool) -> str | None:
            value = env.get(name, "").strip()
            if not value:
                if needed:
                    raise UsageError(f"set {name} in the environment (see docs/hosts/slack.md)")
                return None
            if prefix and not value.startswith(prefix):
                raise UsageError(f"{name} must be a token starting with {prefix!r}")
            return value

        bot = get(BOT_TOKEN_ENV, "xoxb-", True)
        assert bot is not None
        return cls(
            bot_token=bot,
            app_token=get(APP_TOKEN_ENV, "xapp-", socket_mode),
            signing_secret=get(SIGNING_SECRET_ENV, None, http),
        )


@dataclass(frozen=True)
class SlackConfig:
    """What the host runs and how it behaves (secrets apart: see :class:`SlackSecrets`).

    ``recipe``/``agent``/``model``: what a mention or the slash command starts. ``channel``:
    where the cards of runs started elsewhere (CLI, web, REST, a graph) are posted; without
    it they are not shown in Slack. ``command``: the slash command that starts a run (e.g.
    ``/release``), besides mentions. ``full_text_url``: a template (``{run_id}``,
    ``{interaction_id}``) of a page with an interaction's whole text, linked from cut cards.
    ``expire_every``: seconds between sweeps of expired interactions. ``repost_every``: seconds
    between attempts to post the cards Slack refused or could not take. ``max_legs``: runs
    driven at once. ``api_url``: Slack's Web API (another for GovSlack, or a test server).
    ``stop_grace``: seconds the legs in flight get to finish when the host stops (then they
    are cancelled, their runs left to retry). ``users``: the users file (``--users``) that
    maps Slack users and user groups to people and groups (``None``: a click answers as its
    Slack user id; see :mod:`hosts.slack._people`). ``lane_capacity``: updates of one run held while
    Slack holds its channel up (past it the run is caught up from the store once its channel
    moves again: see :mod:`hosts.slack._lanes`).
    """

    recipe: str
    agent: str | None = None
    model: str | None = None
    channel: str | None = None
    allow: AllowList = AllowList()
    command: str | None = None
    full_text_url: str | None = None
    expire_every: float = 60.0
    repost_every: float = 30.0
    max_legs: int = 4
    api_url: str | None = None
    stop_grace: float = 30.0
    lane_capacity: int = 1000
    users: Users | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.channel is not None and not _CHANNEL.fullmatch(self.channel):
            raise UsageError(f"--channel {self.channel!r}: give a channel id (C…), not a name")
        if self.command is not None and not re.fullmatch(r"/[a-z0-9_-]{1,31}", self.command):
            raise UsageError(f"--command {self.command!r}: a slash command such as /release")
        if not self.expire_every > 0:
            raise UsageError(f"--expire-every must be > 0 seconds, got {self.expire_every!r}")
        if not self.repost_every > 0:
            raise UsageError(f"repost_every must be > 0 seconds, got {self.repost_every!r}")
        if self.max_legs < 1:
            raise UsageError(f"max_legs must be >= 1, got {self.max_legs!r}")
        if self.lane_capacity < 1:
            raise UsageError(f"lane_capacity must be >= 1, got {self.lane_capacity!r}")
        if not 0 <= self.stop_grace < math.inf:
            raise UsageError(f"stop_grace must be >= 0 seconds, got {self.stop_grace!r}")
        if self.full_text_url is not None:
            try:
                self.full_text_url.format(run_id="r", interaction_id="i")
            except (KeyError, IndexError, ValueError):
                raise UsageError(
                    "--full-text-url takes only {run_id} and {interaction_id} placeholders"
                ) from None
