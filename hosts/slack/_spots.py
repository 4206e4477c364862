"""Where the host's cards are: each posted card is recorded on its run (a ``slack_card_posted``
event), so this host, or one started after it, finds a card again to redraw it or to read a
late click on it. A card drawn closed is recorded too (``slack_card_closed``). The host keeps
the newest :data:`MAX_CARDS` cards in memory; an older one is read again from its run."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from hosts.slack._refs import digest_of
from interactions.store import EventRecord, Store

__all__ = ["CARD_EVENT", "CLOSED_EVENT", "MAX_CARDS", "CardSpot", "Spots"]

CARD_EVENT = "slack_card_posted"
"""The event recording where an interaction's card is: ``{interaction_id, channel, ts,
thread_ts}``."""
CLOSED_EVENT = "slack_card_closed"
"""The event recording that an interaction's card was drawn closed: ``{interaction_id}``."""
MAX_CARDS = 10_000
"""Cards (and runs read whole) a host keeps in memory, the newest first: an older card is read
again from its run's events when it is asked for by its ids; one whose ids travel as a digest
(ids too long for a block id) is found among the open questions only, as after a restart."""


@dataclass(frozen=True)
class CardSpot:
    """Where a card is: its channel, its message and the thread it is in."""

    channel: str
    ts: str
    thread_ts: str | None = None


class Spots:
    """The cards this host posted or found on their runs' events (at most ``capacity``)."""

    def __init__(self, store: Store, capacity: int = MAX_CARDS) -> None:
        self.store = store
        self.capacity = capacity
        self._cards: OrderedDict[tuple[str, str], CardSpot] = OrderedDict()
        self._digests: dict[str, tuple[str, str]] = {}
        self._scanned: OrderedDict[str, None] = OrderedDict()  # runs whose cards are all known

    def __contains__(self, key: tuple[str, str]) -> bool:
        return key in self._cards

    def add(self, run_id: str, interaction_id: str, spot: CardSpot) -> None:
        """Remember a card just posted (its event is recorded by the caller)."""
        self._keep((run_id, interaction_id), spot)

    def remember(self, event: EventRecord) -> None:
        """Remember the card a ``slack_card_posted`` event records."""
        self._keep((event.run_id, str(event.data["interaction_id"])), _spot_of(event))

    def scanned(self, run_id: str, events: list[EventRecord]) -> None:
        """Remember every card of ``events``, the whole of ``run_id``'s: the run is known (unless
        it has more cards than are kept: then it is read again when asked for)."""
        cards = [event for event in events if event.type == CARD_EVENT]
        for event in cards:
            self.remember(event)
        if len(cards) > self.capacity:
            return
        self._scanned[run_id] = None
        self._scanned.move_to_end(run_id)
        while len(self._scanned) > self.capacity:
            self._scanned.popitem(last=False)

    async def spot(self, run_id: str, interaction_id: str) -> CardSpot | None:
        """Where the interaction's card is, if this host (or an earlier one) posted it."""
        key = (run_id, interaction_id)
        if key not in self._cards and run_id not in self._scanned:
            # every card of the run, once; later ones come by the feed
            events = await self.store.list_events(run_id)
            self.scanned(run_id, events)
            if key not in self._cards:  # more cards than are kept: this one, if it is there
                found = [e for e in events if e.type == CARD_EVENT
                         and str(e.data["interaction_id"]) == interaction_id]  # fmt: skip
                return _spot_of(found[-1]) if found else None
        return self._cards.get(key)

    def card_of(self, digest: str) -> tuple[str, str] | None:
        """The ``(run_id, interaction_id)`` of a card whose ids travel as ``digest`` (ids too
        long for a block id), or ``None``."""
        return self._digests.get(digest)

    def _keep(self, key: tuple[str, str], spot: CardSpot) -> None:
        self._cards[key] = spot
        self._cards.move_to_end(key)
        self._digests[digest_of(*key)] = key
        while len(self._cards) > self.capacity:
            old, _ = self._cards.popitem(last=False)
            del self._digests[digest_of(*old)]
            self._scanned.pop(old[0], None)  # its run's cards are read again when asked for


def _spot_of(event: EventRecord) -> CardSpot:
    """The card a ``slack_card_posted`` event records."""
    data = event.data
    return CardSpot(str(data["channel"]), str(data["ts"]), data.get("thread_ts"))
