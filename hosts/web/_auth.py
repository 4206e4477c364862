"""Who may talk to the server: the bearer token, and the Origin a browser page may have.

The token and the Origin rule are the host kit's (:mod:`hosts._kit._access`), shared with the
MCP host: REST and AG-UI requests send ``Authorization: Bearer <token>``; a WebSocket client
sends the same header, or (a browser, which cannot set headers) offers the subprotocols
``pi-recipes.v1`` and ``bearer.<token>``; the server answers with ``pi-recipes.v1`` only, so
the token is never echoed. Who a token (or a trusted proxy, or a JWT) signs in is
:mod:`hosts.web._signin`'s. A browser page's ``Origin`` must be the address the server serves
(its loopback names too) or one configured with ``--allow-origin``, on every request and
handshake (the kit's ``Gate``). The token never appears in a URL, so it never reaches an
access log.
"""

from __future__ import annotations

from typing import Any

from hosts._kit import TOKEN_FILE, bearer_token, check_token, load_token
from hosts.web._errors import ErrorBody, Refusal
from hosts.web._frames import PROTOCOL

__all__ = [
    "TOKEN_FILE",
    "bearer_token",
    "check_token",
    "load_token",
    "refusal_body",
    "unauthorized",
    "websocket_unauthorized",
]

_BEARER = "bearer."


def unauthorized(
    message: str = "send the server's token: Authorization: Bearer <token>",
) -> Refusal:
    """The refusal of a request without the right token (HTTP 401)."""
    return Refusal(401, ErrorBody(error="unauthorized", message=message, reason="unauthorized"))


def refusal_body(error: str, reason: str, message: str) -> dict[str, Any]:
    """The body of a refusal the kit's ``Gate`` sends: the web host's typed body."""
    return ErrorBody(error=error, message=message, reason=reason).model_dump(mode="json")


def websocket_unauthorized() -> Refusal:
    """The refusal of a WebSocket handshake no one signed in to (HTTP 401)."""
    return unauthorized(
        "send the server's token: Authorization: Bearer <token>, or the subprotocols "
        f"{PROTOCOL!r} and 'bearer.<token>'"
    )
