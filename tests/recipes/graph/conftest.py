"""The graph engine's tests run on asyncio (its subprocess backends and the pi RPC client are
asyncio's); the agent loop's own tests cover trio."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
