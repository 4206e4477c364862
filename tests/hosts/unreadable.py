"""A run holding interactions this pi-recipes cannot read, written straight through the store
API into a SQLite file (as another tool, another version or a hand might), and the store's
whole contents, for the hosts' tests of such a run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio

from interactions.store import NewInteraction, RunStatus, open_sqlite_store
from interactions.testing.store_conformance import (
    StoreSnapshot,
    new_interaction,
    new_run,
    store_snapshot,
)

UNREADABLE: dict[str, Any] = {"message": "Written by another tool: no reason"}
"""A descriptor the pause record refuses (it has no ``reason``)."""
READABLE: dict[str, Any] = {"reason": "input_required", "message": "Which colour?"}


def paused_on(db: Path, run_id: str, *asked: NewInteraction) -> str:
    """Write the run ``run_id`` into the store file ``db``, paused on ``asked``."""

    async def write() -> str:
        async with await open_sqlite_store(db) as store:
            run = await store.create_run(new_run(id=run_id))
            await store.update_run(
                run.id,
                expected_version=run.version,
                status=RunStatus.PAUSED_WAITING_HUMAN,
                new_interactions=list(asked),
            )
            return run.id

    return anyio.run(write)


def both(*more: NewInteraction) -> list[NewInteraction]:
    """An unreadable question (``int-bad``) and a readable one (``int-ok``), then ``more``."""
    return [
        new_interaction("int-bad", descriptor=UNREADABLE),
        new_interaction("int-ok", descriptor=READABLE),
        *more,
    ]


def snapshot(db: Path) -> StoreSnapshot:
    """Everything the store file ``db`` holds."""

    async def read() -> StoreSnapshot:
        async with await open_sqlite_store(db) as store:
            return await store_snapshot(store)

    return anyio.run(read)
