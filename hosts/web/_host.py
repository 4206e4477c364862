"""The parts of one running server, shared by its endpoints, and who signed in to them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.requests import HTTPConnection

from hosts._kit import IDENTITY, Desk, Workers
from hosts.web._auth import unauthorized, websocket_unauthorized
from hosts.web._config import WebConfig
from hosts.web._feed import Feed
from hosts.web._hub import Hub
from hosts.web._signin import SignIn
from hosts.web._threads import Threads
from interactions.people import Identity
from interactions.store import Store
from recipes.runs import Runs

__all__ = ["Authorized", "Me", "WebHost", "host_of", "signed_in"]


@dataclass(frozen=True)
class WebHost:
    """One server: its settings, its store and runner, its clients, its feed and workers, the
    desk that answers on them, the starts of runs on threads, and how people sign in."""

    config: WebConfig
    store: Store
    runner: Runs
    hub: Hub
    feed: Feed
    workers: Workers
    desk: Desk
    threads: Threads
    sign_in: SignIn


def host_of(connection: HTTPConnection) -> WebHost:
    """The server a request or WebSocket reached."""
    host: WebHost = connection.app.state.web
    return host


async def signed_in(connection: HTTPConnection) -> Identity:
    """Who sent a request or opened a WebSocket (:meth:`SignIn.identify`: what the ``Gate``
    found before the body was read, else found now); a 401 refusal when no one."""
    found = connection.scope.get(IDENTITY)
    if isinstance(found, Identity):
        return found
    client = connection.scope.get("client")
    identity = await host_of(connection).sign_in.identify(
        connection.headers, client[0] if client else None, connection.scope.get("subprotocols", ())
    )
    if identity is None:
        websocket = connection.scope["type"] == "websocket"
        raise websocket_unauthorized() if websocket else unauthorized()
    connection.scope[IDENTITY] = identity
    return identity


_BEARER = HTTPBearer(auto_error=False, description="the token printed at the server's first start")


async def _authorized(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_BEARER)],
) -> WebHost:
    await signed_in(request)
    return host_of(request)


Authorized = Annotated[WebHost, Depends(_authorized)]
"""A dependency: the server, once the request's sender signed in (401 otherwise)."""

Me = Annotated[Identity, Depends(signed_in)]
"""A dependency: who sent the request (401 when no one signed in)."""
