"""The feed follower: the store-wide feed made visible in Slack.

It follows ``store.watch`` (the kit's :class:`~hosts._kit.StoreFeed`; what each event means is
the kit's :class:`~hosts._kit.Reader`'s) and, for every run of every kind however started:

- posts a card for each new interaction (in the run's Slack thread, or in the host's channel
  for a run started elsewhere) and records where (a ``slack_card_posted`` event on the run, so
  a restarted host finds its cards again); a card Slack refused or could not take is logged
  once and posted again every ``repost_every`` seconds while its question is open;
- replies in a question's thread when it is reminded of, or escalated (who may answer now);
- updates the card in place when someone votes on an approval several people must give ("1 of
  2 approvals: ada"), and when the interaction is answered, from anywhere, or expires (a
  redraw Slack refused or could not take is tried again with the reposts), and records that
  it drew it closed (a ``slack_card_closed`` event): a restarted host redraws the cards of the
  questions answered or expired while no host ran (:meth:`Follower.catch_up`);
- posts the assistant's replies of runs started in Slack into their thread, and says there
  when such a run fails or is cancelled, or finishes on an answer that may not be whole (cut
  at the model's output limit, stopped by a content filter, a refusal); a reply Slack refused
  or could not take is posted again with the cards, in its thread's order.

What it says about a run goes through the run's own lane (:mod:`hosts.slack._lanes`), in the
order of the feed: when Slack holds up a channel (a 429 waited out), the runs posting there
wait, never the others. The catch-up, the reposts and the feed's events of a run share its
lane. A full lane (:data:`~hosts.slack._lanes.LANE_CAPACITY` updates behind: Slack held the
channel up that long) takes no more of the run's events, and says so in the log; once it moves
again the run's cards are brought up to date from the store, and its thread says that some of
the run is missing there and how to see it.

A leg's events are written in one transaction whose interactions come first; the cards of a
transaction are posted after its text, so a thread reads in the order things were said. A card
does not wait for an earlier reply Slack refused (a question is never held back by a reply).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from datetime import datetime
from functools import partial
from typing import assert_never

import anyio
import anyio.abc
from anyio.abc import TaskGroup

from hosts._kit import (
    LegEnded,
    QuestionClosed,
    QuestionOpened,
    QuestionReminded,
    QuestionVoted,
    Reader,
    RunCreated,
    StatusChanged,
    StoreFeed,
    answerable,
    is_answerable,
    tally_of,
)
from hosts.slack._cards import Card, closed_card, open_card
from hosts.slack._client import SlackOut
from hosts.slack._config import SlackConfig
from hosts.slack._events import slack_thread_of
from hosts.slack._lanes import LANE_CAPACITY, Lanes
from hosts.slack._replies import Replies
from hosts.slack._spots import CARD_EVENT, CLOSED_EVENT, CardSpot, Spots
from interactions import UnknownInteractionError, UnknownRunError
from interactions.store import EventRecord, InteractionRecord, RunRecord, RunStatus, Store, utc_now
from recipes.runs import RunView

__all__ = ["CARD_EVENT", "CATCH_UP_RUNS", "CLOSED_EVENT", "CardSpot", "Follower"]

logger = logging.getLogger("hosts.slack")

CATCH_UP_RUNS = 500
"""How many of the newest runs a restarted host looks through for cards left open."""
MAX_REDRAWS = 10
"""Tries of a card's redraw (one now, then one each ``repost_every``) before giving up."""

_NOTES = {
    "failed": "⚠️ The run failed: {error}",
    "failed_resumable": "⚠️ The run stopped: {error}. Retry it with: pi-recipes runs retry {run}",
    "cancelled": "The run was cancelled.",
}
_REMINDED = "⏰ Reminder {count}: this question still waits for an answer from {who}."
"""Said in a question's thread when a reminder is due (``remind_after``)."""
_ESCALATED = "⬆️ Escalated to {added}: {who} may answer it now."
"""Said in a question's thread when it is escalated (``escalate_after``, ``escalate_to``)."""
_WARNING = "⚠️ {warning}"
"""Said under a finished run's last answer when it may not be whole (``RunResult.warning``)."""
_MISSED = (
    "⚠️ Slack held this thread up while the run went on: some of what it said and asked is "
    "missing here; its open questions follow. The whole run: pi-recipes runs show {run}"
)
"""Said in a run's thread once its lane moves again after it was full."""
_ENDED = ("finished", "failed", "cancelled")


class Follower:
    """Keeps Slack in step with the store (see the module docstring). Its lanes run on the
    task group given to :meth:`attach`."""

    def __init__(
        self,
        store: Store,
        out: SlackOut,
        config: SlackConfig,
        *,
        clock: Callable[[], datetime] = utc_now,
        view: Callable[[RunRecord], RunView] | None = None,
        lane_capacity: int = LANE_CAPACITY,
    ) -> None:
        self.store = store
        self.reader = Reader(store, view)
        self.feed = StoreFeed(store, self._dispatch)
        self.out = out
        self.config = config
        self.clock = clock
        self.spots = Spots(store)
        self._lanes = Lanes(lane_capacity)
        self.replies = Replies(out, config.repost_every)
        self._places: dict[str, tuple[str, str | None] | None] = {}
        self._deferred: dict[str, list[tuple[int, str]]] = {}
        self._posting: set[tuple[str, str]] = set()
        self._unposted: set[tuple[str, str]] = set()
        self._undrawn: dict[tuple[str, str], int] = {}  # cards whose redraw failed: tries
        self._reposting: set[str] = set()  # runs whose lane holds a repost
        self._dropped: dict[str, int] = {}  # runs whose full lane refused events: how many
        self._catching_up: set[str] = set()  # runs whose lane holds a catch-up not started

    def attach(self, group: TaskGroup | None) -> None:
        """Run the lanes on ``group`` (before :meth:`catch_up`; ``None``: take no more)."""
        self._lanes.attach(group)

    async def catch_up(self) -> int:
        """Show what happened while no host ran: post the cards of open interactions that
        have none yet, and redraw the cards (of the newest :data:`CATCH_UP_RUNS` runs) left
        open of questions since answered or expired. The posts go through the runs' lanes;
        return the feed cursor to follow from."""
        cursor = await self.store.latest_cursor()
        for record in answerable(await self.store.list_interactions(pending=True)):
            if await self.spot(record.run_id, record.id) is None:
                self._lanes.submit(record.run_id, partial(self._post, record), record.id)
        now = self.clock()
        for run in await self.store.list_runs(limit=CATCH_UP_RUNS):
            events = await self.store.list_events(run.id)
            self.spots.scanned(run.id, events)  # known from now on: a late click finds them
            left = _left_open(events)
            if not left:
                continue
            for record in await self.store.list_interactions(run.id):
                if record.id in left and _is_closed(record, now):
                    redraw = partial(self.refresh, run.id, record.id)
                    self._lanes.submit(run.id, redraw, f"the card of {record.id}")
        return cursor

    async def settle(self, within: float) -> None:
        """Wait, at most ``within`` seconds, until the feed was shown up to what the store
        holds now (a host stopping lets the follower say how its last legs ended); what is
        left unshown then is logged."""
        target = await self.store.latest_cursor()
        deadline = anyio.current_time() + within
        await self.feed.reached(target, within=within)
        left = max(0.0, deadline - anyio.current_time())
        if not await self._lanes.drain(left) or self.replies.waiting():
            logger.warning(
                "stopping with Slack behind: %d updates of %d runs not shown, %d replies and "
                "%d cards not posted (a restarted host posts the cards of open questions)",
                self._lanes.waiting(), len(self._lanes), self.replies.waiting(),
                len(self._unposted),
            )  # fmt: skip

    async def follow(
        self, after: int, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Follow the feed from ``after`` until :meth:`stop` or a cancel, handing each event
        to its run's lane (a feed that fails is followed again from the last event handed
        over: :meth:`hosts._kit.StoreFeed.run`)."""
        await self.feed.run(after=after, task_status=task_status)

    def stop(self) -> None:
        """Stop following the feed (what the lanes hold is still shown)."""
        self.feed.stop()

    async def _dispatch(self, event: EventRecord) -> None:
        if event.type == CARD_EVENT:  # known at once: a click on the card finds it
            self.spots.remember(event)
            return
        run_id = event.run_id
        if self._lanes.submit(run_id, partial(self._on, event), f"{event.type} of {run_id}"):
            return
        dropped = self._dropped[run_id] = self._dropped.get(run_id, 0) + 1
        if dropped == 1:
            logger.warning(
                "Slack is %d updates behind on run %s (its lane is full): what the run does "
                "next is not shown until it moves again; its cards are then brought up to date",
                self._lanes.capacity, run_id,
            )  # fmt: skip
        if run_id not in self._catching_up:  # once its lane moves again (the one room kept)
            catch_up = partial(self._resync, run_id)
            if self._lanes.submit(run_id, catch_up, f"the catch-up of {run_id}", reserve=True):
                self._catching_up.add(run_id)

    async def _resync(self, run_id: str) -> None:
        """Bring a run whose full lane refused events up to date: its cards from the store,
        and a note in its thread that updates were missed."""
        self._catching_up.discard(run_id)
        dropped = self._dropped.pop(run_id, 0)
        logger.warning("run %s: %d updates were not shown in Slack; bringing its cards up to "
                       "date", run_id, dropped)  # fmt: skip
        self._deferred.pop(run_id, None)
        place = await self._place(run_id)
        if place is not None and place[1] is not None:
            note = _MISSED.format(run=run_id)
            await self.replies.say(run_id, place[0], place[1], note)
        events = await self.store.list_events(run_id)
        self.spots.scanned(run_id, events)
        left, now = _left_open(events), self.clock()
        for record in await self.store.list_interactions(run_id):
            drawn = (run_id, record.id) in self.spots
            if is_answerable(record) and not drawn and not _is_closed(record, now):
                await self._post(record)
            elif record.id in left and _is_closed(record, now):
                await self.refresh(run_id, record.id)

    async def repost_forever(self) -> None:
        """Every ``repost_every`` seconds, post again the cards that could not be posted (Slack
        refused them or was out of reach) while their questions are open, until cancelled."""
        while True:
            await anyio.sleep(self.config.repost_every)
            try:
                self.repost()
            except Exception:
                logger.exception("could not post the missing cards again; trying later")

    def repost(self) -> None:
        """Queue, on each run's lane, its replies that could not be posted (in order), its
        redraws that failed and its cards that could not be posted (of questions still
        open): one repost a run at a time."""
        runs = {run for run, _ in self._undrawn} | self.replies.runs()
        runs |= {run for run, _ in self._unposted}
        for run_id in sorted(runs - self._reposting):
            if self._lanes.submit(run_id, partial(self._repost, run_id), f"reposts of {run_id}"):
                self._reposting.add(run_id)

    async def _repost(self, run_id: str) -> None:
        self._reposting.discard(run_id)
        for interaction_id in sorted(i for r, i in self._undrawn if r == run_id):
            await self.refresh(run_id, interaction_id)
        await self.replies.repost(run_id)
        now = self.clock()
        for interaction_id in sorted(i for r, i in self._unposted if r == run_id):
            try:
                record = await self.store.get_interaction(run_id, interaction_id)
            except (UnknownRunError, UnknownInteractionError):
                record = None
            if record is None or _is_closed(record, now):
                self._unposted.discard((run_id, interaction_id))
                continue
            await self._post(record)

    async def spot(self, run_id: str, interaction_id: str) -> CardSpot | None:
        """Where the interaction's card is, if this host (or an earlier one) posted it."""
        return await self.spots.spot(run_id, interaction_id)

    def card_of(self, digest: str) -> tuple[str, str] | None:
        """The ``(run_id, interaction_id)`` of a card this host posted or found whose ids
        travel as ``digest`` (ids too long for a block id), or ``None``."""
        return self.spots.card_of(digest)

    async def refresh(self, run_id: str, interaction_id: str) -> None:
        """Redraw the interaction's card from the store: open, answered, or expired (then
        record that it is drawn closed)."""
        spot = await self.spot(run_id, interaction_id)
        if spot is None:
            return
        record = await self.store.get_interaction(run_id, interaction_id)
        drawn = await self.out.update_card(spot.channel, spot.ts, await self._card(record))
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

    async def _card(self, record: InteractionRecord) -> Card:
        now = self.clock()
        if not _is_closed(record, now):
            tally = await tally_of(self.store, record)
            return open_card(record, now=now, full_text_url=self.config.full_text_url,
                             tally=tally)  # fmt: skip
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
        if key in self.spots or key in self._posting or place is None:
            return
        channel, thread = place
        card = await self._card(record)
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
        self.spots.add(record.run_id, record.id, CardSpot(channel, ts, thread))
        data = {"interaction_id": record.id, "channel": channel, "ts": ts, "thread_ts": thread}
        await self.store.append_events(record.run_id, [(CARD_EVENT, data)])

    async def _on(self, event: EventRecord) -> None:
        news = await self.reader.read(event)
        match news:
            case QuestionOpened():
                await self._defer(news)
            case QuestionVoted(record=record):
                if record.answer is None:  # else its QuestionClosed, next, redraws it
                    await self.refresh(record.run_id, record.id)
            case QuestionReminded():
                await self._remind(news)
            case QuestionClosed(record=record):
                await self.refresh(record.run_id, record.id)
            case LegEnded():
                await self._said(news)
            case StatusChanged():
                await self._status(news)
            case RunCreated() | None:
                pass
            case _:
                assert_never(news)
        await self._flush(event.run_id, event.seq)
        if isinstance(news, StatusChanged) and news.to in _ENDED:
            self._places.pop(event.run_id, None)  # read again if the run ever says more

    async def _defer(self, opened: QuestionOpened) -> None:
        """Post the card of ``opened`` once the rest of the write that asked it is shown."""
        event, run_id = opened.event, opened.run_id
        later = await self.store.list_events(run_id, after_seq=event.seq)
        last = event.seq
        for other in later:  # the rest of the same write: post the card after it
            if other.at != event.at or other.seq != last + 1:
                break
            last = other.seq
        self._deferred.setdefault(run_id, []).append((last, opened.record.id))

    async def _remind(self, reminded: QuestionReminded) -> None:
        """Reply in the thread of the question's card that it still waits (a reminder), or
        whom it was escalated to; nothing for a question answered or expired meanwhile, or
        whose card this host never posted."""
        record = reminded.record
        spot = await self.spot(record.run_id, record.id)
        if spot is None or _is_closed(record, self.clock()):
            return
        who = ", ".join(reminded.approvers) or "anyone here"
        if reminded.escalated:
            note = _ESCALATED.format(added=", ".join(reminded.added) or "no one new", who=who)
        else:
            note = _REMINDED.format(count=reminded.count, who=who)
        await self.replies.say(record.run_id, spot.channel, spot.thread_ts or spot.ts, note)

    async def _status(self, changed: StatusChanged) -> None:
        """Say, in the thread of a run started in Slack, that it failed, stopped or was
        cancelled, or why the last answer of a run that finished may not be whole."""
        if changed.to in _NOTES:
            note = _NOTES[changed.to].format(error=changed.error or "", run=changed.run_id)
        elif changed.to is RunStatus.FINISHED and changed.warning:
            note = _WARNING.format(warning=changed.warning)
        else:
            return
        place = await self._place(changed.run_id)
        if place is not None and place[1] is not None:
            await self.replies.say(changed.run_id, place[0], place[1], note)

    async def _flush(self, run_id: str, seq: int) -> None:
        waiting = self._deferred.get(run_id)
        if not waiting:
            return
        due = [iid for last, iid in waiting if last <= seq]
        kept = [(last, iid) for last, iid in waiting if last > seq]
        if kept:
            self._deferred[run_id] = kept
        else:
            del self._deferred[run_id]
        for interaction_id in due:
            try:
                record = await self.store.get_interaction(run_id, interaction_id)
            except (UnknownRunError, UnknownInteractionError):
                continue
            await self._post(record)

    async def _said(self, leg: LegEnded) -> None:
        """Post what the assistant said in the leg, rebuilt from the store, in its thread."""
        texts = [text for text in leg.texts() if text.strip()]
        place = await self._place(leg.run_id) if texts else None
        if place is not None and place[1] is not None:
            for text in texts:
                await self.replies.say(leg.run_id, place[0], place[1], text)


def _left_open(events: Iterable[EventRecord]) -> set[str]:
    """The interactions whose cards ``events`` (a run's) record posted and not drawn closed."""
    events = list(events)
    drawn = {str(e.data["interaction_id"]) for e in events if e.type == CARD_EVENT}
    return drawn - {str(e.data["interaction_id"]) for e in events if e.type == CLOSED_EVENT}


def _is_closed(record: InteractionRecord, now: datetime) -> bool:
    """Whether the interaction takes no more answers: answered, or past its expiry."""
    return record.answer is not None or record.expires_at < now
