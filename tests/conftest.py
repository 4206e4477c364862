"""Test set-up shared by every test.

Async tests run through anyio's pytest plugin (``@pytest.mark.anyio``). The ask-user flags are
cleared for every test, so a developer's shell can never make a test pass. Property tests
(hypothesis) have no deadline: an example that takes over 200 ms on a loaded machine says
nothing about the property (speed is shown in ``benchmarks/``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import settings

settings.register_profile("pi-recipes", deadline=None)
settings.load_profile("pi-recipes")

ASK_USER_FLAGS = ("PI_ASK_USER_AUTO_APPROVE", "PI_INTERRUPT_RESUME", "PI_INTERRUPT_TTL_SECONDS")


@pytest.fixture(autouse=True)
def _clear_ask_user_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (*ASK_USER_FLAGS, "PI_RECIPES_ENGINE"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def _no_tracing_from_the_shell(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's ``OTEL_*`` configuration reaches neither this process nor the commands
    the tests run: a test that traces says so itself."""
    for name in [n for n in os.environ if n.startswith("OTEL_")]:
        monkeypatch.delenv(name)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def temporal_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The frontend (``127.0.0.1:PORT``) of a Temporal dev server started for this session;
    the tests that use it skip, saying why, where it cannot start."""
    pytest.importorskip("temporalio", reason="the temporal extra is not installed")
    from tests.temporal_dev import dev_server

    log = tmp_path_factory.mktemp("temporal") / "server.log"
    try:
        server = dev_server(log)
        target = server.__enter__()
    except RuntimeError as why:
        pytest.skip(f"no Temporal dev server: {why}")
    try:
        yield target
    finally:
        server.__exit__(None, None, None)
