"""The in-memory store passes the conformance suite."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from interactions.store import MemoryStore
from interactions.testing.store_conformance import DecisionsConformance, StoreConformance


class TestMemoryStore(StoreConformance, DecisionsConformance):
    @pytest.fixture
    async def store(self) -> AsyncIterator[MemoryStore]:
        async with MemoryStore() as store:
            yield store
