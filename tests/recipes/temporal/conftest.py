"""An engine per test: its own task queue on the session's dev server, a worker of the recipe
the test names in this process, and the engine's store and runner (as the hosts get them)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("temporalio", reason="the temporal extra is not installed")

from recipes.runs import Runs, runner_for
from recipes.temporal import (
    EngineAddress,
    TemporalStore,
    open_temporal_engine,
    running_worker,
)

HERE = Path(__file__).parent
ROOT = HERE.parents[2]
RELEASE = str(ROOT / "examples" / "release.py")
RECIPES = str(HERE / "recipes_for_temporal.py")


@dataclass
class Engine:
    address: EngineAddress
    store: TemporalStore
    runner: Runs


Worker = Callable[..., AbstractAsyncContextManager[Any]]


@pytest.fixture
def address(temporal_server: str) -> EngineAddress:
    return EngineAddress(temporal_server, "default", f"test-{uuid.uuid4().hex[:12]}")


@pytest.fixture
def worker(address: EngineAddress) -> Worker:
    """``async with worker(recipe, **options):`` a worker of ``recipe`` on the test's queue."""

    def start(recipe: str = RELEASE, **options: Any) -> AbstractAsyncContextManager[Any]:
        return running_worker(recipe, address, **options)

    return start


@asynccontextmanager
async def open_engine(
    address: EngineAddress, env: Mapping[str, str] | None = None, **options: Any
) -> AsyncIterator[Engine]:
    store = await open_temporal_engine(address.url(), **options)
    async with store:
        yield Engine(address, store, runner_for(store, env=dict(env or {}), host="test"))


@pytest.fixture
async def engine(address: EngineAddress, worker: Worker) -> AsyncIterator[Engine]:
    """The engine of the test's queue, with a worker of the release demo running."""
    async with worker(RELEASE), open_engine(address) as opened:
        yield opened


def _holds(log: Path, line: str) -> bool:
    return log.exists() and any(x.startswith(line) for x in log.read_text().splitlines())


async def logged(log: Path, line: str, bound: float = 30.0) -> None:
    """Return once ``log`` holds a line starting with ``line`` (the worker's side effect)."""
    with anyio.fail_after(bound):
        for _ in range(int(bound / 0.05)):
            if _holds(log, line):
                return
            await anyio.sleep(0.05)


def entries(log: Path) -> list[tuple[str, int]]:
    """The lines of a ``recipes_for_temporal`` log: what happened, in which process."""
    return [(what, int(pid)) for what, pid in (x.split() for x in log.read_text().splitlines())]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # Temporal's SDK runs on asyncio
