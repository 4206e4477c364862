"""A sync psycopg connection driven from the event loop, without a worker thread.

psycopg runs every exchange with the server as a generator that says when it would block
(wait for the socket to be readable, or writable) and is resumed once it can go on; the sync
:class:`psycopg.Connection` hands each one to :meth:`~psycopg.Connection.wait`, which blocks.
:class:`EventedConnection` overrides that one method: inside :func:`run_evented`, a socket not
ready at once suspends the greenlet the store's sync code runs in, and the event loop waits
for the socket (``anyio.wait_readable`` / ``wait_writable``: asyncio and trio alike) before
resuming it. So the store's statements stay the plain sync code they are, and a call costs no
hop to a worker thread and back. Outside :func:`run_evented` (connecting and migrating, in a
thread) the connection blocks as psycopg's does.

A call runs to its end once started, as one in a worker thread does: cancelling the task that
made it does not leave a half-sent transaction on the connection (the wait is shielded; every
wait on the server is bounded, see ``_postgres_schema.TCP_BOUNDS`` and ``lock_timeout``). It
sees the caller's context variables (a trace's current span), as a worker thread's call does.

``greenlet`` comes with the ``postgres`` extra; without it the store uses worker threads.
"""

from __future__ import annotations

import contextvars
import select
from collections.abc import Callable
from typing import Any, TypeVar

import anyio
from greenlet import getcurrent, greenlet
from psycopg import Connection
from psycopg.rows import DictRow

__all__ = ["EventedConnection", "run_evented"]

T = TypeVar("T")

_READ = select.POLLIN | select.POLLPRI | select.POLLERR | select.POLLHUP
_WRITE = select.POLLOUT | select.POLLERR | select.POLLHUP
_R, _W = 1, 2  # psycopg's Wait.R / Wait.W and Ready.R / Ready.W


class _Evented(greenlet):
    """The greenlet a store call runs in: its waits go to the event loop."""


class EventedConnection(Connection[DictRow]):
    """A :class:`psycopg.Connection` whose waits for the socket suspend :func:`run_evented`'s
    greenlet instead of blocking, when it runs in one (see the module docstring)."""

    def wait(self, gen: Any, interval: Any = 0.1, timeout: float | None = None) -> Any:
        if not isinstance(getcurrent(), _Evented):
            if timeout is None:  # (psycopg 3.2's wait has no timeout)
                return super().wait(gen, interval)
            return super().wait(gen, interval, timeout)  # type: ignore[call-arg,unused-ignore]
        if timeout is not None:  # only listening for notifications bounds a wait: not done here
            raise RuntimeError("a store call waited with a timeout on the event loop")
        fileno = self.pgconn.socket
        poller = select.poll()
        try:
            state = next(gen)
            while True:
                ready = _ready_now(poller, fileno, state)
                if not ready:
                    ready = _loop_side().switch((fileno, state))
                state = gen.send(ready)
        except StopIteration as done:
            return done.value


def _loop_side() -> greenlet:
    """The greenlet :func:`run_evented` awaits the socket in (the one that started this)."""
    parent = getcurrent().parent
    assert parent is not None  # an _Evented greenlet is always started by run_evented
    return parent


def _ready_now(poller: select.poll, fileno: int, state: int) -> int:
    """What of ``state`` (read, write) the socket can do now, without waiting."""
    poller.register(fileno, (_READ if state & _R else 0) | (_WRITE if state & _W else 0))
    try:
        events = poller.poll(0)
    finally:
        poller.unregister(fileno)
    ready = 0
    for _fd, event in events:
        if event & _READ and state & _R:
            ready |= _R
        if event & _WRITE and state & _W:
            ready |= _W
    return ready


async def run_evented(fn: Callable[[], T]) -> T:
    """``fn()`` on the event loop's thread, its connection's waits for the socket awaited on
    the loop (see the module docstring). Runs to its end even if the caller is cancelled."""
    worker = _Evented(fn)
    worker.gr_context = contextvars.copy_context()
    with anyio.CancelScope(shield=True):
        request = worker.switch()
        while not worker.dead:
            fileno, state = request
            try:
                ready = await _wait_socket(fileno, state)
            except BaseException as exc:  # the socket was closed under the wait
                request = worker.throw(exc)
            else:
                request = worker.switch(ready)
    return request  # type: ignore[no-any-return]  # what fn returned


async def _wait_socket(fileno: int, state: int) -> int:
    """Wait until the socket can do one of ``state``; return what it can do."""
    if state == _R:
        await anyio.wait_readable(fileno)
        return _R
    if state == _W:
        await anyio.wait_writable(fileno)
        return _W
    ready = 0  # both asked (a pipeline flushing while results arrive): whichever comes first
    async with anyio.create_task_group() as group:

        async def wait(waiter: Callable[[int], Any], flag: int) -> None:
            nonlocal ready
            await waiter(fileno)
            ready |= flag
            group.cancel_scope.cancel()

        group.start_soon(wait, anyio.wait_readable, _R)
        group.start_soon(wait, anyio.wait_writable, _W)
    return ready
