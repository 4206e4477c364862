"""The records waiting to be written to the client, in order, with backpressure.

One writer task takes records out (:meth:`Outbox.get`, a few at a time so that one write
carries them all); producers put them in. The outbox has a
``capacity``: a producer that can wait (:meth:`Outbox.put`, or :meth:`Outbox.wait_for_room`
before it produces) waits while that many records are queued, so a client that stops reading
slows the host down instead of growing its memory. The session's event listeners are plain
functions that cannot wait; they :meth:`Outbox.post`, which never blocks and never drops a
record. What keeps their share bounded is that the agent loop's sources of volume are paced:
the model's stream waits for room before each event it passes on (``hosts.rpc._server``), and
every command waits for room before it is read. A tool's progress cannot be paced (its
``on_update`` is a plain call): past the capacity, a record posted with a ``key`` takes the
place of the one queued under that key, so a client that lags gets a tool's latest progress,
and the queue stays bounded however often the tool reports.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio

from interactions import UsageError
from recipes.models import Model, ModelEvent, ModelRequest

__all__ = ["OUTBOX_CAPACITY", "Outbox", "PacedModel"]

logger = logging.getLogger("hosts.rpc")

OUTBOX_CAPACITY = 256
"""Records queued before the producers that can wait are made to wait."""


class Outbox:
    """A FIFO of records with a soft ``capacity``; use it from one event loop."""

    def __init__(self, capacity: int = OUTBOX_CAPACITY) -> None:
        if capacity < 1:
            raise UsageError(f"capacity must be at least 1 record, got {capacity}")
        self._items: deque[dict[str, Any]] = deque()
        self._keyed: dict[str, dict[str, Any]] = {}  # the queued record of each key
        self._capacity = capacity
        self._closed = False
        self._readable = anyio.Event()
        self._room = anyio.Event()

    def __len__(self) -> int:
        return len(self._items)

    @property
    def capacity(self) -> int:
        return self._capacity

    def post(self, record: dict[str, Any], *, key: str | None = None) -> None:
        """Queue ``record`` now, even past the capacity; but past it, a record with a ``key``
        replaces the record of that key still queued (in its place), if there is one: for
        records of which only the latest counts. Once closed, it is dropped (logged)."""
        if self._closed:
            logger.debug("dropped a %s record: the output is closed", record.get("type"))
            return
        if key is not None:
            queued = self._keyed.get(key)
            if queued is not None and len(self._items) >= self._capacity:
                queued.clear()
                queued.update(record)
                return
            self._keyed[key] = record
        self._items.append(record)
        self._readable.set()

    async def put(self, record: dict[str, Any]) -> None:
        """Queue ``record`` once there is room (see :meth:`wait_for_room`)."""
        await self.wait_for_room()
        self.post(record)

    async def wait_for_room(self) -> None:
        """Return once fewer than ``capacity`` records are queued, or the outbox is closed."""
        while len(self._items) >= self._capacity and not self._closed:
            if self._room.is_set():
                self._room = anyio.Event()
            await self._room.wait()

    async def get(self, most: int = 1) -> list[dict[str, Any]]:
        """The oldest records, at least one and at most ``most``, waiting for one. Raises
        ``anyio.EndOfStream`` once the outbox is closed and empty."""
        while not self._items:
            if self._closed:
                raise anyio.EndOfStream
            if self._readable.is_set():
                self._readable = anyio.Event()
            await self._readable.wait()
        records = [self._items.popleft() for _ in range(min(most, len(self._items)))]
        if self._keyed:
            taken = {id(record) for record in records}
            self._keyed = {k: r for k, r in self._keyed.items() if id(r) not in taken}
        if len(self._items) < self._capacity:
            self._room.set()
        return records

    def close(self) -> None:
        """Accept no more records; :meth:`get` still returns the queued ones, then ends."""
        self._closed = True
        self._readable.set()
        self._room.set()


class PacedModel:
    """``model``, whose stream waits for ``ready()`` before passing on each event: in the RPC
    host, for room in the outbox, so a client that stops reading pauses the model's stream
    (and so the agent loop) instead of queueing its records without end."""

    def __init__(self, model: Model, ready: Callable[[], Awaitable[None]]) -> None:
        self._model = model
        self._ready = ready

    @property
    def name(self) -> str:
        """The wrapped model's name."""
        return self._model.name

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """The wrapped model's events, each once ``ready()`` returned."""
        stream = self._model.stream(request)
        try:
            async for event in stream:
                await self._ready()
                yield event
        finally:
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                with anyio.CancelScope(shield=True):
                    await aclose()
