"""Test set-up shared by every test.

Async tests run through anyio's pytest plugin (``@pytest.mark.anyio``). The ask-user flags are
cleared for every test, so a developer's shell can never make a test pass.
"""

from __future__ import annotations

import pytest

ASK_USER_FLAGS = ("PI_ASK_USER_AUTO_APPROVE", "PI_INTERRUPT_RESUME", "PI_INTERRUPT_TTL_SECONDS")


@pytest.fixture(autouse=True)
def _clear_ask_user_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ASK_USER_FLAGS:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
