"""The feed follower: the store-wide feed made visible in Slack.

It follows ``store.watch`` and, for every run of every kind however started:

- posts a card for each new interaction (in the run's Slack thread, or in the host's channel
  for a run started elsewhere) and records where (a ``slack_card_posted`` event on the run, so
  a restarted host finds its cards again); a card Slack refused or could not take is logged
  once and posted again every ``repost_every`` seconds while its question is open;
- updates the card in place when the interaction is answered, from anywhere, or expires (a
  redraw Slack refused or could not take is tried again with the reposts), and records that
  it drew it closed (a ``slack_card_closed`` event): a restarted host redraws the cards of the
  questions answered or expired while no host ran (:meth:`Follower.catch_up`);
- posts the assistant's replies of runs started in Slack into their thread, and says there
  when such a run fails or is cancelled, or finishes on an answer that may not be whole (cut
  at the model's output limit, stopped by a content filter, a refusal); a reply Slack refused
  or could not take is posted again with the cards, in its thread's order.

A leg's events are written in one transaction whose interactions come first; the cards of a
transaction are posted after its text, so a thread reads in the order things were said.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

import anyio

from hosts.slack._cards import Card, closed_card, open_card
from hosts.slack._client import SlackOut
from hosts.slack._config import SlackConfig
from hosts.slack._events import slack_thread_of
from hosts.slack._refs import digest_of
from interactions import UnknownInteractionError, UnknownRunError
from interactions.store import (
    EventRecord,
    InteractionRecord,
    RunRecord,
    Store,
    StoreEventType,
    utc_now,
)
from recipes.runs import LEG_ENDED, RunView, event_json, leg_agui_events

__all__ = ["CARD_EVENT", "CATCH_UP_RUNS", "CLOSED_EVENT", "CardSpot", "Follower"]

logger = logging.getLogger("hosts.slack")

RETRY_FEED = 1.0  # seconds before following a failed feed again
UNSAID_KEPT = 100
"""Replies of one thread kept to be posted again while Slack refuses them."""

CARD_EVENT = "slack_card_posted"
"""The event recording where an interaction's card is: ``{interaction_id, channel, ts,
thread_ts}``."""
CLOSED_EVENT = "slack_card_closed"
"""The event recording that an interaction's card was drawn closed: ``{interaction_id}``."""
CATCH_UP_RUNS = 500
"""How many of the newest runs a restarted host looks through for cards left open."""
MAX_REDRAWS = 10
"""Tries of a card's redraw (one now, then one each ``repost_every``) before giving up."""

_NOTES = {
    "failed": "⚠️ The run failed: {error}",
    "failed_resumable": "⚠️ The run stopped: {error}. Retry it with: pi-recipes runs retry {run}",
    "cancelled": "The run was cancelled.",
}
_WARNING = "⚠️ {warning}"
"""Said under a finished run's last answer when it may not be whole (``RunResult.warning``)."""


@dataclass(frozen=True)
class CardSpot:
    """Where a card is: its channel, its message and the thread it is in."""

    channel: str
    ts: str
    thread_ts: str | None = None


class Follower:
    """Keeps Slack in step with the store (see the module docstring)."""

    def __init__(
        self,
        store: Store,
        out: SlackOut,
        config: SlackConfig,
        *,
        clock: Callable[[], datetime] = utc_now,
        view: Callable[[RunRecord], RunView] | None = None,
    ) -> None:
        self.store = store
        self.view = view
        self.out = out
        self.config = config
        self.clock = clock
        self._cards: dict[tuple[str, str], CardSpot] = {}
        self._places: dict[str, tuple[str, str | None] | None] = {}
        self._texts: dict[str, list[str]] = {}
        self._deferred: dict[str, list[tuple[int, str]]] = {}
        self._scanned: set[str] = set()
        self._posting: set[tuple[str, str]] = set()
        self._unposted: set[tuple[str, str]] = set()
        self._unsaid: dict[tuple[str, str], list[str]] = {}
        self._undrawn: dict[tuple[str, str], int] = {}  # cards whose redraw failed: tries
        self._cursor = 0  # the feed's last event shown
        self._moved = anyio.Event()

    async def catch_up(self) -> int:
        """Show what happened while no host ran: post the cards of open interactions that
        have none yet, and redraw the cards (of the newest :data:`CATCH_UP_RUNS` runs) left
        open of questions since answered or expired. Return the feed cursor to follow from."""
        cursor = self._cursor = await self.store.latest_cursor()
        for record in await self.store.list_interactions(pending=True):
            if record.kind != "await" and await self.spot(record.run_id, record.id) is None:
                await self._post(record)
        now = self.clock()
        for run in await self.store.list_runs(limit=CATCH_UP_RUNS):
            events = await self.store.list_events(run.id)
            for event in events:  # known from now on: a late click on any of them finds it
                if event.type == CARD_EVENT:
                    self._remember(event)
            self._scanned.add(run.id)
            drawn = {str(e.data["interaction_id"]) for e in events if e.type == CARD_EVENT}
            closed = {str(e.data["interaction_id"]) for e in events if e.type == CLOSED_EVENT}
            if not drawn - closed:
                continue
            for record in await self.store.list_interactions(run.id):
                if record.id in drawn - closed and _is_closed(record, now):
                    await self.refresh(run.id, record.id)
        return cursor

    async def settle(self, within: float) -> None:
        """Wait, at most ``within`` seconds, until the feed was shown up to what the store
        holds now (a host stopping lets the follower say how its last legs ended)."""
        target = await self.store.latest_cursor()
        with anyio.move_on_after(within):
            while self._cursor < target:
                await self._moved.wait()

    async def follow(self, after: int) -> None:
        """Follow the feed from ``after`` until cancelled. A failing event is logged and
        skipped; a feed that fails (a database gone away) is followed again from the last
        event seen, after ``RETRY_FEED`` seconds."""
        cursor = after
        while True:
            try:
                async with self.store.watch(after=cursor) as feed:
                    async for event in feed:
                        cursor = event.cursor
                        try:
                            await self._on(event)
                        except Exception:
                            logger.exception(
                                "could not show %s of %s in Slack", event.type, event.run_id
                            )
                        self._cursor = cursor
                        self._moved.set()
                        self._moved = anyio.Event()
            except Exception:
                logger.exception("the store's feed failed; following it again")
                await anyio.sleep(RETRY_FEED)

    async def repost_forever(self) -> None:
        """Every ``repost_every`` seconds, post again the cards that could not be posted (Slack
        refused them or was out of reach) while their questions are open, until cancelled."""
        while True:
            await anyio.sleep(self.config.repost_every)
            try:
                await self.repost()
            except Exception:
                logger.exception("could not post the missing cards again; trying later")

    async def repost(self) -> None:
        """Post the replies that could not be posted (in order, thread by thread), the cards
        that could not be posted, for the questions still open, and redraw the cards whose
        redraw failed."""
        for run_id, interaction_id in sorted(self._undrawn):
            await self.refresh(run_id, interaction_id)
        for (channel, thread), texts in list(self._unsaid.items()):
            while texts and await self.out.reply(channel, thread, texts[0]) is not None:
                texts.pop(0)
            if not texts:
                del self._unsaid[(channel, thread)]
        now = self.clock()
        for run_id, interaction_id in sorted(self._unposted):
            try:
                record = await self.store.get_interaction(run_id, interaction_id)
            except (UnknownRunError, UnknownInteractionError):
                record = None
            if record is None or record.answer is not None or record.expires_at < now:
                self._unposted.discard((run_id, interaction_id))
                continue
            await self._post(record)

    async def spot(self, run_id: str, interaction_id: str) -> CardSpot | None:
        """Where the interaction's card is, if this host (or an earlier one) posted it."""
        key = (run_id, interaction_id)
        if key not in self._cards and run_id not in self._scanned:
            self._scanned.add(run_id)  # every card of the run, once; later ones come by the feed
            for event in await self.store.list_events(run_id):
                if event.type == CARD_EVENT:
                    self._remember(event)
        return self._cards.get(key)

    def card_of(self, digest: str) -> tuple[str, str] | None:
        """The ``(run_id, interaction_id)`` of a card this host posted or found whose ids
        travel as ``digest`` (ids too long for a block id), or ``None``."""
        return next((key for key in self._cards if digest_of(*key) == digest), None)

    def _remember(self, event: EventRecord) -> None:
        data = event.data
        self._cards[(event.run_id, str(data["interaction_id"]))] = CardSpot(
            channel=str(data["channel"]), ts=str(data["ts"]), thread_ts=data.get("thread_ts")
        )

    async def refresh(self, run_id: str, interaction_id: str) -> None:
        """Redraw the interaction's card from the store: open, answered, or expired (then
        record that it is drawn closed)."""
        spot = await self.spot(run_id, interaction_id)
        if spot is None:
            return
        record = await self.store.get_interaction(run_id, interaction_id)
        drawn = await self.out.update_card(spot.channel, spot.ts, self._card(record))
        key = (run_id, interaction_id)
        if not drawn:  # Slack refused it or was out of reach: redrawn with the reposts
            tries = self._undrawn[key] = self._undrawn.get(key, 0) + 1
            if tries >= MAX_REDRAWS:  # deleted in Slack, say: it will not take one
                logger.warning("the card of %s (run %s) could not be redrawn; given up after "
                               "%d tries", interaction_id, run_id, tries)  # fmt: skip
                del self._undrawn[key]
            return
        self._undrawn.pop(key, None)
        if _is_closed(record, self.clock()):
            await self.store.append_events(run_id, [(CLOSED_EVENT, {"interaction_id": record.id})])

    def _card(self, record: InteractionRecord) -> Card:
        now = self.clock()
        if not _is_closed(record, now):
            return open_card(record, now=now, full_text_url=self.config.full_text_url)
        return closed_card(record, now=now, full_text_url=self.config.full_text_url)

    async def _place(self, run_id: str) -> tuple[str, str | None] | None:
        """The channel (and thread) of a run's cards: its Slack thread (a run this host
        started), else the host's channel; ``None`` when it has neither."""
        if run_id not in self._places:
            run = await self.store.get_run(run_id)
            place = slack_thread_of(run.id, run.thread_id)
            if place is None and self.config.channel is None:
                logger.warning("run %s asks a question, but no --channel shows it", run_id)
            self._places[run_id] = place or (
                (self.config.channel, None) if self.config.channel else None
            )
        return self._places[run_id]

    async def _post(self, record: InteractionRecord) -> None:
        key = (record.run_id, record.id)
        place = await self._place(record.run_id)
        if key in self._cards or key in self._posting or place is None:
            return
        channel, thread = place
        card = self._card(record)
        self._posting.add(key)
        try:
            ts = await self.out.post_card(channel, thread, card)
        finally:
            self._posting.discard(key)
        if ts is None:
            if key not in self._unposted:
                logger.warning(
                    "the card of %s (run %s) could not be posted in %s; no one sees the question "
                    "in Slack until it is: trying again every %g s",
                    record.id, record.run_id, channel, self.config.repost_every,
                )  # fmt: skip
            self._unposted.add(key)
            return
        self._unposted.discard(key)
        self._cards[key] = CardSpot(channel, ts, thread)
        data = {"interaction_id": record.id, "channel": channel, "ts": ts, "thread_ts": thread}
        await self.store.append_events(record.run_id, [(CARD_EVENT, data)])

    async def _on(self, event: EventRecord) -> None:
        kind, data, run_id = event.type, event.data, event.run_id
        if kind == StoreEventType.INTERACTION_REQUESTED and data.get("kind") != "await":
            later = await self.store.list_events(run_id, after_seq=event.seq)
            last = event.seq
            for other in later:  # the rest of the same write: post the card after it
                if other.at != event.at or other.seq != last + 1:
                    break
                last = other.seq
            self._deferred.setdefault(run_id, []).append((last, str(data["interaction_id"])))
        elif kind == CARD_EVENT:
            self._remember(event)
        elif kind == StoreEventType.INTERACTION_ANSWERED:
            await self.refresh(run_id, str(data["interaction_id"]))
        elif kind == LEG_ENDED:  # what the assistant said in that leg, rebuilt from the store
            for shown in await leg_agui_events(self.store, event):
                if shown.type.value in (
                    "TEXT_MESSAGE_START",
                    "TEXT_MESSAGE_CONTENT",
                    "TEXT_MESSAGE_END",
                ):
                    await self._text(run_id, shown.type.value, event_json(shown))
        elif kind == StoreEventType.RUN_STATUS_CHANGED and data.get("to") in _NOTES:
            place = await self._place(run_id)
            if place is not None and place[1] is not None:
                note = _NOTES[str(data["to"])].format(error=data.get("error") or "", run=run_id)
                await self._say(place[0], place[1], note)
        elif kind == StoreEventType.RUN_STATUS_CHANGED and data.get("to") == "finished":
            await self._warn(run_id)
        await self._flush(run_id, event.seq)

    async def _warn(self, run_id: str) -> None:
        """Say, in the thread of a run started in Slack, why its last answer may not be whole."""
        place = await self._place(run_id)
        if self.view is None or place is None or place[1] is None:
            return
        warning = self.view(await self.store.get_run(run_id)).warning
        if warning:
            await self._say(place[0], place[1], _WARNING.format(warning=warning))

    async def _say(self, channel: str, thread: str, text: str) -> None:
        """Reply in the thread; a reply Slack refused or could not take is kept (at most
        :data:`UNSAID_KEPT` a thread) and posted again with the cards, before any later one
        of that thread, so the thread still reads in order."""
        waiting = self._unsaid.get((channel, thread))
        if not waiting and await self.out.reply(channel, thread, text) is not None:
            return
        if not waiting:
            logger.warning(
                "a reply in thread %s of %s could not be posted; trying again every %g s",
                thread, channel, self.config.repost_every,
            )  # fmt: skip
        kept = self._unsaid.setdefault((channel, thread), [])
        if len(kept) < UNSAID_KEPT:
            kept.append(text)

    async def _flush(self, run_id: str, seq: int) -> None:
        waiting = self._deferred.get(run_id)
        if not waiting:
            return
        due = [iid for last, iid in waiting if last <= seq]
        self._deferred[run_id] = [(last, iid) for last, iid in waiting if last > seq]
        for interaction_id in due:
            try:
                record = await self.store.get_interaction(run_id, interaction_id)
            except (UnknownRunError, UnknownInteractionError):
                continue
            await self._post(record)

    async def _text(self, run_id: str, kind: str, data: dict[str, object]) -> None:
        message = str(data.get("messageId"))
        if kind == "TEXT_MESSAGE_START":
            self._texts[message] = []
        elif kind == "TEXT_MESSAGE_CONTENT":
            self._texts.setdefault(message, []).append(str(data.get("delta") or ""))
        else:
            text = "".join(self._texts.pop(message, []))
            place = await self._place(run_id)
            if text.strip() and place is not None and place[1] is not None:
                await self._say(place[0], place[1], text)


def _is_closed(record: InteractionRecord, now: datetime) -> bool:
    """Whether the interaction takes no more answers: answered, or past its expiry."""
    return record.answer is not None or record.expires_at < now
