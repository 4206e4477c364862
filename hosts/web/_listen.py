"""Binding the server's listening sockets before anything else starts, so that an address that
cannot be served is a usage error naming it (and no token is made for a server that never ran)."""

from __future__ import annotations

import errno
import socket

from interactions import UsageError

__all__ = ["listen"]


def listen(host: str, port: int) -> list[socket.socket]:
    """Bind ``host``:``port`` (every address ``host`` resolves to; ``port`` 0: a free one) and
    return the sockets, ready for uvicorn to listen on.

    Raises :class:`UsageError` naming the host and port when it cannot be bound (in use, not
    allowed, not an address of this machine, a name that does not resolve).
    """
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise UsageError(f"--host {host} is not an address to serve on: {exc.strerror}") from None
    bound: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in dict.fromkeys(found):
            sock = socket.socket(family, kind, proto)
            bound.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:  # as asyncio does: v6 sockets serve v6 only
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            if port == 0 and len(bound) > 1:  # every address on the port the first one got
                address = (address[0], bound[0].getsockname()[1], *address[2:])
            try:
                sock.bind(address)
            except OSError as exc:
                raise UsageError(_refusal(host, int(address[1]), exc)) from None
    except BaseException:
        for sock in bound:
            sock.close()
        raise
    return bound


def _refusal(host: str, port: int, error: OSError) -> str:
    if error.errno == errno.EADDRINUSE:
        return (
            f"port {port} on {host} is in use: stop what listens there, or pass another "
            "--port (--port 0 takes a free one)"
        )
    if error.errno == errno.EACCES:
        return f"port {port} on {host} is not allowed for this user: pass a --port above 1023"
    return f"cannot serve on {host} port {port}: {error.strerror or error}"
