"""The Slack host's HTTP endpoints, as an ASGI app (Starlette) a web server can mount.

- ``POST /slack/events``: the Events API (the URL check, mentions);
- ``POST /slack/interactivity``: clicks and modals (``payload=`` form field);
- ``POST /slack/commands``: the slash command.

Every request must carry ``X-Slack-Request-Timestamp`` and ``X-Slack-Signature``, checked
over the raw body with the signing secret by slack-sdk's ``SignatureVerifier``, and be at most
5 minutes old: anything else gets 401 before the body is read as anything, and changes
nothing. A body Slack would never send (not JSON, not our payload) gets 400 with
``X-Slack-No-Retry: 1``. Work is scheduled, not awaited: Slack hears back within its 3 s.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import parse_qs

from slack_sdk.signature import SignatureVerifier
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from hosts.slack._host import SlackHost
from interactions import InvalidPayloadError

__all__ = ["MAX_BODY", "slack_asgi_app", "slack_routes"]

logger = logging.getLogger("hosts.slack")

MAX_BODY = 1 << 20
"""The largest request body read (Slack's payloads are far smaller)."""

_NO_RETRY = {"X-Slack-No-Retry": "1"}

Handler = Callable[[Mapping[str, Any]], Awaitable[dict[str, Any] | None]]


class _Unauthorized(Exception):
    pass


class _Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


async def _read(request: Request) -> bytes:
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise _Refused(413, "request body too large\n")
        chunks.append(chunk)
    return b"".join(chunks)


def _verify(verifier: SignatureVerifier, request: Request, body: bytes) -> None:
    timestamp = request.headers.get("x-slack-request-timestamp")
    signature = request.headers.get("x-slack-signature")
    if not timestamp or not signature:
        raise _Unauthorized
    try:
        valid = verifier.is_valid(body, timestamp, signature)
    except ValueError:  # a timestamp that is not a number, a body that is not UTF-8
        valid = False
    if not valid:
        raise _Unauthorized


def _json_body(body: bytes) -> Mapping[str, Any]:
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):  # nested past the parser's depth: no body of Slack's
        raise _Refused(400, "the body is not JSON\n") from None
    if not isinstance(data, dict):
        raise _Refused(400, "the body is not a JSON object\n")
    return data


def _form(body: bytes) -> dict[str, str]:
    text = body.decode("utf-8", errors="replace")  # a signed body is UTF-8 (the check reads it)
    fields = parse_qs(text, keep_blank_values=True)
    return {key: values[0] for key, values in fields.items()}


def _interactivity_payload(body: bytes) -> Mapping[str, Any]:
    raw = _form(body).get("payload")
    if raw is None:
        raise _Refused(400, "no payload field\n")
    return _json_body(raw.encode("utf-8"))


def _endpoint(
    verifier: SignatureVerifier,
    read: Callable[[bytes], Mapping[str, Any]],
    handle: Handler,
) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        try:
            body = await _read(request)
            _verify(verifier, request, body)
            result = await handle(read(body))
        except _Unauthorized:
            return PlainTextResponse("invalid or missing Slack signature\n", status_code=401)
        except _Refused as refused:
            return PlainTextResponse(str(refused), status_code=refused.status, headers=_NO_RETRY)
        except InvalidPayloadError as exc:
            return PlainTextResponse(f"{exc}\n", status_code=400, headers=_NO_RETRY)
        if result is None:
            return Response(status_code=200)
        return JSONResponse(result)

    return endpoint


def slack_routes(host: SlackHost, signing_secret: str) -> list[Route]:
    """The three endpoints, for a Starlette or FastAPI app to include (its ``routes``)."""
    verifier = SignatureVerifier(signing_secret)
    return [
        Route("/slack/events", _endpoint(verifier, _json_body, host.on_event), methods=["POST"]),
        Route(
            "/slack/interactivity",
            _endpoint(verifier, _interactivity_payload, host.on_interaction),
            methods=["POST"],
        ),
        Route("/slack/commands", _endpoint(verifier, _form, host.on_command), methods=["POST"]),
    ]


def slack_asgi_app(host: SlackHost, signing_secret: str) -> Starlette:
    """An ASGI app serving :func:`slack_routes`. The host must be running
    (:meth:`SlackHost.running`) while it serves; the app does not start it."""
    return Starlette(routes=slack_routes(host, signing_secret))
