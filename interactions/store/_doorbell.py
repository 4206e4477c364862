"""The in-process doorbell and the one bounded wait loop every backend uses.

A write through a store instance rings the bell for its run; a waiter re-checks the store (the
level), so a ring is only a hint to look again and a missed ring costs at most one poll.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

import anyio

from interactions.store._changes import ChangeWatch
from interactions.store._checks import check_timeout

__all__ = ["ANY_RUN", "Doorbell", "wait_level"]

ANY_RUN = "*"
"""The doorbell key rung by a write to any run: what a watcher of the whole store listens to."""

T = TypeVar("T")


class Doorbell:
    """Per-run wake-ups for waiters of one store instance (one event loop).

    Each waiter registers its own ``anyio.Event`` while it waits, so no event outlives a wait
    and none is shared between event loops.
    """

    def __init__(self) -> None:
        self._waiters: dict[str, set[anyio.Event]] = {}

    @contextmanager
    def listen(self, run_id: str) -> Iterator[anyio.Event]:
        """Register an event that :meth:`ring` for ``run_id`` sets; unregister on exit."""
        event = anyio.Event()
        waiters = self._waiters.setdefault(run_id, set())
        waiters.add(event)
        try:
            yield event
        finally:
            waiters.discard(event)
            if not waiters:
                self._waiters.pop(run_id, None)

    def ring(self, run_id: str) -> None:
        """Wake every waiter of ``run_id``, and the watchers of the whole store. Call from the
        store's event loop after a commit."""
        for key in (run_id, ANY_RUN):
            for event in self._waiters.get(key, ()):
                event.set()


async def wait_level(
    bell: Doorbell,
    run_id: str,
    check: Callable[[], Awaitable[list[T]]],
    *,
    timeout: float,
    poll_interval: float = math.inf,
    changes: ChangeWatch | None = None,
) -> list[T]:
    """Return ``check()``'s result as soon as it is non-empty, re-checking on every ring.

    Re-checks at least every ``poll_interval`` seconds (to see other processes' writes), and
    sooner when ``changes`` (the store's watch of other processes' commits) wakes it; gives up
    after ``timeout`` seconds with one last check. The event is registered, and the watch told
    what this waiter has seen, *before* each check, so neither a ring nor a commit between the
    check and the wait is lost.
    """
    check_timeout(timeout)
    me = object()
    try:
        with anyio.move_on_after(timeout):
            while True:
                with bell.listen(run_id) as rung:
                    try:
                        if changes is not None:
                            await changes.look(rung)
                        found = await check()
                        if found:
                            return found
                        with anyio.move_on_after(poll_interval):
                            await (rung.wait() if changes is None else changes.wait(rung, me))
                    finally:
                        if changes is not None:
                            changes.done(rung)
    finally:
        if changes is not None:
            changes.leave(me)
    return await check()
