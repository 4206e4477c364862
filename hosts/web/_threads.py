"""A conversation is its thread: one run at a time on it, whichever endpoint starts it.

Before a new run starts on a thread (``POST /agui`` without ``resume``, ``POST /api/runs`` with a
``thread_id``), the thread's latest run must have ended: a run waiting for answers is continued
with a resume, and a run still running is waited for. In one server the check and the start
happen under the thread's lock, so of two racing starts exactly one runs; the other is refused
(409) once the first run is stored.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

from hosts._kit import answerable
from interactions import ConflictError
from interactions.store import RunStatus, Store

__all__ = ["Threads"]


class Threads:
    """The starts of new runs on threads, one at a time per thread."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._locks: dict[str, anyio.Lock] = {}
        self._holders: dict[str, int] = {}

    @asynccontextmanager
    async def start(self, thread: str | None) -> AsyncIterator[None]:
        """Hold ``thread`` while a new run starts on it (until that run is stored).

        Raises ``ConflictError`` when the thread's latest run is paused (reason
        ``awaiting_resume``) or running (reason ``running``). A run with no thread starts at once.
        """
        if thread is None:
            yield
            return
        lock = self._locks.setdefault(thread, anyio.Lock())
        self._holders[thread] = self._holders.get(thread, 0) + 1
        try:
            async with lock:
                await self._check_free(thread)
                yield
        finally:
            self._holders[thread] -= 1
            if not self._holders[thread]:
                del self._holders[thread], self._locks[thread]

    async def _check_free(self, thread: str) -> None:
        latest = next(iter(await self._store.list_runs(limit=1, thread_id=thread)), None)
        if latest is None:
            return
        if latest.status is RunStatus.PAUSED_WAITING_HUMAN:
            pending = await self._store.list_interactions(latest.id, pending=True)
            open_ = [r.id for r in answerable(pending)]
            raise ConflictError(
                f"thread {thread!r} waits for answers to {open_}; send them as resume entries "
                f"(POST /agui with resume, or POST /api/runs/{latest.id}/resume)",
                run_id=latest.id,
                reason="awaiting_resume",
            )
        if latest.status is RunStatus.RUNNING:
            raise ConflictError(
                f"thread {thread!r} has a run still running ({latest.id}); wait for it to end",
                run_id=latest.id,
                reason="running",
            )
