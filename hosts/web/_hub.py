"""The WebSocket clients of one server and the fan-out of frames to them.

Each client has an outbox drained by its own sender (:func:`pump`). A frame is serialized once
and offered to every client that subscribed to its run; :meth:`Hub.publish` never waits (a
leg's live events come from a plain callback).

Backpressure tells a client that does not read from a burst. A model may hand over hundreds
of deltas at once (a buffering proxy delivers a stream so), faster than any sender can run
between them: the deltas of one message still queued are coalesced into one frame (up to
:data:`COALESCED_TEXT` characters), and an outbox may overfill its ``buffer`` frames for a
moment. A client is dropped, its connection closed with
:data:`~hosts.web._frames.CLOSE_TOO_SLOW`, only when it truly stops reading: one of its frames
waits ``send_timeout`` seconds to leave, its outbox stays over ``buffer`` frames that long, or
it holds :data:`OVERFILL` times ``buffer`` frames or :data:`OUTBOX_BYTES` of text. Nothing is
buffered without bound.
"""

from __future__ import annotations

import logging
import math
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from hosts.web._frames import CLOSE_TOO_SLOW, RunEventFrame, ServerFrame

__all__ = ["ALL_RUNS", "COALESCED_TEXT", "OUTBOX_BYTES", "OVERFILL", "Client", "Hub", "pump"]

logger = logging.getLogger("hosts.web")

ALL_RUNS = "*"
"""The subscription to every run."""

COALESCED_TEXT = 16 << 10
"""Characters of deltas one coalesced frame carries at most (well under a client's frame
limit: a browser has none, the ``websockets`` client 1 MiB)."""

OVERFILL = 4
"""How many times its ``buffer`` a client's outbox may hold during a burst before the client is
dropped at once."""

OUTBOX_BYTES = 16 << 20
"""The text a client's outbox may hold before the client is dropped at once."""

DELTAS = frozenset({"TEXT_MESSAGE_CONTENT", "TOOL_CALL_ARGS", "THINKING_TEXT_MESSAGE_CONTENT"})
"""The AG-UI events whose ``delta`` continues the one before it of the same message."""


@dataclass
class _Deltas:
    """Queued deltas of one message (one run, one event but for its ``delta``), sent as one
    ``run.event`` frame whose delta is theirs joined."""

    key: tuple[Any, ...]
    frame: RunEventFrame
    parts: list[str] = field(default_factory=list)
    size: int = 0

    def join(self, key: tuple[Any, ...], delta: str) -> bool:
        """Add ``delta`` if it continues this message and the frame has room for it."""
        if key != self.key or self.size + len(delta) > COALESCED_TEXT:
            return False
        self.parts.append(delta)
        self.size += len(delta)
        return True

    def text(self) -> str:
        event = {**self.frame.event, "delta": "".join(self.parts)}
        return self.frame.model_copy(update={"event": event}).model_dump_json(by_alias=True)


def _delta_key(frame: ServerFrame) -> tuple[Any, ...] | None:
    """What a frame's delta coalesces by (``None``: it is not a delta)."""
    if not isinstance(frame, RunEventFrame) or frame.event.get("type") not in DELTAS:
        return None
    if not isinstance(frame.event.get("delta"), str):
        return None
    rest = tuple(sorted((k, repr(v)) for k, v in frame.event.items() if k != "delta"))
    return (frame.run_id, frame.live, rest)


class Client:
    """One connected client: what it subscribed to and its outbox (``buffer`` frames, see the
    module docstring; ``grace`` seconds the outbox may stay overfilled)."""

    def __init__(
        self, buffer: int, *, grace: float = 10.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.buffer = buffer
        self.grace = grace
        self._clock = clock
        self._queue: deque[str | _Deltas] = deque()
        self._over_since: float | None = None
        self._size = 0
        self._readable = anyio.Event()
        self._closed = False
        self.subscription: str | None = None
        self.dropped: tuple[int, str] | None = None
        self.scope: anyio.CancelScope | None = None
        """Cancelled when the client is dropped: ends its connection's tasks."""

    def __len__(self) -> int:
        return len(self._queue)

    def wants(self, run_id: str) -> bool:
        """Whether the client subscribed to ``run_id`` (or to every run)."""
        return self.subscription in (ALL_RUNS, run_id)

    def offer(self, text: str, frame: ServerFrame | None = None) -> bool:
        """Queue ``text`` (``frame`` serialized) without waiting: a delta joins the same
        message's delta still queued last. Return False when the client is gone or is dropped
        now (it stopped reading: see the module docstring)."""
        if self.dropped is not None or self._closed:
            return False
        key = None if frame is None else _delta_key(frame)
        if key is not None and isinstance(frame, RunEventFrame):
            delta: str = frame.event["delta"]
            last = self._queue[-1] if self._queue else None
            if isinstance(last, _Deltas) and last.join(key, delta):
                self._size += len(delta)
                return self._fits()
            if not self._room():
                return False
            self._queue.append(_Deltas(key, frame, [delta], len(delta)))
            self._size += len(delta)
        else:
            if not self._room():
                return False
            self._queue.append(text)
            self._size += len(text)
        self._readable.set()
        return self._fits()

    def _fits(self) -> bool:
        """Whether the queued text is within :data:`OUTBOX_BYTES`; drops the client when not."""
        if self._size <= OUTBOX_BYTES:
            return True
        self.drop(CLOSE_TOO_SLOW, f"too slow: {self._size} bytes of frames were not read")
        return False

    def _room(self) -> bool:
        """Whether one more frame may be queued; drops the client when not."""
        if len(self._queue) < self.buffer:
            return True
        now = self._clock()
        if self._over_since is None:
            self._over_since = now
        if len(self._queue) >= self.buffer * OVERFILL:
            self.drop(CLOSE_TOO_SLOW, f"too slow: {len(self._queue)} frames were not read")
            return False
        if now - self._over_since > self.grace:
            self.drop(CLOSE_TOO_SLOW, f"too slow: its frames were not read for {self.grace:g} s")
            return False
        return True

    def send(self, frame: ServerFrame) -> bool:
        """Queue one frame for this client only (see :meth:`offer`)."""
        return self.offer(frame.model_dump_json(by_alias=True), frame)

    def take_nowait(self) -> str:
        """The oldest queued frame's text; ``anyio.WouldBlock`` when none is queued."""
        if not self._queue:
            raise anyio.WouldBlock
        entry = self._queue.popleft()
        if len(self._queue) < self.buffer:
            self._over_since = None
        text = entry if isinstance(entry, str) else entry.text()
        self._size = max(0, self._size - (len(text) if isinstance(entry, str) else entry.size))
        return text

    async def take(self) -> str | None:
        """The oldest queued frame's text, waiting for one; ``None`` once the client is
        closed or dropped (what is left is never sent)."""
        while True:
            if self.dropped is not None:
                return None
            if self._queue:
                return self.take_nowait()
            if self._closed:
                return None
            if self._readable.is_set():
                self._readable = anyio.Event()
            await self._readable.wait()

    def drop(self, code: int, reason: str) -> None:
        """Stop serving the client: its connection closes with ``code`` and ``reason``."""
        if self.dropped is None:
            logger.warning("dropping a WebSocket client (%s): %s", code, reason)
            self.dropped = (code, reason)
            self._queue.clear()
            self._size = 0
            self._readable.set()
            if self.scope is not None:
                self.scope.cancel()

    def close(self) -> None:
        """Release the outbox (the connection ended)."""
        self._closed = True
        self._queue.clear()
        self._size = 0
        self._readable.set()


class Hub:
    """The clients of this server. ``publish`` hands a frame to every subscriber at once."""

    def __init__(self) -> None:
        self.clients: set[Client] = set()

    def join(self, client: Client) -> None:
        self.clients.add(client)

    def leave(self, client: Client) -> None:
        self.clients.discard(client)
        client.close()

    def crowded(self) -> bool:
        """Whether some client's outbox holds half its ``buffer`` or more (a publisher that
        can wait then yields to the senders)."""
        return any(len(client) * 2 >= client.buffer for client in self.clients)

    def publish(self, run_id: str, frame: ServerFrame) -> int:
        """Offer ``frame`` (about ``run_id``) to its subscribers; return how many took it."""
        text: str | None = None
        taken = 0
        for client in list(self.clients):
            if client.wants(run_id):
                text = text or frame.model_dump_json(by_alias=True)
                taken += client.offer(text, frame)
        return taken


async def pump(
    client: Client, send: Callable[[str], Awaitable[None]], *, send_timeout: float
) -> None:
    """Send ``client``'s outbox through ``send`` until the client is closed or dropped; drop
    it when one frame waits longer than ``send_timeout`` seconds to leave."""
    limit = send_timeout if send_timeout > 0 else math.inf
    while (text := await client.take()) is not None:
        with anyio.move_on_after(limit) as waited:
            await send(text)
        if waited.cancelled_caught:
            client.drop(CLOSE_TOO_SLOW, f"too slow: a frame waited {send_timeout:g} s to leave")
            return
