"""Test helpers for the HTTP providers: SSE bodies, Anthropic content blocks, broken streams, a
recording sleep, and the property every stream must have (:func:`storable_or_model_error`)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable
from typing import Any

import httpx
import respx
from hypothesis import strategies as st

from recipes.messages import TranscriptAdapter, UserMessage
from recipes.models._base import Completed, Model, ModelRequest
from recipes.models._errors import ModelError
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


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=4), inner, max_size=2)
    ),
    max_leaves=4,
)
"""Any JSON value, small: what a field of a wire message may hold when a server gets it wrong."""


async def storable_or_model_error(model: Model, url: str, body: bytes) -> None:
    """The property of every provider stream: ``body`` answered at ``url`` gives a message a
    transcript holds (and that goes back to the provider as JSON in the next request), or a
    :class:`ModelError`; nothing else."""
    with respx.mock() as mock:
        route = mock.post(url).mock(return_value=stream_response(body))
        try:
            hello = ModelRequest(messages=[UserMessage.of_text("Hi")])
            final = [event async for event in model.stream(hello)][-1]
        except ModelError:
            return
        assert isinstance(final, Completed)
        [kept] = TranscriptAdapter.validate_json(TranscriptAdapter.dump_json([final.message]))
        assert kept == final.message
        again = [UserMessage.of_text("Hi"), kept, UserMessage.of_text("Go on")]
        [_ async for _ in model.stream(ModelRequest(messages=again))]
        json.loads(route.calls[-1].request.content)
