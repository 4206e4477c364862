"""Where the cards are, alone: the host keeps a bounded number in memory and reads an older
card again from its run's events (a host running for months kept every card it ever posted,
and looked a digest up by hashing every one of them)."""

from __future__ import annotations

import pytest

from hosts.slack._refs import digest_of
from hosts.slack._spots import CARD_EVENT, CardSpot, Spots
from interactions.store import NewRun
from interactions.store.memory import MemoryStore

pytestmark = pytest.mark.anyio


async def _posted(store: MemoryStore, spots: Spots, run_id: str, ts: str) -> None:
    """A card posted for ``run_id``'s question ``q``, recorded on the run as the host does."""
    await store.create_run(NewRun(id=run_id, thread_id="t", ref="r"))
    data = {"interaction_id": "q", "channel": "C1", "ts": ts, "thread_ts": None}
    await store.append_events(run_id, [(CARD_EVENT, data)])
    spots.add(run_id, "q", CardSpot("C1", ts))


async def test_only_the_newest_cards_stay_in_memory_and_older_ones_are_read_again() -> None:
    store = MemoryStore()
    spots = Spots(store, capacity=2)
    for n in (1, 2, 3):
        await _posted(store, spots, f"run-{n}", f"1.{n}")
    assert ("run-1", "q") not in spots and ("run-3", "q") in spots
    assert spots.card_of(digest_of("run-1", "q")) is None  # forgotten: found no more by digest
    assert spots.card_of(digest_of("run-3", "q")) == ("run-3", "q")
    assert await spots.spot("run-1", "q") == CardSpot("C1", "1.1")  # read again from its run
    assert spots.card_of(digest_of("run-1", "q")) == ("run-1", "q")
    assert ("run-2", "q") not in spots  # the oldest then made room
    assert await spots.spot("run-2", "q") == CardSpot("C1", "1.2")


async def test_a_run_read_whole_is_read_again_once_its_cards_are_forgotten() -> None:
    """A run known whole whose card was forgotten must not look as if it had no card."""
    store = MemoryStore()
    spots = Spots(store, capacity=1)
    await _posted(store, spots, "run-1", "1.1")
    spots.scanned("run-1", await store.list_events("run-1"))
    await _posted(store, spots, "run-2", "1.2")  # run-1's card is forgotten
    assert await spots.spot("run-1", "q") == CardSpot("C1", "1.1")
    assert await spots.spot("run-1", "other") is None


async def test_a_run_with_more_cards_than_are_kept_is_read_again_each_time() -> None:
    store = MemoryStore()
    spots = Spots(store, capacity=1)
    await store.create_run(NewRun(id="run-1", thread_id="t", ref="r"))
    cards = [{"interaction_id": q, "channel": "C1", "ts": ts, "thread_ts": None}
             for q, ts in (("q1", "1.1"), ("q2", "1.2"))]  # fmt: skip
    await store.append_events("run-1", [(CARD_EVENT, data) for data in cards])
    assert await spots.spot("run-1", "q1") == CardSpot("C1", "1.1")
    assert await spots.spot("run-1", "q2") == CardSpot("C1", "1.2")
    assert await spots.spot("run-1", "q1") == CardSpot("C1", "1.1")
