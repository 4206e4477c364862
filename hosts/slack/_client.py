"""The host's calls to Slack's Web API, through slack-sdk's ``AsyncWebClient``.

The client retries a dropped connection, a 429 (after Slack's ``Retry-After``, when that is at
most ``MAX_RETRY_AFTER`` seconds: a longer wait would hold up the run whose lane waits, see
:mod:`hosts.slack._lanes`) and a 500/503;
what still fails is logged with Slack's error code, or the HTTP status and the start of a body
that is not Slack's JSON (never a token: the client redacts the ``Authorization`` header from
its own debug log), and the call returns ``None``: a card that cannot be posted never stops the
host or a run. Each request gives up after the session's timeout (:func:`slack_session`).
"""

from __future__ import annotations

import logging
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState
from slack_sdk.models.views import View
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from hosts.slack._cards import Card
from hosts.slack._mrkdwn import fit
from interactions.secrets import Secrets

__all__ = [
    "DEFAULT_API_URL",
    "MAX_RETRY_AFTER",
    "SlackOut",
    "slack_error",
    "slack_session",
    "web_client",
]

logger = logging.getLogger("hosts.slack")

DEFAULT_API_URL = "https://slack.com/api/"
MAX_REPLY = 3900  # a reply's characters (Slack advises under 4,000)
MAX_RETRY_AFTER = 30
"""The longest ``Retry-After`` (seconds) waited for; past it the call fails (and is logged)."""
DEFAULT_TIMEOUT = 30
"""Seconds a Web API request may take before it fails (and is logged)."""
MAX_ERROR_BODY = 200  # characters of a body that is not Slack's JSON, in a log or a message


def slack_error(exc: SlackApiError) -> str:
    """What Slack said in ``exc``: its error code (``invalid_auth``) when it answered its JSON;
    else the HTTP status and the start of the body (``HTTP 503: upstream unavailable``), as a
    proxy or load balancer in front of Slack answers (slack-sdk then gives a str, or no
    parsed body at all)."""
    response = exc.response
    data = getattr(response, "data", None)
    if isinstance(data, dict):
        return str(data.get("error") or "unknown error")
    status = getattr(response, "status_code", None) or getattr(response, "status", "?")
    if isinstance(data, bytes):
        data = data.decode("utf-8", "replace")
    body = " ".join(data.split())[:MAX_ERROR_BODY] if isinstance(data, str) else ""
    return f"HTTP {status}: {body}" if body else f"HTTP {status}"


def slack_session(timeout: float = DEFAULT_TIMEOUT) -> aiohttp.ClientSession:
    """A session for :func:`web_client` whose requests give up after ``timeout`` seconds
    (slack-sdk applies its own ``timeout`` only to sessions it opens, never to one it is
    given; aiohttp's default is five minutes). Open it in the event loop; close it after."""
    return aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout))


class _BoundedRateLimits(AsyncRateLimitErrorRetryHandler):
    """slack-sdk's 429 retry, only when ``Retry-After`` is whole seconds and at most
    ``MAX_RETRY_AFTER`` (no header: its 1-2 s): it sleeps as long as the header says."""

    async def _can_retry_async(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        if response is None or response.status_code != 429:
            return False
        values = [v for k, v in response.headers.items() if k.lower() == "retry-after"]
        if not values:
            return True
        wait = values[0][0].strip() if values[0] else ""
        return wait.isascii() and wait.isdigit() and int(wait) <= MAX_RETRY_AFTER


def web_client(
    token: str,
    session: aiohttp.ClientSession,
    *,
    api_url: str | None = None,
    timeout: int = DEFAULT_TIMEOUT,
) -> AsyncWebClient:
    """An ``AsyncWebClient`` on ``session`` that retries connection errors, rate limits (3
    times, waiting what ``Retry-After`` says, up to ``MAX_RETRY_AFTER``) and server errors
    (twice). Each request gives up after the session's timeout: open ``session`` with
    :func:`slack_session` (slack-sdk ignores ``timeout`` when given a session)."""
    base = api_url or DEFAULT_API_URL
    return AsyncWebClient(
        token=token,
        base_url=base if base.endswith("/") else base + "/",
        session=session,
        timeout=timeout,
        retry_handlers=[
            AsyncConnectionErrorRetryHandler(max_retry_count=2),
            _BoundedRateLimits(max_retry_count=3),
            AsyncServerErrorRetryHandler(max_retry_count=2),
        ],
    )


class SlackOut:
    """What the host says in Slack: cards, thread replies, ephemeral notes, modals. Every
    call passes :meth:`_call` (a command's response, :meth:`respond`), which scrubs what it
    sends of ``secrets`` (default: none)."""

    def __init__(self, client: AsyncWebClient, secrets: Secrets | None = None) -> None:
        self.client = client
        self.secrets = secrets or Secrets()

    async def _call(self, what: str, method: Any, **kwargs: Any) -> dict[str, Any] | None:
        if self.secrets:  # a card, a reply or a modal may quote what a model or a tool wrote
            kwargs = {key: self.secrets.scrub_value(value.to_dict() if isinstance(value, View)
                                                    else value)
                      for key, value in kwargs.items()}  # fmt: skip
        try:
            response = await method(**kwargs)
        except SlackApiError as exc:
            logger.warning("Slack refused %s: %s", what, slack_error(exc))
            return None
        except (aiohttp.ClientError, TimeoutError) as exc:  # a timeout is not a ClientError
            logger.warning("Slack unreachable for %s: %s", what, type(exc).__name__)
            return None
        data: dict[str, Any] = response.data if isinstance(response.data, dict) else {}
        return data

    async def _post(self, channel: str, thread_ts: str | None, **message: Any) -> str | None:
        """``chat.postMessage`` of ``message`` (in the thread, if given); the message's ``ts``
        (``None``: Slack refused it or could not be reached)."""
        data = await self._call(
            "chat.postMessage",
            self.client.chat_postMessage,
            channel=channel,
            thread_ts=thread_ts,
            **message,
        )
        return str(data["ts"]) if data and data.get("ts") else None

    async def post_card(self, channel: str, thread_ts: str | None, card: Card) -> str | None:
        """Post ``card`` (in the thread, if given); return the message's ``ts``."""
        return await self._post(channel, thread_ts, **card.payload())

    async def update_card(self, channel: str, ts: str, card: Card) -> bool:
        """Replace the message ``ts`` with ``card``, in place."""
        data = await self._call(
            "chat.update", self.client.chat_update, channel=channel, ts=ts, **card.payload()
        )
        return data is not None

    async def reply(self, channel: str, thread_ts: str | None, text: str) -> str | None:
        """Post ``text`` literally (escaped, no formatting), cut to fit; return its ``ts``."""
        shown, _ = fit(text, MAX_REPLY)
        return await self._post(channel, thread_ts, text=shown, mrkdwn=False)

    async def reply_md(self, channel: str, thread_ts: str | None, text_md: str) -> str | None:
        """Post ``text_md`` (mrkdwn built by the host, user text in it escaped); its ``ts``."""
        return await self._post(channel, thread_ts, text=text_md)

    async def ephemeral(
        self, channel: str, user: str, text_md: str, thread_ts: str | None = None
    ) -> None:
        """Show ``text_md`` (mrkdwn, already escaped) to ``user`` only."""
        await self._call(
            "chat.postEphemeral",
            self.client.chat_postEphemeral,
            channel=channel,
            user=user,
            text=text_md,
            thread_ts=thread_ts,
        )

    async def respond(self, response_url: str, text_md: str) -> bool:
        """Show ``text_md`` (mrkdwn, already escaped) to the person whose slash command gave
        ``response_url``: the one way to reach them where the app cannot post."""
        hook = AsyncWebhookClient(response_url, session=self.client.session)
        try:
            response = await hook.send(
                text=self.secrets.scrub_known(text_md), response_type="ephemeral"
            )
        except (aiohttp.ClientError, TimeoutError) as exc:
            logger.warning("Slack unreachable for a command's response_url: %s", type(exc).__name__)
            return False
        if response.status_code != 200:
            logger.warning("Slack refused a command's response_url: %s", response.status_code)
            return False
        return True

    async def open_modal(self, trigger_id: str, view: View) -> bool:
        """Open ``view`` for the person whose click gave ``trigger_id`` (valid for 3 s)."""
        data = await self._call(
            "views.open", self.client.views_open, trigger_id=trigger_id, view=view
        )
        return data is not None
