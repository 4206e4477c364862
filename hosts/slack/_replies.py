"""What the host says in a run's thread (the assistant's replies, how the run ended), and the
replies Slack refused or could not take, kept to be posted again in their thread's order, for
at most :data:`MAX_REPOSTS` reposts in a row that Slack refuses."""

from __future__ import annotations

import logging

from hosts.slack._client import SlackOut

__all__ = ["MAX_REPOSTS", "UNSAID_KEPT", "Replies"]

logger = logging.getLogger("hosts.slack")

UNSAID_KEPT = 100
"""Replies of one run kept to be posted again while Slack refuses them."""

MAX_REPOSTS = 120
"""Reposts of a run's kept replies that Slack may refuse in a row (an hour at the default
``repost_every`` of 30 s) before they are given up, logged with their thread: a channel that
stays closed to the app (archived, deleted, the app removed) would otherwise be tried forever."""


class Replies:
    """Replies in runs' threads; a refused one waits, with every later one of its run."""

    def __init__(self, out: SlackOut, repost_every: float) -> None:
        self.out = out
        self.repost_every = repost_every
        self._unsaid: dict[str, list[tuple[str, str, str]]] = {}  # run: (channel, thread, text)
        self._refused: dict[str, int] = {}  # run: reposts Slack refused in a row

    def runs(self) -> set[str]:
        """The runs with replies waiting to be posted again."""
        return set(self._unsaid)

    def waiting(self) -> int:
        """How many replies wait to be posted again."""
        return sum(len(kept) for kept in self._unsaid.values())

    async def say(self, run_id: str, channel: str, thread: str, text: str) -> None:
        """Reply in the run's thread; a reply Slack refused or could not take is kept (at most
        :data:`UNSAID_KEPT` a run, past that logged and dropped) and posted again by
        :meth:`repost`, before any later one of that run, so the thread still reads in
        order."""
        waiting = self._unsaid.get(run_id)
        if not waiting and await self.out.reply(channel, thread, text) is not None:
            return
        kept = self._unsaid.setdefault(run_id, [])
        if not kept:
            logger.warning(
                "a reply in thread %s of %s could not be posted; trying again every %g s",
                thread, channel, self.repost_every,
            )  # fmt: skip
        if len(kept) < UNSAID_KEPT:
            kept.append((channel, thread, text))
        else:
            logger.warning("a reply in thread %s of %s is dropped: %d wait for Slack already",
                           thread, channel, UNSAID_KEPT)  # fmt: skip

    async def repost(self, run_id: str) -> None:
        """Post the run's kept replies, in order, until Slack refuses one again; after
        :data:`MAX_REPOSTS` refused reposts in a row, give them up (logged)."""
        kept = self._unsaid.get(run_id, [])
        posted = 0
        while kept and await self.out.reply(*kept[0]) is not None:
            kept.pop(0)
            posted += 1
        if not kept:
            self._unsaid.pop(run_id, None)
            self._refused.pop(run_id, None)
            return
        refused = self._refused[run_id] = 0 if posted else self._refused.get(run_id, 0) + 1
        if refused >= MAX_REPOSTS:
            channel, thread, _ = kept[0]
            logger.warning(
                "the replies kept for thread %s of %s (%d) are given up: Slack refused them %d "
                "times in a row over %g s", thread, channel, len(kept), refused,
                refused * self.repost_every,
            )  # fmt: skip
            del self._unsaid[run_id], self._refused[run_id]
