"""Byte streams over file descriptors, and taking over the process's stdio for the protocol.

Reads and writes run in daemon threads, so a blocked ``read(0)`` or a ``write`` to a client
that stopped reading never holds the event loop, and never holds the interpreter's exit once
the server was cancelled (the thread is abandoned). Each :meth:`FdSendStream.send` writes the
whole record before it returns: there is no buffer to flush.

:func:`protocol_stdio` reserves the real standard output for protocol records: while it lasts,
anything else written to file descriptor 1 or ``sys.stdout`` (a recipe's ``print``, a C
library) goes to standard error instead.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any, TypeVar

import anyio
import anyio.from_thread
import anyio.lowlevel
from anyio.abc import ByteReceiveStream, ByteSendStream

__all__ = ["FdReceiveStream", "FdSendStream", "protocol_stdio"]

T = TypeVar("T")

READ_SIZE = 65536


async def _in_daemon_thread(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` in a fresh daemon thread; cancelling the wait abandons the thread."""
    token = anyio.lowlevel.current_token()
    done = anyio.Event()
    outcome: dict[str, Any] = {}

    def work() -> None:
        try:
            outcome["value"] = fn(*args)
        except BaseException as exc:
            outcome["error"] = exc
        with suppress(RuntimeError):  # the event loop is gone: nobody waits any more
            anyio.from_thread.run_sync(done.set, token=token)

    threading.Thread(target=work, name="pi-recipes rpc I/O", daemon=True).start()
    await done.wait()
    if "error" in outcome:
        raise outcome["error"]
    value: T = outcome["value"]
    return value


class FdReceiveStream(ByteReceiveStream):
    """The bytes read from ``fd`` (not closed by :meth:`aclose`).

    :meth:`receive` raises ``anyio.EndOfStream`` at end of file and
    ``anyio.BrokenResourceError`` when reading fails.
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd

    async def receive(self, max_bytes: int = READ_SIZE) -> bytes:
        try:
            data = await _in_daemon_thread(os.read, self._fd, max_bytes)
        except OSError as exc:
            raise anyio.BrokenResourceError(f"reading fd {self._fd} failed: {exc}") from exc
        if not data:
            raise anyio.EndOfStream
        return data

    async def aclose(self) -> None:
        pass


class FdSendStream(ByteSendStream):
    """Writes to ``fd``, each :meth:`send` whole before it returns (not closed by
    :meth:`aclose`). Raises ``anyio.BrokenResourceError`` when the reader is gone."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    async def send(self, item: bytes) -> None:
        try:
            await _in_daemon_thread(_write_all, self._fd, item)
        except OSError as exc:
            raise anyio.BrokenResourceError(f"writing fd {self._fd} failed: {exc}") from exc

    async def aclose(self) -> None:
        pass


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


@contextmanager
def protocol_stdio() -> Iterator[tuple[FdReceiveStream, FdSendStream]]:
    """Streams over standard input and a private copy of standard output.

    While the block lasts, file descriptor 1 and ``sys.stdout`` point at standard error, so only
    the protocol writes to the real standard output; both are restored on exit.
    """
    sys.stdout.flush()
    protocol_fd = os.dup(1)
    saved_stdout = sys.stdout
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        yield FdReceiveStream(0), FdSendStream(protocol_fd)
    finally:
        sys.stdout = saved_stdout
        os.dup2(protocol_fd, 1)
        os.close(protocol_fd)
