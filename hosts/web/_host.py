"""The parts of one running server, shared by its endpoints, and the token check they use."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.requests import HTTPConnection

from hosts._kit import Desk, Workers
from hosts.web._auth import check_token, unauthorized
from hosts.web._config import WebConfig
from hosts.web._feed import Feed
from hosts.web._hub import Hub
from hosts.web._threads import Threads
from interactions.store import Store
from recipes.runs import Runs

__all__ = ["Authorized", "WebHost", "host_of"]


@dataclass(frozen=True)
class WebHost:
    """One server: its settings, its store and runner, its clients, its feed and workers, the
    desk that answers on them, and the starts of runs on threads."""

    config: WebConfig
    store: Store
    runner: Runs
    hub: Hub
    feed: Feed
    workers: Workers
    desk: Desk
    threads: Threads


def host_of(connection: HTTPConnection) -> WebHost:
    """The server a request or WebSocket reached."""
    host: WebHost = connection.app.state.web
    return host


_BEARER = HTTPBearer(auto_error=False, description="the token printed at the server's first start")


def _authorized(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_BEARER)],
) -> WebHost:
    host = host_of(request)
    if not check_token(credentials.credentials if credentials else None, host.config.token):
        raise unauthorized()
    return host


Authorized = Annotated[WebHost, Depends(_authorized)]
"""A dependency: the server, once the request's bearer token was checked (401 otherwise)."""
