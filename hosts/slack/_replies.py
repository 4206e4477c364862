"""What the host says in a run's thread (the assistant's replies, how the run ended), and the
replies Slack refused or could not take, kept to be posted again in their thread's order."""

from __future__ import annotations

import logging

from hosts.slack._client import SlackOut

__all__ = ["UNSAID_KEPT", "Replies"]

logger = logging.getLogger("hosts.slack")

UNSAID_KEPT = 100
"""Replies of one run kept to be posted again while Slack refuses them."""


class Replies:
    """Replies in runs' threads; a refused one waits, with every later one of its run."""

    def __init__(self, out: SlackOut, repost_every: float) -> None:
        self.out = out
        self.repost_every = repost_every
        self._unsaid: dict[str, list[tuple[str, str, str]]] = {}  # run: (channel, thread, text)

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
        """Post the run's kept replies, in order, until Slack refuses one again."""
        kept = self._unsaid.get(run_id, [])
        while kept and await self.out.reply(*kept[0]) is not None:
            kept.pop(0)
        if not kept:
            self._unsaid.pop(run_id, None)
