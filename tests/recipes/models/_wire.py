"""Test helpers for the HTTP providers: SSE bodies, Anthropic content blocks, broken streams and
a recording sleep."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable
from typing import Any

import httpx

from recipes.models._retry import RetryPolicy

SSE_HEADERS = {"content-type": "text/event-stream"}


def sse(*events: Any, event_names: Iterable[str | None] | None = None) -> bytes:
    """An SSE body: each event a JSON value (or a raw ``str`` sent as is) on one ``data:`` line."""
    names = list(event_names) if event_names is not None else [None] * len(events)
    out = []
    for name, event in zip(names, events, strict=True):
        data = event if isinstance(event, str) else json.dumps(event)
        head = f"event: {name}\n" if name else ""
        out.append(f"{head}data: {data}\n\n")
    return "".join(out).encode()


def content_block(
    index: int, start: dict[str, Any], *deltas: dict[str, Any]
) -> list[dict[str, Any]]:
    """An Anthropic content block's stream events: its start (``start`` is the block), one
    ``content_block_delta`` per delta, its stop."""
    return [
        {"type": "content_block_start", "index": index, "content_block": start},
        *({"type": "content_block_delta", "index": index, "delta": d} for d in deltas),
        {"type": "content_block_stop", "index": index},
    ]


def stream_response(body: bytes) -> httpx.Response:
    """A 200 event-stream response with ``body``."""
    return httpx.Response(200, headers=SSE_HEADERS, content=body)


class CutStream(httpx.AsyncByteStream):
    """A response body that sends ``chunks`` and then fails as a reset connection would."""

    def __init__(self, chunks: Iterable[bytes], message: str = "connection reset by peer") -> None:
        self._chunks = list(chunks)
        self._message = message

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self._chunks:
            yield chunk
        raise httpx.ReadError(self._message)


def cut_response(*chunks: bytes, message: str = "connection reset by peer") -> httpx.Response:
    """A 200 event-stream response whose body is cut after ``chunks`` with a ``ReadError``."""
    return httpx.Response(200, headers=SSE_HEADERS, stream=CutStream(chunks, message))


class RecordingSleep:
    """An injectable ``sleep`` that records the delays instead of waiting."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def fast_policy(sleep: RecordingSleep, **overrides: Any) -> RetryPolicy:
    """A retry policy with tiny backoffs, no jitter and the recording ``sleep``."""
    settings: dict[str, Any] = {"backoff_base": 0.001, "jitter": lambda: 1.0, "sleep": sleep}
    return RetryPolicy(**(settings | overrides))
