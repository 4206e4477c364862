"""The WebSocket clients of one server and the fan-out of frames to them.

Each client has a bounded outbox (``buffer`` frames) drained by its own sender. A frame is
serialized once and offered to every client that subscribed to its run; :meth:`Hub.publish`
never waits. A client whose outbox is full (it does not read), or one of whose frames waits
longer than ``send_timeout`` to leave, is dropped: its connection closes with
:data:`~hosts.web._frames.CLOSE_TOO_SLOW`, so nothing is buffered without bound.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from hosts.web._frames import CLOSE_TOO_SLOW, ServerFrame

__all__ = ["ALL_RUNS", "Client", "Hub", "pump"]

logger = logging.getLogger("hosts.web")

ALL_RUNS = "*"
"""The subscription to every run."""


class Client:
    """One connected client: what it subscribed to and its bounded outbox."""

    def __init__(self, buffer: int) -> None:
        self._send: MemoryObjectSendStream[str]
        self.outbox: MemoryObjectReceiveStream[str]
        self._send, self.outbox = anyio.create_memory_object_stream[str](buffer)
        self.subscription: str | None = None
        self.dropped: tuple[int, str] | None = None
        self.scope: anyio.CancelScope | None = None
        """Cancelled when the client is dropped: ends its connection's tasks."""

    def wants(self, run_id: str) -> bool:
        """Whether the client subscribed to ``run_id`` (or to every run)."""
        return self.subscription in (ALL_RUNS, run_id)

    def offer(self, text: str) -> bool:
        """Queue ``text`` without waiting; drop the client (and return False) if it is full."""
        if self.dropped is not None:
            return False
        try:
            self._send.send_nowait(text)
        except anyio.WouldBlock:
            self.drop(CLOSE_TOO_SLOW, "too slow: its frames were not read")
            return False
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            return False
        return True

    def send(self, frame: ServerFrame) -> bool:
        """Queue one frame for this client only (see :meth:`offer`)."""
        return self.offer(frame.model_dump_json(by_alias=True))

    def drop(self, code: int, reason: str) -> None:
        """Stop serving the client: its connection closes with ``code`` and ``reason``."""
        if self.dropped is None:
            logger.warning("dropping a WebSocket client (%s): %s", code, reason)
            self.dropped = (code, reason)
            self._send.close()
            if self.scope is not None:
                self.scope.cancel()

    def close(self) -> None:
        """Release the outbox (the connection ended)."""
        self._send.close()
        self.outbox.close()


class Hub:
    """The clients of this server. ``publish`` hands a frame to every subscriber at once."""

    def __init__(self) -> None:
        self.clients: set[Client] = set()

    def join(self, client: Client) -> None:
        self.clients.add(client)

    def leave(self, client: Client) -> None:
        self.clients.discard(client)
        client.close()

    def publish(self, run_id: str, frame: ServerFrame) -> int:
        """Offer ``frame`` (about ``run_id``) to its subscribers; return how many took it."""
        text: str | None = None
        taken = 0
        for client in list(self.clients):
            if client.wants(run_id):
                text = text or frame.model_dump_json(by_alias=True)
                taken += client.offer(text)
        return taken


async def pump(
    client: Client, send: Callable[[str], Awaitable[None]], *, send_timeout: float
) -> None:
    """Send ``client``'s outbox through ``send`` until the outbox closes; drop the client when
    one frame waits longer than ``send_timeout`` seconds to leave."""
    limit = send_timeout if send_timeout > 0 else math.inf
    async for text in client.outbox:
        if client.dropped is not None:
            return  # what is left is never sent
        with anyio.move_on_after(limit) as waited:
            await send(text)
        if waited.cancelled_caught:
            client.drop(CLOSE_TOO_SLOW, f"too slow: a frame waited {send_timeout:g} s to leave")
            return
