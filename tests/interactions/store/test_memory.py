"""The in-memory store passes the conformance suite (and a counting store counts its calls)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from interactions.store import DecisionStore, MemoryStore
from interactions.testing.counting import CountingStore
from interactions.testing.store_conformance import (
    AuditConformance,
    ConsumersConformance,
    DecisionsConformance,
    RemindersConformance,
    StoreConformance,
    VotesConformance,
    new_decision,
    new_run,
)


class TestMemoryStore(
    StoreConformance,
    DecisionsConformance,
    VotesConformance,
    ConsumersConformance,
    RemindersConformance,
    AuditConformance,
):
    @pytest.fixture
    async def store(self) -> AsyncIterator[MemoryStore]:
        async with MemoryStore() as store:
            yield store


@pytest.mark.anyio
async def test_a_counting_store_counts_the_decision_calls() -> None:
    counted = CountingStore(MemoryStore())
    assert isinstance(counted, DecisionStore)
    run = await counted.create_run(new_run())
    counted.reset()
    record, _ = await counted.remember_decision(new_decision(run))
    await counted.decisions_for(run.id, run.thread_id)
    await counted.list_decisions()
    await counted.revoke_decision(record.id)
    assert (counted.reads, counted.writes) == (2, 2)
