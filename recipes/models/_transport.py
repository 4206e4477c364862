"""What the HTTP providers share: where a request goes, the credentials it carries, and the runner
that streams it, with retries, through the provider's decoder.

A provider is a wire format plugged into a :class:`Transport`: it says what to send (a path, its
headers, the JSON body) and supplies a :class:`StreamDecoder`, which turns the server-sent events
into model events and, at the stream's end, into the message. The transport does the rest, the
same for every provider:

- it reads the key and the base URL once, from the arguments or the environment
  (:class:`Endpoint` names the variables), refusing a base URL httpx cannot send to, or one
  with a query, as a ``UsageError`` at construction;
- it sends a base URL's ``user:password@`` as Basic auth (in place of any other
  ``Authorization``, as httpx does) and keeps the password out of the URL;
- it scrubs every text the server sends back with the :class:`Secrets` of the key and the
  environment (through ``_http.post_sse``), before anything parses, quotes or logs it;
- it bounds each read (``timeout``) and each response (``max_stream_seconds``), and retries an
  attempt per the :class:`RetryPolicy` only while nothing has been yielded.
"""

from __future__ import annotations

import math
import os
from collections.abc import AsyncGenerator, Callable, Mapping
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any, Protocol, TypedDict

import httpx

from interactions.errors import UsageError
from recipes.messages import AssistantMessage
from recipes.models._base import Completed, ModelEvent
from recipes.models._errors import ModelError
from recipes.models._http import (
    DEFAULT_MAX_STREAM_SECONDS,
    DEFAULT_TIMEOUT,
    client_scope,
    post_sse,
)
from recipes.models._retry import RetryPolicy, retry_policy, retrying
from recipes.models._secrets import Secrets, header_value_problem, split_base_url
from recipes.models._sse import SSEEvent

__all__ = [
    "Endpoint",
    "StreamDecoder",
    "Transport",
    "TransportOptions",
    "check_max_stream_seconds",
    "checked_base_url",
]


@dataclass(frozen=True)
class Endpoint:
    """A provider's API as the transport needs to know it."""

    provider: str
    """The provider's name (``"openai"``): its errors' ``provider`` and their messages' start."""
    key_variable: str
    """The environment variable its API key is read from (``OPENAI_API_KEY``)."""
    url_variable: str
    """The environment variable its base URL is read from (``OPENAI_BASE_URL``)."""
    default_url: str
    """The base URL when neither the argument nor the variable gives one."""


class StreamDecoder(Protocol):
    """One attempt's reading of a provider's event stream (a new decoder each attempt)."""

    @property
    def done(self) -> bool:
        """Whether the stream's end marker has come: the transport reads no further."""
        ...

    def feed(self, event: SSEEvent) -> list[ModelEvent]:
        """The deltas ``event`` (scrubbed) completes. Raises ``ModelError`` for an error the
        stream reports and for an event the provider's format cannot hold."""
        ...

    def finish(self) -> AssistantMessage:
        """The message, once the stream is over (at its end marker or not). Raises
        ``ModelError`` when what came is not an answer (cut before its end, or holding none)."""
        ...


class TransportOptions(TypedDict, total=False):
    """The keywords an HTTP provider's constructor takes for its :class:`Transport` and passes
    on unchanged (each may be left out: the transport's defaults then hold)."""

    api_key: str | None
    base_url: str | None
    env: Mapping[str, str] | None
    http_client: httpx.AsyncClient | None
    retry: RetryPolicy | None
    timeout: httpx.Timeout
    max_stream_seconds: float


class Transport:
    """One provider model's HTTP edge; see the module docstring.

    ``api_key`` / ``base_url`` default to the ``endpoint``'s variables in ``env`` (default
    ``os.environ``), then to its default URL; a trailing ``/`` of the base URL is dropped.
    ``http_client`` is used as is and never closed (otherwise each attempt opens and closes its
    own client). Raises ``UsageError`` for a base URL with a query or one httpx cannot send to
    (naming ``base_url`` or the variable it came from), a ``retry`` that is not a
    ``RetryPolicy`` and a ``max_stream_seconds`` that is not a finite number of seconds > 0.
    """

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        env: Mapping[str, str] | None = None,
        http_client: httpx.AsyncClient | None = None,
        retry: RetryPolicy | None = None,
        timeout: httpx.Timeout = DEFAULT_TIMEOUT,
        max_stream_seconds: float = DEFAULT_MAX_STREAM_SECONDS,
    ) -> None:
        env = os.environ if env is None else env
        source = "base_url" if base_url else endpoint.url_variable
        self.endpoint = endpoint
        self.api_key = api_key or env.get(endpoint.key_variable) or None
        base, self._basic_auth, held = split_base_url(
            base_url or env.get(endpoint.url_variable) or endpoint.default_url, source
        )
        self.secrets = Secrets.from_env(env, self.api_key, *held)
        self.base_url = checked_base_url(base, source).rstrip("/")
        self._client = http_client
        self._retry = retry_policy(retry)
        self._timeout = timeout
        self._max_stream_seconds = check_max_stream_seconds(max_stream_seconds)

    def key(self) -> str | None:
        """The API key, or ``None`` when there is none. Raises ``ModelError`` (``auth``) for a
        key an HTTP header cannot carry, saying where the bad character is, not what the key is."""
        if self.api_key is None:
            return None
        problem = header_value_problem(self.api_key)
        if problem is not None:
            raise ModelError(
                f"{self.endpoint.provider}: the API key has {problem}, which an HTTP header "
                f"cannot carry; check {self.endpoint.key_variable} (or api_key=) for a stray "
                "character",
                error_class="auth",
                provider=self.endpoint.provider,
            )
        return self.api_key

    def missing_key(self, hint: str = "") -> ModelError:
        """The ``auth`` error of a call that needs a key and has none: it names the variable to
        set (then ``hint``)."""
        return ModelError(
            f"{self.endpoint.provider}: no API key; set {self.endpoint.key_variable}{hint}",
            error_class="auth",
            provider=self.endpoint.provider,
        )

    def stream(
        self,
        path: str,
        headers: Mapping[str, str],
        body: Mapping[str, Any],
        decoder: Callable[[], StreamDecoder],
    ) -> AsyncGenerator[ModelEvent, None]:
        """POST ``body`` to the base URL + ``path`` with ``headers`` (and the base URL's Basic
        auth); yield each attempt's deltas as ``decoder()`` reads them, then exactly one
        ``Completed``.

        Raises ``ModelError`` classified as described in ``recipes.models._errors``; retries per
        the ``RetryPolicy`` only before the first event was yielded. Close the generator (with
        ``contextlib.aclosing``) when done with it early.
        """
        sent = dict(headers)
        if self._basic_auth is not None:
            sent["Authorization"] = self._basic_auth
        url = f"{self.base_url}{path}"
        return retrying(
            lambda: self._attempt(url, sent, body, decoder()),
            self._retry,
            provider=self.endpoint.provider,
            secrets=self.secrets,
        )

    async def _attempt(
        self,
        url: str,
        headers: Mapping[str, str],
        body: Mapping[str, Any],
        decoder: StreamDecoder,
    ) -> AsyncGenerator[ModelEvent, None]:
        async with (
            client_scope(self._client, self._timeout) as client,
            aclosing(
                post_sse(
                    client,
                    url,
                    headers=headers,
                    body=body,
                    timeout=self._timeout,
                    provider=self.endpoint.provider,
                    secrets=self.secrets,
                    max_seconds=self._max_stream_seconds,
                )
            ) as events,
        ):
            async for sse in events:
                for event in decoder.feed(sse):
                    yield event
                if decoder.done:
                    break  # the answer is whole: post_sse releases the connection
        yield Completed(message=decoder.finish())


def check_max_stream_seconds(value: float) -> float:
    """``value`` as a provider's ``max_stream_seconds``: a finite number of seconds ``> 0``.

    Raises ``UsageError`` naming the setting and the value otherwise: NaN and infinity would
    bound no response, 0 or less would fail every one, and a ``bool`` or a string is no number.
    """
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise UsageError(
            f"max_stream_seconds must be a finite number of seconds > 0 (the longest a whole "
            f"response may take; default {DEFAULT_MAX_STREAM_SECONDS:g}), got {value!r}"
        )
    return value


def checked_base_url(url: str, source: str) -> str:
    """``url`` if httpx can send requests to it (``http://`` or ``https://``, a host, a valid
    port, no whitespace or control characters); otherwise raises ``UsageError`` naming
    ``source`` (``base_url``, ``OPENAI_BASE_URL``) and what is wrong, so that a typo is found
    when the model is made, not as a failure of every call."""
    problem: str | None = None
    if any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F for c in url):
        problem = "it holds a space or a control character"
    else:
        try:
            parsed = httpx.URL(url)
        except httpx.InvalidURL:  # its text quotes the URL's parts: not shown, as the URL is not
            problem = "httpx cannot read it (is the port a number, the host well-formed?)"
        else:
            if parsed.scheme not in ("http", "https"):
                problem = "it does not start with http:// or https://"
            elif not parsed.host:
                problem = "it names no host"
    if problem is not None:
        raise UsageError(
            f"{source}: not a usable base URL: {problem}; give one like https://api.example.com/v1"
        )
    return url
