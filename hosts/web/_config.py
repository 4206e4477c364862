"""What one web server is configured with: its recipe, its token, its limits."""

from __future__ import annotations

from dataclasses import dataclass

from hosts._kit import Users, check_origins
from hosts.web._jwt import JwtCheck
from interactions import UsageError

__all__ = ["WebConfig"]


@dataclass(frozen=True)
class WebConfig:
    """The settings of one server.

    ``recipe`` (and ``agent``) is what new runs start (REST ``POST /api/runs``, a new AG-UI
    thread); stored runs continue with their own recipe. ``token`` guards every API call and
    WebSocket. ``allowed_origins`` turns CORS on for those origins and lets their pages call
    the server and open WebSockets; beside them only pages of the address served may (the
    connection's local address, ``host`` as ``--host`` spelled it, and the loopback names on
    a loopback address), whatever ``Host`` a request names. ``workers`` legs run at once, ``queue``
    more wait (then HTTP 503). ``max_body`` bounds a request body, ``max_frame`` a WebSocket
    message (bytes). A WebSocket client holds ``client_buffer`` unsent frames (the queued deltas
    of one message coalesce into one); a burst may overfill that for a moment, but a client
    whose outbox stays over it ``send_timeout`` seconds, or one of whose frames waits that
    long to leave, is dropped (close code 4008), as is one far behind (see
    ``hosts.web._hub``). ``ping_interval`` spaces WebSocket pings (a client that does not
    answer within as long is closed). ``expire_every`` spaces the expiry sweep (``0``: none);
    ``retry_every`` the retry sweep, which retries runs started with automatic retries
    (``--auto-resume``) once their retry is due (``0``: none).
    ``start_timeout`` bounds how long a request waits for its leg to leave the queue.

    ``workflows`` (``.iter`` files) may be started too, as graph runs on their vars (``POST
    /api/runs`` with ``workflow``; ``GET /api/startable`` lists them with their vars).

    Who a request is (:mod:`hosts.web._signin`): beside the shared ``token``, a person's
    token from the ``users`` file, the sign-in headers of a proxy at an address in
    ``trust_proxy`` (networks, ``10.0.0.0/8``), a bearer JWT that ``jwt`` accepts.
    """

    recipe: str
    token: str
    agent: str | None = None
    workflows: tuple[str, ...] = ()
    host: str | None = None
    allowed_origins: tuple[str, ...] = ()
    workers: int = 4
    queue: int = 64
    max_body: int = 1 << 20
    max_frame: int = 64 << 10
    client_buffer: int = 256
    send_timeout: float = 10.0
    ping_interval: float = 20.0
    expire_every: float = 60.0
    retry_every: float = 30.0
    start_timeout: float = 30.0
    shutdown_grace: float = 10.0
    users: Users | None = None
    trust_proxy: tuple[str, ...] = ()
    jwt: JwtCheck | None = None

    def __post_init__(self) -> None:
        if not self.token or any(c.isspace() for c in self.token):
            raise UsageError("the web server's token must be a non-empty word")
        for name in ("workers", "client_buffer", "max_body", "max_frame"):
            if getattr(self, name) < 1:
                raise UsageError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.queue < 0:
            raise UsageError(f"queue must be >= 0, got {self.queue}")
        for name in ("send_timeout", "ping_interval", "start_timeout", "shutdown_grace"):
            if not getattr(self, name) > 0:
                raise UsageError(f"{name} must be > 0 seconds, got {getattr(self, name)}")
        for name in ("expire_every", "retry_every"):
            if not getattr(self, name) >= 0:
                raise UsageError(f"{name} must be >= 0 seconds, got {getattr(self, name)}")
        check_origins(self.allowed_origins)
        from hosts.web._signin import check_networks

        check_networks(self.trust_proxy)
