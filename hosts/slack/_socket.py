"""Socket Mode: the host reaches Slack over a WebSocket, with no public URL.

slack-sdk's asyncio Socket Mode client on aiohttp (aiohttp already carries the Web API
client; the ``websockets`` variant's extra pins an older ``websockets`` than the project's).
Each envelope (``interactive``, ``events_api``, ``slash_commands``) goes to the host, which
only schedules its work, and is acknowledged at once, with the host's response body when it
has one. Authentication is the app-level token; there is no signature to check.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.socket_mode.aiohttp import SocketModeClient
from slack_sdk.socket_mode.async_client import AsyncBaseSocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse
from slack_sdk.web.async_client import AsyncWebClient

from hosts.slack._client import slack_error
from hosts.slack._host import SlackHost
from interactions import PiRecipesError, UsageError
from interactions.errors import error_code

__all__ = ["socket_mode"]

logger = logging.getLogger("hosts.slack")


async def _dispatch(host: SlackHost, request: SocketModeRequest) -> dict[str, Any] | None:
    payload = request.payload
    if request.type == "interactive":
        return await host.on_interaction(payload)
    if request.type == "events_api":
        return await host.on_event(payload)
    if request.type == "slash_commands":
        return await host.on_command(payload)
    return None


@asynccontextmanager
async def socket_mode(
    host: SlackHost, app_token: str, client: AsyncWebClient, *, ping_interval: float = 5.0
) -> AsyncIterator[SocketModeClient]:
    """Connect to Slack in Socket Mode and serve ``host`` until the block ends.

    Raises ``UsageError`` when Slack refuses the app-level token (nothing is retried then).
    """
    socket = SocketModeClient(
        app_token=app_token,
        web_client=client,
        ping_interval=ping_interval,
        logger=logging.getLogger("hosts.slack.socket_mode"),
    )

    async def on_request(_: AsyncBaseSocketModeClient, request: SocketModeRequest) -> None:
        body = None
        try:
            body = await _dispatch(host, request)
        except PiRecipesError as exc:
            logger.warning("%s envelope refused: %s: %s", request.type, error_code(exc).label, exc)
        finally:  # acknowledged whatever happened: Slack would redeliver it otherwise
            await socket.send_socket_mode_response(
                SocketModeResponse(envelope_id=request.envelope_id, payload=body)
            )

    socket.socket_mode_request_listeners.append(on_request)
    try:
        try:  # ask for the WebSocket URL ourselves: a refused token is an error, not a retry loop
            # (and not through ``issue_new_wss_url``, which reads any error body as Slack's JSON)
            opened = await client.apps_connections_open(app_token=app_token)
            socket.wss_uri = str(opened["url"])
        except SlackApiError as exc:
            if not isinstance(getattr(exc.response, "data", None), dict):  # not Slack's answer
                raise UsageError(
                    f"Slack at {client.base_url} did not open a Socket Mode connection "
                    f"({slack_error(exc)}); try again later"
                ) from None
            raise UsageError(
                f"Slack refused SLACK_APP_TOKEN ({slack_error(exc)}): give an app-level "
                "token with the connections:write scope, and turn Socket Mode on"
            ) from None
        await socket.connect()  # type: ignore[no-untyped-call]
        yield socket
    finally:
        await socket.close()  # type: ignore[no-untyped-call]
