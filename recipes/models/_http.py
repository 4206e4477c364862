"""The I/O edge of the HTTP providers: one streamed POST over httpx.

:func:`post_sse` is the one place provider text enters the process: it POSTs JSON, scrubs every
piece of text the provider sends back with the model's
:class:`~recipes.models._secrets.Secrets` (error bodies, SSE fields, transport error messages)
before anything parses, quotes, logs or stores it, turns an HTTP error status or an httpx failure
into a classified ``ModelError``, and yields the scrubbed events of a successful response (but
not those whose data is blank: ``data:`` alone is a proxy's heartbeat, not an empty JSON
document; an event named ``error`` is yielded whatever its data). Each
read is bounded by the httpx read timeout and the whole response by ``max_seconds``, so a server
that keeps a stream open with keep-alives or a byte at a time cannot hold a run forever.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, Mapping
from contextlib import AbstractAsyncContextManager, aclosing, nullcontext
from dataclasses import dataclass, replace
from typing import Any, Final, cast

import anyio
import httpx

from recipes.models._errors import (
    ModelError,
    error_from_payload,
    error_from_response,
    error_from_transport,
)
from recipes.models._retry_after import retry_after_from_headers
from recipes.models._secrets import Secrets
from recipes.models._sse import SSEError, SSEEvent, SSEParser, decode_json

__all__ = [
    "DEFAULT_MAX_STREAM_SECONDS",
    "DEFAULT_TIMEOUT",
    "DRAIN_SECONDS",
    "client_scope",
    "post_sse",
]

#: Every provider call is bounded: 10 s to connect, 300 s between two reads of the stream.
DEFAULT_TIMEOUT: Final = httpx.Timeout(300.0, connect=10.0)
#: ... and 30 minutes for a whole response, however steadily it trickles in.
DEFAULT_MAX_STREAM_SECONDS: Final = 1800.0
_MAX_ERROR_BODY: Final = 64 * 1024


def client_scope(
    client: httpx.AsyncClient | None, timeout: httpx.Timeout
) -> AbstractAsyncContextManager[httpx.AsyncClient]:
    """The injected client as is (the host owns and closes it), or a fresh one for one call."""
    if client is not None:
        return nullcontext(client)
    return httpx.AsyncClient(timeout=timeout)


def _chunks(response: httpx.Response) -> AsyncGenerator[bytes, None]:
    # ``aiter_bytes`` is an async generator typed as an iterator; closing it releases the body.
    return cast(AsyncGenerator[bytes, None], response.aiter_bytes())


@dataclass(frozen=True)
class _Deadline:
    """The moment a response must be over by (``time.monotonic``), and how it was set."""

    at: float
    seconds: float
    provider: str

    def check(self) -> None:
        if time.monotonic() > self.at:
            raise ModelError(
                f"{self.provider}: the response was still coming after {self.seconds:g}s "
                "(max_stream_seconds): the server kept the stream open without finishing it; "
                "raise max_stream_seconds for answers that take longer",
                error_class="unavailable",
                provider=self.provider,
                retryable=False,
            )


async def _read_text(response: httpx.Response, deadline: _Deadline) -> str:
    """The start of the body (up to 64 KiB), decoded as UTF-8 with replacement characters."""
    body = b""
    async with aclosing(_chunks(response)) as chunks:
        try:
            async for chunk in chunks:
                body += chunk
                if len(body) >= _MAX_ERROR_BODY:
                    break
                deadline.check()
        finally:
            await _drain(chunks, 0)  # the rest is not read (a no-op when the body is over)
    return body[:_MAX_ERROR_BODY].decode("utf-8", "replace")


#: How long the rest of a body is read once the caller is done with it (see :func:`_drain`).
DRAIN_SECONDS: Final = 0.5


async def _drain(chunks: AsyncGenerator[bytes, None], seconds: float) -> None:
    """Read what is left of a body the caller is done with, for at most ``seconds``. A server
    that ends the body there keeps the connection for the next call; one that holds it open (a
    proxy) is cut off by the cancellation, which closes the connection and ends httpx's stream
    generators as it unwinds them (closing only ours would leave httpx's own unfinished, and
    trio warns of those: encode/httpx#3686)."""
    end = time.monotonic() + seconds
    with anyio.move_on_after(seconds):
        async for _ in chunks:
            if time.monotonic() > end:  # a body that never waits: leave it to the collector
                break


async def post_sse(
    client: httpx.AsyncClient,
    url: str,
    *,
    headers: Mapping[str, str],
    body: Mapping[str, Any],
    timeout: httpx.Timeout,
    provider: str,
    secrets: Secrets,
    max_seconds: float = DEFAULT_MAX_STREAM_SECONDS,
) -> AsyncGenerator[SSEEvent, None]:
    """POST ``body`` as JSON and yield the server-sent events of the response.

    Every text that comes back is scrubbed with ``secrets`` first: the events' ``event``,
    ``data`` and ``id``, an error body, a JSON body, an httpx failure's message.

    Raises ``ModelError``: classified from the status and body for a non-2xx response, from the
    body for a 2xx JSON answer where a stream was expected, ``unavailable`` for timeouts and
    network failures and for a response still coming after ``max_seconds`` (not retryable),
    ``unclassified`` for an oversized SSE line, a URL httpx cannot send to, or a 2xx body that is
    neither JSON nor an event stream (an HTML page: often a wrong base URL). No raw httpx
    exception is chained to it (its text may quote the URL or a header). Close the generator
    (e.g. with ``contextlib.aclosing``) once the stream's end marker has come (or to give up on
    it): what is left of the body is read for at most :data:`DRAIN_SECONDS`, then the connection
    is released, so a server or proxy that keeps it open cannot hold the call.
    """
    failure: ModelError
    deadline = _Deadline(time.monotonic() + max_seconds, max_seconds, provider)
    try:
        async with client.stream(
            "POST", url, headers=headers, json=body, timeout=timeout
        ) as response:
            if not response.is_success:
                raise error_from_response(
                    provider,
                    response.status_code,
                    secrets.scrub(await _read_text(response, deadline)),
                    retry_after=retry_after_from_headers(
                        response.headers, rate_limited=response.status_code == 429
                    ),
                )
            media = response.headers.get("content-type", "").partition(";")[0].strip().lower()
            if media == "application/json":
                text = secrets.scrub(await _read_text(response, deadline))
                payload = decode_json(text, provider, what="the body")
                if isinstance(payload, dict) and "error" in payload:
                    raise error_from_payload(provider, None, payload)
                raise ModelError(
                    f"{provider}: the server answered JSON where an event stream was expected",
                    error_class="unclassified",
                    provider=provider,
                    status_code=response.status_code,
                )
            if media and media != "text/event-stream":
                text = secrets.scrub(await _read_text(response, deadline)).strip()
                sent = response.headers["content-type"].partition(";")[0].strip()
                shown = secrets.scrub(sent)[:100]  # as sent: a secret lower-cased is not found
                raise ModelError(
                    f"{provider}: the server answered {shown} where an event stream was "
                    f"expected; is the base URL right? It said: {text[:300]!r}",
                    error_class="unclassified",
                    provider=provider,
                    status_code=response.status_code,
                )
            parser = SSEParser()
            async with aclosing(_chunks(response)) as chunks:
                try:
                    async for chunk in chunks:
                        for event in parser.feed(chunk):
                            if event.data.strip() or event.event == "error":
                                yield _scrubbed(event, secrets)
                        deadline.check()
                except GeneratorExit:  # the caller is done: at the stream's end marker, say
                    await _drain(chunks, DRAIN_SECONDS)
                    raise
                except (ModelError, SSEError):  # raised here: the rest is not read at all
                    await _drain(chunks, 0)
                    raise
        return
    except httpx.HTTPError as exc:
        failure = error_from_transport(provider, exc, secrets=secrets)
    except httpx.InvalidURL as exc:  # not an httpx.HTTPError
        failure = ModelError(
            f"{provider}: the request URL is not valid: {secrets.scrub(str(exc))}",
            error_class="unclassified",
            provider=provider,
        )
    except SSEError as exc:
        failure = ModelError(f"{provider}: {exc}", error_class="unclassified", provider=provider)
    raise failure  # outside the handler: the raw exception is not chained


def _scrubbed(event: SSEEvent, secrets: Secrets) -> SSEEvent:
    return replace(
        event,
        event=secrets.scrub(event.event),
        data=secrets.scrub(event.data),
        id=None if event.id is None else secrets.scrub(event.id),
    )
