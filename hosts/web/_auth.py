"""Who may talk to the server: a bearer token, and for WebSockets an allowed Origin.

The token is generated at first start into the store's folder (``web-token``, mode 0600) and
printed once; ``--token-file`` names another file. REST and AG-UI requests send
``Authorization: Bearer <token>``. A WebSocket client sends the same header, or (a browser,
which cannot set headers) offers the subprotocols ``pi-recipes.v1`` and ``bearer.<token>``;
the server answers with ``pi-recipes.v1`` only, so the token is never echoed. A browser's
``Origin`` must be the server's own (the ``Host`` it was reached at) or one configured with
``--allow-origin``. The token never appears in a URL, so it never reaches an access log.
"""

from __future__ import annotations

import hmac
import os
import secrets
from collections.abc import Iterable, Mapping
from pathlib import Path

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from hosts.web._errors import ErrorBody, Refusal
from hosts.web._frames import PROTOCOL
from interactions import UsageError

__all__ = [
    "TOKEN_FILE",
    "bearer_token",
    "check_token",
    "load_token",
    "origin_allowed",
    "unauthorized",
    "websocket_refusal",
]

TOKEN_FILE = "web-token"
"""The token's file name in the store's folder."""

_BEARER = "bearer."


def load_token(folder: Path, token_file: Path | None = None) -> tuple[str, Path, bool]:
    """The server's token, where it lives, and whether it was created just now.

    With ``token_file`` the token is read from it (``UsageError`` when missing or empty);
    otherwise it is read from ``folder/web-token``, created (0600) at first start.
    """
    if token_file is not None:
        try:
            token = token_file.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise UsageError(f"cannot read the token file {token_file}: {exc.strerror}") from None
        if not token or any(c.isspace() for c in token):
            raise UsageError(f"the token file {token_file} must hold one token, without spaces")
        return token, token_file, False
    path = folder / TOKEN_FILE
    if path.exists():
        return load_token(folder, path)[0], path, False
    folder.mkdir(parents=True, exist_ok=True)
    token = secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(token + "\n")
    return token, path, True


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, if that is what it holds."""
    if not authorization:
        return None
    scheme, _, value = authorization.partition(" ")
    if scheme.lower() != "bearer":
        return None
    return value.strip() or None


def check_token(given: str | None, token: str) -> bool:
    """Whether ``given`` is the token (compared in constant time)."""
    return given is not None and hmac.compare_digest(given.encode(), token.encode())


def unauthorized(
    message: str = "send the server's token: Authorization: Bearer <token>",
) -> Refusal:
    """The refusal of a request without the right token (HTTP 401)."""
    return Refusal(401, ErrorBody(error="unauthorized", message=message, reason="unauthorized"))


class TokenGate:
    """ASGI middleware: a request under ``/api/`` without the server's token is refused (401)
    before anything reads its body. FastAPI reads a route's body before its dependencies run,
    so a malformed body was a 422 before the token was looked at, and a client without the
    token could have the server read and parse a body of any size up to the limit. A CORS
    preflight (``OPTIONS``) passes: it carries no token."""

    def __init__(self, app: ASGIApp, *, token: str) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] == "http"
            and scope["path"].startswith("/api/")
            and scope["method"] != "OPTIONS"
        ):
            header = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
            if not check_token(bearer_token(header), self.token):
                refused = unauthorized()
                body = refused.body.model_dump(mode="json")
                headers = {"WWW-Authenticate": "Bearer"}
                await JSONResponse(body, refused.status, headers=headers)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def origin_allowed(
    origin: str | None, host: str | None, scheme: str, allowed: Iterable[str]
) -> bool:
    """Whether a browser page at ``origin`` may open a WebSocket here: no ``Origin`` (not a
    browser), the server's own origin (``scheme://host``), or one of ``allowed``."""
    if origin is None:
        return True
    own = f"{'https' if scheme in ('https', 'wss') else 'http'}://{host}" if host else None
    return origin == own or origin in set(allowed)


def websocket_refusal(
    headers: Mapping[str, str],
    subprotocols: Iterable[str],
    *,
    scheme: str,
    token: str,
    allowed_origins: Iterable[str],
) -> Refusal | None:
    """Why a WebSocket handshake is refused (403 a foreign Origin, 401 no or a wrong token),
    or ``None`` when it may go on."""
    if not origin_allowed(headers.get("origin"), headers.get("host"), scheme, allowed_origins):
        message = "this Origin may not open a WebSocket here (see --allow-origin)"
        return Refusal(403, ErrorBody(error="forbidden", message=message, reason="origin"))
    offered = [p[len(_BEARER) :] for p in subprotocols if p.startswith(_BEARER)]
    given = bearer_token(headers.get("authorization")) or (offered[0] if offered else None)
    if not check_token(given, token):
        return unauthorized(
            "send the server's token: Authorization: Bearer <token>, or the subprotocols "
            f"{PROTOCOL!r} and 'bearer.<token>'"
        )
    return None
