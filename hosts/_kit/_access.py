"""Who may talk to a host over HTTP: the bearer token, and the origins a browser page may have.

One token serves every HTTP host (``pi-recipes serve`` and ``pi-recipes mcp --http``): made at
first start into the store's folder (``web-token``, mode 0600), or read from ``--token-file``.
A request sends it as ``Authorization: Bearer <token>``; it never appears in a URL.

A browser's ``Origin`` is compared with what the server was configured with and the address
it actually serves (the local address the connection reached, the host it was asked to
listen on, and for a loopback address ``localhost``, ``127.0.0.1`` and ``[::1]``), never with
the request's own ``Host`` header: a DNS-rebinding page (``http://evil.example:PORT`` whose
name now points here) sends its own name as both, so a rule built on ``Host`` lets it in.
:class:`Gate` applies that rule to every HTTP request and WebSocket handshake of an ASGI
application before the application sees it.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import os
import secrets
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from interactions import UsageError
from interactions.store import DEFAULT_STORE_PATH, sqlite_path

if TYPE_CHECKING:  # the kit runs without starlette too (the Slack host)
    from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = [
    "IDENTITY",
    "TOKEN_FILE",
    "Gate",
    "Origins",
    "bearer_token",
    "check_origins",
    "check_token",
    "load_token",
    "secret_text",
    "token_folder",
]

IDENTITY = "pi_recipes.identity"
"""The key, in an ASGI scope, of who :class:`Gate`'s ``sign_in`` found a request is."""

TOKEN_FILE = "web-token"
"""The token's file name in the store's folder."""

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
"""What a page on this machine calls a server listening on a loopback address."""

_WILDCARDS = {"", "0.0.0.0", "::", "[::]"}
_BEARER_PROTOCOL = "bearer."


def token_folder(where: str | None) -> Path:
    """The folder the token is kept in for the store or engine ``where`` names (as
    ``hosts._store.chosen_location`` reads it): a SQLite store's, else ``.pi-recipes`` here."""
    return (sqlite_path(where) or DEFAULT_STORE_PATH).parent


def load_token(folder: Path, token_file: Path | None = None) -> tuple[str, Path, bool]:
    """The token, where it lives, and whether it was created just now.

    With ``token_file`` the token is read from it (``UsageError`` when missing, empty or more
    than one word); otherwise it is read from ``folder/web-token``, created (0600) at first
    start.
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


def check_origins(origins: Iterable[str]) -> tuple[str, ...]:
    """``origins`` (``--allow-origin``), each checked to look like ``https://host[:port]``;
    raises ``UsageError`` naming the first that does not."""
    checked = tuple(origins)
    for origin in checked:
        if not origin.startswith(("http://", "https://")) or origin.endswith("/"):
            raise UsageError(f"an allowed origin looks like https://host[:port], got {origin!r}")
    return checked


def _url_host(name: str) -> str:
    return f"[{name}]" if ":" in name and not name.startswith("[") else name


def _is_loopback(name: str) -> bool:
    if name.strip("[]") == "localhost":
        return True
    try:
        address = ipaddress.ip_address(name.strip("[]").split("%", 1)[0])
    except ValueError:
        return False
    mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
    return (mapped or address).is_loopback


@dataclass(frozen=True)
class Origins:
    """The origins a browser page may call a server from: ``allowed`` (configured), and those
    of the address served. ``host`` is the address the server was asked to listen on, as
    spelled (a name, an address, or a wildcard such as ``0.0.0.0``, which names no origin)."""

    allowed: tuple[str, ...] = ()
    host: str | None = None

    def names(self, served: str | None) -> list[str]:
        """The host names a page served at the local address ``served`` may have: that
        address, ``host`` (unless a wildcard), and the loopback names when either is one."""
        found = [name for name in (served, self.host) if name and name not in _WILDCARDS]
        if any(_is_loopback(name) for name in found):
            found += LOOPBACK_NAMES
        return list(dict.fromkeys(_url_host(name) for name in found))

    def own(self, scheme: str, served: tuple[str, int] | None) -> set[str]:
        """The origins of the address served (``served``: the connection's local address and
        port, as ASGI's ``scope["server"]`` gives it) under ``scheme``."""
        if served is None:
            return set()
        web = "https" if scheme in ("https", "wss") else "http"
        host, port = served[0], served[1]
        default = port == (443 if web == "https" else 80)
        out = set()
        for name in self.names(host):
            out.add(f"{web}://{name}:{port}")
            if default:
                out.add(f"{web}://{name}")
        return out

    def allow(self, origin: str | None, scheme: str, served: tuple[str, int] | None) -> bool:
        """Whether a request with ``origin`` may go on: none (not a browser page), a
        configured one, or one of the address served. ``null`` (a sandboxed or local page)
        never is."""
        if origin is None:
            return True
        return origin in self.allowed or origin in self.own(scheme, served)

    def local_host(self, host_header: str | None, served: tuple[str, int] | None) -> bool:
        """Whether the ``Host`` a request names may be served: on a loopback address only a
        local name (DNS rebinding); on any other address, any name."""
        if served is None or not _is_loopback(served[0]):
            return True
        if not host_header:
            return False
        name = host_header.rsplit(":", 1)[0] if not host_header.endswith("]") else host_header
        return name.lower() in {n.lower() for n in self.names(served[0])}


def _plain_body(error: str, reason: str, message: str) -> dict[str, Any]:
    return {"error": error, "message": message, "reason": reason}


class Gate:
    """ASGI middleware in front of a host: refuses, before the application reads anything,

    - a request or WebSocket handshake from a browser page of a foreign ``Origin`` (403);
    - with ``local_hosts``, one whose ``Host`` is not local while the server listens on a
      loopback address (421, as the MCP SDK's DNS-rebinding protection answers);
    - one ``guarded(path)`` says needs the token, without it (401, ``WWW-Authenticate:
      Bearer``); a CORS preflight (``OPTIONS``) passes, and a WebSocket handshake may offer
      it as the subprotocol ``bearer.<token>`` (a browser cannot set headers).

    With ``sign_in``, a guarded request is let in when ``sign_in(scope)`` says who it is
    (anything but ``None``), kept in ``scope[IDENTITY]`` for the application, instead of
    by the token alone.

    ``body(error, reason, message)`` makes a refusal's JSON body.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        token: str,
        origins: Origins,
        guarded: Callable[[str], bool] = lambda path: True,
        local_hosts: bool = False,
        body: Callable[[str, str, str], dict[str, Any]] = _plain_body,
        sign_in: Callable[[Scope], Awaitable[object | None]] | None = None,
    ) -> None:
        self.app = app
        self.sign_in = sign_in
        self.token = token
        self.origins = origins
        self.guarded = guarded
        self.local_hosts = local_hosts
        self.body = body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        refused = self.refusal(scope)
        if refused is None and self.sign_in is not None and self._needs_token(scope):
            found = await self.sign_in(scope)
            if found is None:
                refused = _UNAUTHORIZED
            else:
                scope[IDENTITY] = found
        if refused is None:
            await self.app(scope, receive, send)
            return
        status, error, reason, message = refused
        body = json.dumps(self.body(error, reason, message)).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
        if status == 401:
            headers.append((b"www-authenticate", b"Bearer"))
        if scope["type"] == "http":
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        await receive()  # the handshake's websocket.connect
        if "websocket.http.response" in scope.get("extensions", {}):
            start = {"type": "websocket.http.response.start", "status": status}
            await send({**start, "headers": headers})
            await send({"type": "websocket.http.response.body", "body": body})
        else:
            await send({"type": "websocket.close", "code": 1008})

    def refusal(self, scope: Scope) -> tuple[int, str, str, str] | None:
        """Why a request is refused (status, error, reason, message), or ``None``."""
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        served = scope.get("server")
        scheme = scope.get("scheme", "http")
        if not self.origins.allow(headers.get("origin"), scheme, served):
            return (
                403,
                "forbidden",
                "origin",
                "a page of this Origin may not call this server (see --allow-origin)",
            )
        if self.local_hosts and not self.origins.local_host(headers.get("host"), served):
            return (421, "misdirected", "host", "this server answers only to local names")
        if not self._needs_token(scope) or self.sign_in is not None:
            return None
        given = bearer_token(headers.get("authorization"))
        if given is None and scope["type"] == "websocket":
            offered = [p for p in scope.get("subprotocols", ()) if p.startswith(_BEARER_PROTOCOL)]
            given = offered[0][len(_BEARER_PROTOCOL) :] if offered else None
        if not check_token(given, self.token):
            return _UNAUTHORIZED
        return None

    def _needs_token(self, scope: Scope) -> bool:
        return self.guarded(scope["path"]) and scope.get("method") != "OPTIONS"


_UNAUTHORIZED = (
    401,
    "unauthorized",
    "unauthorized",
    "send the server's token: Authorization: Bearer <token>",
)


def secret_text(
    flag: str, secret_file: str | None, env: Mapping[str, str], name: str, missing: str
) -> str:
    """A signing secret's text: from ``secret_file`` (given as ``flag``), else ``env[name]``;
    ``UsageError`` saying ``missing`` when there is neither, or naming the file when it does not
    read. Never quotes the secret."""
    if secret_file is not None:
        try:
            return Path(secret_file).read_text(encoding="utf-8")
        except (OSError, UnicodeError) as exc:
            raise UsageError(
                f"{flag} {secret_file}: cannot read it ({type(exc).__name__})"
            ) from None
    text = env.get(name, "")
    if not text.strip():
        raise UsageError(missing)
    return text
