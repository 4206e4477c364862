"""Other processes' commits, watched once per store for all of its waiters.

A store that other processes write (SQLite's file) has a counter their commits move (``PRAGMA
data_version``). Rather than every waiter reading it on a timer, a cost that grows with the
waiters, one waiter at a time, the *lead*, watches for all and wakes exactly the waiters whose
last look at the store is older than the counter. The lead is whichever waiter reaches its wait
while nobody leads; it leads until its own wait ends, and wakes another waiter as it leaves, who
takes over.

Where the system tells of writes to the store's files (:class:`Hints`: Linux's inotify, through
``inotify_simple``), the lead sleeps until told, and then reads the counter at short, growing
intervals until it moves: a commit's write is seen before the commit is (its flush to disk comes
between). Elsewhere the lead reads the counter every ``interval``.
"""

from __future__ import annotations

import contextlib
import math
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Protocol

import anyio

__all__ = ["ChangeWatch", "Hints", "file_hints"]

_FIRST_LOOK = 0.0002
"""Seconds from a hint to the first look at the counter (a flushed commit takes longer)."""

_SETTLE = 0.025
"""Seconds after the last hint the lead keeps looking for its commit before it sleeps again
(a commit that shows later is seen by the waiters' own re-check, every ``poll_interval``)."""


class Hints(Protocol):
    """Word that a store's files were written: readable while there is news."""

    def fileno(self) -> int: ...

    def drain(self) -> bool:
        """Whether the files were written since the last drain (never blocks)."""
        ...

    def close(self) -> None: ...


class ChangeWatch:
    """The watch of one store, for the waiters of one event loop (see the module docstring).

    ``version`` reads the counter; ``hints`` opens the store's :class:`Hints` (``None`` where
    the system has none), once, when a lead first needs them.
    """

    def __init__(
        self,
        version: Callable[[], Awaitable[int]],
        *,
        interval: float,
        hints: Callable[[], Hints | None] = lambda: None,
    ) -> None:
        self._version = version
        self._interval = interval
        self._open_hints = hints
        self._hints: Hints | None = None
        self._hints_opened = False
        self._seen: dict[anyio.Event, int] = {}  # each waiter's event: the counter it last saw
        self._lead: object | None = None
        self._last = -1  # the counter as the lead last read it
        self._hinted_at = -math.inf  # the last hint whose commit has not shown yet

    async def look(self, rung: anyio.Event) -> None:
        """Note the counter as the waiter of ``rung`` is about to read the store (call before
        it reads; :meth:`done` when its read is over or its wait is)."""
        self._seen[rung] = await self._version()

    def done(self, rung: anyio.Event) -> None:
        """Forget the look :meth:`look` noted for ``rung``."""
        self._seen.pop(rung, None)

    async def wait(self, rung: anyio.Event, waiter: object) -> None:
        """Wait until ``rung`` is set, watching for every waiter if nobody does."""
        if self._lead is None:
            self._lead = waiter
        if self._lead is waiter:
            await self._watch(rung)
        else:
            await rung.wait()

    def leave(self, waiter: object) -> None:
        """``waiter``'s wait is over: if it led (or nobody does), wake another to lead."""
        if self._lead is waiter:
            self._lead = None
        if self._lead is None:
            for event in self._seen:
                if not event.is_set():
                    event.set()
                    break

    def wrote(self) -> None:
        """This store has just committed (call while no other of its calls can close it): the
        hints its own write caused are not news (its waiters were rung), so the lead does not
        look for a commit that will never show to it. Another process's commit cannot be
        among them unless it began after this one ended; such a one is seen by the waiters'
        own re-check."""
        hints = self._hints
        if hints is not None:
            hints.drain()

    def close(self) -> None:
        """Close the hints, if opened (call on the event loop: a lead waiting on them wakes,
        and finds the store closed)."""
        if self._hints is not None:
            anyio.notify_closing(self._hints.fileno())
            self._hints.close()
            self._hints = None

    async def _watch(self, rung: anyio.Event) -> None:
        while True:
            hints = self._opened_hints()  # None once closed: the next read says the store is
            told = hints is not None and hints.drain()
            version = await self._version()
            for event, seen in self._seen.items():
                if seen != version:
                    event.set()
            if rung.is_set():
                return
            moved, self._last = version != self._last, version
            now = anyio.current_time()
            if told:
                self._hinted_at = now
            elif moved:
                self._hinted_at = -math.inf  # the commit hinted at shows
            since = now - self._hinted_at
            if hints is None:
                with anyio.move_on_after(self._interval):
                    await rung.wait()
            elif since < _SETTLE:
                with anyio.move_on_after(max(_FIRST_LOOK, since / 4)):
                    await rung.wait()
            else:
                await _first(rung, hints.fileno())

    def _opened_hints(self) -> Hints | None:
        if not self._hints_opened:
            self._hints_opened = True
            self._hints = self._open_hints()
        return self._hints


async def _first(rung: anyio.Event, fd: int) -> None:
    """Return when ``rung`` is set or ``fd`` is readable, whichever is first."""
    async with anyio.create_task_group() as group:

        async def readable() -> None:
            with contextlib.suppress(anyio.ClosedResourceError):  # closed: nothing more to hear
                await anyio.wait_readable(fd)
            group.cancel_scope.cancel()

        group.start_soon(readable)
        await rung.wait()
        group.cancel_scope.cancel()


class _INotifyHints:
    """Linux's inotify watch of a directory, counting only writes to files named ``prefix*``."""

    def __init__(self, directory: Path, prefix: str) -> None:
        from inotify_simple import INotify, flags  # type: ignore[import-untyped]

        self._prefix = prefix
        self._overflow = flags.Q_OVERFLOW  # events were lost: news, too
        self._inotify = INotify(nonblocking=True)
        try:
            self._inotify.add_watch(directory, flags.MODIFY | flags.CREATE | flags.MOVED_TO)
        except BaseException:
            self._inotify.close()
            raise

    def fileno(self) -> int:
        fd: int = self._inotify.fileno()
        return fd

    def drain(self) -> bool:
        try:
            events = self._inotify.read(timeout=0)
        except BlockingIOError:  # another thread (a writer's :meth:`ChangeWatch.wrote`) took them
            return False
        return any(
            event.name.startswith(self._prefix) or event.mask & self._overflow for event in events
        )

    def close(self) -> None:
        self._inotify.close()


def file_hints(path: Path) -> Hints | None:
    """The :class:`Hints` of the file ``path`` and its companions (``path`` + ``-wal`` …), or
    ``None`` where the system gives none (not Linux, ``inotify_simple`` missing, or the
    system's limit of inotify instances reached)."""
    if sys.platform != "linux":
        return None
    try:
        return _INotifyHints(path.parent, path.name)
    except (ImportError, OSError):
        return None
