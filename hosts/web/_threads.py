"""A conversation is its thread: one run at a time on it, whichever endpoint starts it.

Before a new run starts on a thread (``POST /agui`` without ``resume``, ``POST /api/runs`` with a
``thread_id``), the thread's latest run must have ended: a run waiting for answers is continued
with a resume, and a run still running is waited for. In one server the check and the start
happen under the thread's lock. Across servers on one store the store decides: the new run's id
is derived from the thread and the latest run the check saw (:func:`successor_id`), so of
starts that raced past the check the store creates exactly one (a run id is unique) and refuses
the others (409), whichever server they reached.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

from hosts._kit import answerable
from interactions import ConflictError
from interactions.store import RunRecord, RunStatus, Store
from recipes.runs import new_run_id

__all__ = ["Threads", "successor_id"]


def successor_id(thread: str, latest: str | None) -> str:
    """The id of the run that follows run ``latest`` (``None``: the first) on ``thread``: the
    same in every server, so the store lets only one such run be created."""
    digest = hashlib.sha256(f"{thread}\n{latest or ''}".encode()).hexdigest()
    return f"run-{digest[:16]}"


class Threads:
    """The starts of new runs on threads, one at a time per thread."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._locks: dict[str, anyio.Lock] = {}
        self._holders: dict[str, int] = {}

    @asynccontextmanager
    async def start(self, thread: str | None) -> AsyncIterator[str]:
        """Hold ``thread`` while a new run starts on it (until that run is stored); give the id
        the new run must take.

        Raises ``ConflictError`` when the thread's latest run is paused (reason
        ``awaiting_resume``) or running (reason ``running``, also when another server started
        a run on the thread since the check: the store refused this one's id). A run with no
        thread starts at once, with a fresh id.
        """
        if thread is None:
            yield new_run_id()
            return
        lock = self._locks.setdefault(thread, anyio.Lock())
        self._holders[thread] = self._holders.get(thread, 0) + 1
        try:
            async with lock:
                latest = await self._check_free(thread)
                run_id = successor_id(thread, latest.id if latest else None)
                try:
                    yield run_id
                except ConflictError as exc:
                    if exc.reason != "duplicate_run" or exc.run_id != run_id:
                        raise
                    raise ConflictError(
                        f"thread {thread!r} has a run just started elsewhere ({run_id}); wait "
                        "for it to end",
                        run_id=run_id,
                        reason="running",
                    ) from None
        finally:
            self._holders[thread] -= 1
            if not self._holders[thread]:
                del self._holders[thread], self._locks[thread]

    async def _check_free(self, thread: str) -> RunRecord | None:
        """The thread's latest run, if any; raises when it has not ended."""
        latest = next(iter(await self._store.list_runs(limit=1, thread_id=thread)), None)
        if latest is None:
            return None
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
        return latest
