"""Serving the application with uvicorn (its ``websockets-sansio`` WebSocket implementation,
built on the ``websockets`` library) until Ctrl-C or SIGTERM."""

from __future__ import annotations

import argparse
import os
import socket
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import uvicorn

from hosts._kit import Webhook, delivering, load_token, load_users, token_folder, webhooks_from
from hosts._store import chosen_location
from hosts.web._jwt import JwtCheck
from hosts.web._listen import listen
from hosts.web._signin import check_networks
from hosts.web.app import WebConfig, create_app
from interactions import UsageError
from interactions.asks import interrupt_ttl
from interactions.secrets import scrub_logs
from interactions.store import DEFAULT_STORE_PATH, names_engine, open_store
from interactions.store.postgres import redact_dsn
from recipes import load_recipe
from recipes.graph.compiler import load_graph

__all__ = ["BannerServer", "serve"]


async def serve(args: argparse.Namespace) -> int:
    """Serve ``pi-recipes serve``'s parsed arguments until stopped; return the exit code."""
    load_recipe(args.recipe)  # a recipe that does not load fails now, not at the first run
    for workflow in args.workflow:  # nor does a workflow that does not validate
        load_graph(workflow)
    interrupt_ttl(os.environ)  # nor does a malformed lifetime of the questions
    where = chosen_location(args.store, args.engine, os.environ)
    people = signing_in(args, os.environ)  # a users file that does not read: before anything
    hooks = webhooks_from(args.webhook, args.webhook_secret_file, os.environ)  # nor a secret
    if args.token_file is not None:  # a token file that cannot be read: before anything opens
        load_token(token_folder(where), args.token_file)
    sockets = listen(args.host, args.port)  # an address that cannot be served: nor a token
    try:
        return await _serve_on(args, where, sockets, people, hooks)
    finally:
        for sock in sockets:
            sock.close()


def signing_in(args: argparse.Namespace, env: Mapping[str, str]) -> dict[str, Any]:
    """The ``WebConfig`` settings of who signs in (``users``, ``trust_proxy``, ``jwt``), read
    from the arguments (``--users`` defaults to ``$PI_RECIPES_USERS``); ``UsageError`` for a
    users file that does not read, a network that is none, a JWT issuer without an
    audience."""
    users_file = args.users or env.get("PI_RECIPES_USERS") or None
    issuer, audience = args.jwt_issuer, args.jwt_audience
    if bool(issuer) != bool(audience) or (args.jwks_url and not issuer):
        raise UsageError("--jwt-issuer and --jwt-audience go together (--jwks-url with them)")
    check_networks(args.trust_proxy)
    return {
        "users": load_users(users_file) if users_file else None,
        "trust_proxy": tuple(args.trust_proxy),
        "jwt": JwtCheck(issuer, audience, args.jwks_url, args.jwt_groups_claim) if issuer else None,
    }


async def _serve_on(
    args: argparse.Namespace,
    where: str | None,
    sockets: list[socket.socket],
    people: dict[str, Any],
    hooks: list[Webhook],
) -> int:
    async with await open_store(where) as store:  # a store that cannot open: before a token
        await store.latest_cursor()  # nor one that cannot be read (a damaged file): one line
        token, token_path, created = load_token(token_folder(where), args.token_file)
        scrub_logs({**os.environ, "PI_RECIPES_WEB_TOKEN": token})  # no log line shows it
        config = WebConfig(
            recipe=args.recipe,
            token=token,
            agent=args.agent,
            workflows=tuple(args.workflow),
            host=args.host,
            allowed_origins=tuple(args.allow_origin),
            workers=args.workers,
            ping_interval=args.ping_interval,
            **people,
        )
        app = create_app(store, config)
        settings = uvicorn.Config(
            app,
            host=args.host,
            port=args.port,
            ws="websockets-sansio",
            ws_max_size=config.max_frame,
            ws_per_message_deflate=False,  # small JSON frames: not worth zlib per client
            ws_ping_interval=config.ping_interval,
            ws_ping_timeout=config.ping_interval,
            proxy_headers=False,  # the peer stays the peer: --trust-proxy decides on it
            timeout_graceful_shutdown=int(config.shutdown_grace),
            log_level="info",
            lifespan="on",
        )
        banner = _banner(args, where or str(DEFAULT_STORE_PATH), token, token_path, created)
        server = BannerServer(settings, banner=banner, on_stop=app.state.web.feed.stop)
        try:
            async with delivering(store, hooks):  # an engine's store keeps none: refused now
                await server.serve(sockets)
        finally:
            if created and not server.started:  # a new token is printed once: even now
                port = sockets[0].getsockname()[1]
                for line in banner(port)[:-1]:
                    print(line, flush=True)
    return 0


def _banner(
    args: argparse.Namespace, where: str, token: str, path: Path, created: bool
) -> Callable[[int], list[str]]:
    def lines(port: int) -> list[str]:
        host = f"[{args.host}]" if ":" in args.host else args.host
        url = f"http://{host}:{port}/"
        out = [
            f"pi-recipes serve {args.recipe}",
            f"  {'engine' if names_engine(where) else 'store'}: {redact_dsn(where)}",
            f"  page:  {url}",
        ]
        if created:
            out += [f"  token: {token}  (new; kept in {path})", f"  open:  {url}#token={token}"]
        else:
            out.append(f"  token: kept in {path}")
        return [*out, f"ready: {url}"]

    return lines


class BannerServer(uvicorn.Server):
    """uvicorn's server, printing where it listens once it does (``--port 0`` included), and
    calling ``on_stop`` when it starts shutting down (before it waits for open responses)."""

    def __init__(
        self,
        config: uvicorn.Config,
        *,
        banner: Callable[[int], list[str]],
        on_stop: Callable[[], None] | None = None,
    ) -> None:
        super().__init__(config)
        self._banner = banner
        self._on_stop = on_stop

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        if self._on_stop is not None:
            self._on_stop()
        await super().shutdown(sockets)

    async def startup(self, sockets: Any = None) -> None:
        await super().startup(sockets)
        if self.started and self.servers:
            port = self.servers[0].sockets[0].getsockname()[1]
            for line in self._banner(port):
                print(line, flush=True)
