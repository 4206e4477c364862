"""Byte streams over file descriptors, and taking over the process's stdio for a protocol (the
RPC host's, the MCP host's on stdio).

Reads and writes run in daemon threads, so a blocked ``read(0)`` or a ``write`` to a client
that stopped reading never holds the event loop, and never holds the interpreter's exit once
the server was cancelled (the thread is abandoned: Ctrl-C stops a server waiting for its
input). Each :meth:`FdSendStream.send` writes the whole record before it returns: there is no
buffer to flush.

:func:`protocol_stdio` reserves the real standard input and output for the protocol: while it
lasts, anything else written to file descriptor 1 or ``sys.stdout`` (a recipe's ``print``, a C
library) goes to standard error instead, and whatever reads file descriptor 0 or ``sys.stdin``
(a tool's ``input()``, a command it starts) reads the null device, never the client's messages.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any, TypeVar

import anyio
import anyio.from_thread
import anyio.lowlevel
from anyio.abc import ByteReceiveStream, ByteSendStream

__all__ = ["FdReceiveStream", "FdSendStream", "TextWriter", "protocol_stdio", "text_lines"]

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

    threading.Thread(target=work, name="pi-recipes stdio", daemon=True).start()
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
    """Streams over private copies of standard input and output.

    While the block lasts, file descriptor 1 and ``sys.stdout`` point at standard error and
    file descriptor 0 at the null device, so only the protocol reads and writes the real ones;
    both are restored on exit. The copy of standard input stays open (a daemon thread may still
    be blocked reading it: closed, its number could be reused under that read).
    """
    sys.stdout.flush()
    protocol_in, protocol_out = os.dup(0), os.dup(1)
    saved_stdout = sys.stdout
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        yield FdReceiveStream(protocol_in), FdSendStream(protocol_out)
    finally:
        sys.stdout = saved_stdout
        os.dup2(protocol_out, 1)
        os.dup2(protocol_in, 0)
        os.close(protocol_out)


async def text_lines(stream: ByteReceiveStream) -> AsyncIterator[str]:
    """The lines of ``stream`` as text (UTF-8, undecodable bytes replaced), without their
    ``\\n``; the last one even if unterminated. A long line costs its length once."""
    parts: list[bytes] = []  # the line read so far
    while True:
        try:
            chunk = await stream.receive()
        except anyio.EndOfStream:
            break
        *ended, rest = chunk.split(b"\n")
        for line in ended:
            yield b"".join([*parts, line]).decode("utf-8", errors="replace")
            parts = []
        if rest:
            parts.append(rest)
    if parts:
        yield b"".join(parts).decode("utf-8", errors="replace")


class TextWriter:
    """``write(text)`` (UTF-8) and ``flush()`` over a byte stream (whole writes: nothing to
    flush)."""

    def __init__(self, stream: ByteSendStream) -> None:
        self._stream = stream

    async def write(self, text: str) -> None:
        await self._stream.send(text.encode("utf-8"))

    async def flush(self) -> None:
        pass
