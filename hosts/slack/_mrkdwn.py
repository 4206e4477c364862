"""Text for Slack, rendered literally: escaping, truncation with "…", times and people.

Pure functions. Text from models, recipes and users goes into mrkdwn only through
:func:`escape` (or :func:`fit`, which escapes and truncates): ``&``, ``<`` and ``>`` become
entities, so ``<!channel>`` or ``<@U123>`` in a question shows as typed and pings no one.
Mentions and dates are built here from ids and times, never from text.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

__all__ = [
    "ELLIPSIS",
    "escape",
    "fit",
    "fit_mrkdwn",
    "fit_plain",
    "person",
    "slack_date",
    "time_left",
    "unescape",
]

ELLIPSIS = "…"

_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_USER_ID = re.compile(r"[UW][A-Z0-9]{2,}")
_PIECE = re.compile(r"<[^<>]*>|&(?:amp|lt|gt);|.", re.DOTALL)  # a token, an entity, a char


def escape(text: str) -> str:
    """``text`` as mrkdwn that shows exactly ``text``: no mention, link or command is parsed."""
    return "".join(_ENTITIES.get(c, c) for c in text)


def unescape(text: str) -> str:
    """Text Slack sent (events carry ``&lt;`` etc.) as the person typed it."""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def fit(text: str, limit: int) -> tuple[str, bool]:
    """``text`` escaped for mrkdwn, cut to at most ``limit`` characters with a trailing "…"
    (never inside an entity); the flag says whether it was cut."""
    escaped = escape(text)
    if len(escaped) <= limit:
        return escaped, False
    out: list[str] = []
    used = 0
    for char in text:
        piece = _ENTITIES.get(char, char)
        if used + len(piece) > limit - len(ELLIPSIS):
            break
        out.append(piece)
        used += len(piece)
    return "".join(out).rstrip() + ELLIPSIS, True


def fit_mrkdwn(mrkdwn: str, limit: int) -> tuple[str, bool]:
    """``mrkdwn`` (already built: user text escaped, mentions and dates made here) cut to at
    most ``limit`` characters with a trailing "…", never inside an entity or a ``<…>`` token;
    the flag says whether it was cut."""
    if len(mrkdwn) <= limit:
        return mrkdwn, False
    out: list[str] = []
    used = 0
    for piece in _PIECE.findall(mrkdwn):
        if used + len(piece) > limit - len(ELLIPSIS):
            break
        out.append(piece)
        used += len(piece)
    return "".join(out).rstrip() + ELLIPSIS, True


def fit_plain(text: str, limit: int) -> str:
    """``text`` for a ``plain_text`` object (shown as is), cut to ``limit`` with "…"."""
    text = " ".join(text.split()) if "\n" in text else text
    if len(text) <= limit:
        return text
    return text[: limit - len(ELLIPSIS)].rstrip() + ELLIPSIS


def slack_date(when: datetime) -> str:
    """``when`` as a Slack date token: each reader sees it in their own time zone."""
    fallback = when.strftime("%Y-%m-%d %H:%M UTC")
    return f"<!date^{int(when.timestamp())}^{{date_short_pretty}} at {{time}}|{fallback}>"


def time_left(left: timedelta) -> str:
    """A rough duration for people: ``6 days``, ``5 hours``, ``12 minutes``..."""
    seconds = int(left.total_seconds())
    if seconds < 60:
        return "less than a minute"
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            count = seconds // size
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return "less than a minute"  # pragma: no cover - the loop always returns


def person(answered_by: str | None, via: str | None) -> str:
    """Who answered, as mrkdwn: a Slack user id answering in Slack becomes a mention
    (``@alice`` to readers), as does an unmapped one (``slack:U…``); anyone else is their name
    as text, with the host they used."""
    user = (answered_by or "").removeprefix("slack:")
    if via == "slack" and _USER_ID.fullmatch(user):
        return f"<@{user}>"
    who = escape(answered_by) if answered_by else "someone"
    return f"{who} via {escape(via)}" if via else who
