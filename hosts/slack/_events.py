"""What starts a run from Slack: an app mention (Events API) or a slash command, read into
typed requests; and how a run remembers its Slack thread. Pure.

A run started in a thread stores ``slack:<channel>:<thread ts>`` as its AG-UI thread id, so
any process that reads the run knows where its replies and cards go; a run started elsewhere
has another thread id and its cards go to the host's channel.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hosts.slack._mrkdwn import unescape
from interactions import InvalidPayloadError

__all__ = [
    "RUN_PREFIX",
    "Command",
    "Mention",
    "parse_command",
    "parse_event",
    "run_id_for",
    "slack_thread_of",
    "thread_id_for",
    "thread_of",
]

_LEADING_MENTIONS = re.compile(r"^\s*(?:<@[A-Z0-9]+(?:\|[^>]*)?>\s*)+")
_SAFE_ID = re.compile(r"[A-Za-z0-9._-]{1,100}")
_PREFIX = "slack:"


@dataclass(frozen=True)
class Mention:
    """The app was mentioned: ``prompt`` is the text after the mention, as typed; the run's
    replies go to the thread ``thread_ts`` in ``channel`` (the mention's own thread, or the
    thread it starts)."""

    event_id: str
    user: str
    channel: str
    prompt: str
    thread_ts: str


@dataclass(frozen=True)
class Command:
    """A slash command: ``text`` as typed after the command; ``response_url`` where Slack takes
    replies to the person (``None`` if the payload has none)."""

    command: str
    text: str
    user: str
    channel: str
    response_url: str | None = None


def _bad(message: str) -> InvalidPayloadError:
    return InvalidPayloadError(message, reason="slack_payload")


def _text(data: Mapping[str, Any], key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value:
        raise _bad(f"the payload's {key!r} is missing or not text")
    return value


def parse_event(body: Mapping[str, Any]) -> Mention | None:
    """The mention an Events API envelope carries, or ``None`` for any other event (a bot's
    own message, an edit, an event type this host does not handle)."""
    if body.get("type") != "event_callback":
        return None
    event = body.get("event")
    if not isinstance(event, Mapping) or event.get("type") != "app_mention":
        return None
    if event.get("bot_id") or event.get("subtype"):
        return None  # a bot's message (ours included) or an edit: never starts a run
    ts = _text(event, "ts")
    thread = event.get("thread_ts")
    return Mention(
        event_id=_text(body, "event_id"),
        user=_text(event, "user"),
        channel=_text(event, "channel"),
        prompt=unescape(_LEADING_MENTIONS.sub("", str(event.get("text") or ""))).strip(),
        thread_ts=thread if isinstance(thread, str) and thread else ts,
    )


def parse_command(form: Mapping[str, Any]) -> Command:
    """A slash command's fields (``InvalidPayloadError`` when one is missing)."""
    return Command(
        command=_text(form, "command"),
        text=unescape(str(form.get("text") or "")).strip(),
        user=_text(form, "user_id"),
        channel=_text(form, "channel_id"),
        response_url=str(form.get("response_url") or "") or None,
    )


def thread_id_for(channel: str, thread_ts: str) -> str:
    """The AG-UI thread id of a run whose replies go to ``thread_ts`` in ``channel``."""
    return f"{_PREFIX}{channel}:{thread_ts}"


def thread_of(thread_id: str) -> tuple[str, str] | None:
    """The Slack channel and thread a run's thread id names, or ``None`` for another id."""
    if not thread_id.startswith(_PREFIX):
        return None
    channel, sep, ts = thread_id[len(_PREFIX) :].partition(":")
    if not sep or not _SAFE_ID.fullmatch(channel) or not _SAFE_ID.fullmatch(ts):
        return None
    return channel, ts


def run_id_for(event_id: str) -> str:
    """The run an event starts: derived from Slack's event id, so a redelivered event (Slack
    retries until acknowledged) finds its run taken and starts nothing twice."""
    if not _SAFE_ID.fullmatch(event_id):
        raise _bad(f"not a Slack event id: {event_id[:40]!r}")
    return f"{RUN_PREFIX}{event_id}"


RUN_PREFIX = "run-slack-"
"""How the ids of the runs the Slack host starts begin (see :func:`slack_thread_of`)."""


def slack_thread_of(run_id: str, thread_id: str) -> tuple[str, str] | None:
    """The Slack channel and thread of a run the Slack host started, or ``None``. A thread id
    is chosen by whoever starts a run (an AG-UI client names its own): one that merely looks
    like a Slack thread must not point the host's posts at a channel of its choosing."""
    return thread_of(thread_id) if run_id.startswith(RUN_PREFIX) else None
