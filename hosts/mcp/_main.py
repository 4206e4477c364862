"""Serving a recipe's MCP server: on stdin/stdout (:func:`serve_stdio`), over streamable HTTP
(:func:`serve_http`), and the command line ``pi-recipes mcp RECIPE [--http HOST:PORT]``
(:func:`main`)."""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import socket
import sys
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, cast

import anyio
from anyio.abc import TaskStatus
from mcp.server import Server
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import TransportSecuritySettings

from hosts._command import (
    access_arguments,
    apply_policy,
    log_to_stderr,
    policy_argument,
    stdio_host_parser,
)
from hosts._kit import Gate, Origins, check_origins, load_token, token_folder
from hosts._stdio import TextWriter, protocol_stdio, text_lines
from hosts._store import chosen_location
from hosts.mcp._server import build_server, served_tools
from interactions import PiRecipesError, UsageError
from interactions.secrets import scrub_logs
from recipes import load_recipe

__all__ = [
    "build_parser",
    "configure_parser",
    "main",
    "parse_address",
    "run_parsed",
    "serve_http",
    "serve_stdio",
]

DESCRIPTION = """\
Serve a recipe's tools over the Model Context Protocol: on stdin/stdout (the default, for a
client that starts the server itself, such as Claude Desktop), or over streamable HTTP at
http://HOST:PORT/mcp (--http), where every request needs the token `pi-recipes serve` uses
(Authorization: Bearer <token>). When a tool asks a question or an approval, a client that
supports elicitation shows it as a form; otherwise the ask falls through the rest of the chain
(PI_ASK_USER_AUTO_APPROVE, PI_INTERRUPT_RESUME, else "unavailable"). See docs/hosts/mcp.md."""

EPILOG = """\
exit status: 0 when standard input ended (stdio); 130 after Ctrl-C, which stops the HTTP server
gracefully (as SIGTERM does, ending with that signal); 2 when the recipe or agent cannot be had
or the address cannot be used (the reason is written to standard error, standard output stays
empty); 1 for another failure."""

AUTHORIZATION = "Authorization: Bearer <token>"

GRACEFUL_SHUTDOWN = 5.0
"""Seconds open HTTP streams may take to close when the server stops."""


def _say(text: str) -> None:
    print(f"pi-recipes mcp: {text}", file=sys.stderr, flush=True)


async def serve_stdio(server: Server[Any]) -> None:
    """Serve ``server`` on the process's stdin and stdout until stdin ends or the call is
    cancelled (Ctrl-C). While it serves, anything else written to standard output goes to
    standard error, and standard input reads as empty to anything else, so a tool's stray
    ``print``, or a command it starts, cannot break the protocol.

    The SDK's stdio transport does both, but reads stdin in a worker thread that a cancel must
    wait for: a Ctrl-C never ended a server waiting for its client. It is given streams over
    :func:`~hosts._stdio.protocol_stdio` instead, read and written in abandonable threads.
    """
    with protocol_stdio() as (stdin, stdout):
        lines = cast("anyio.AsyncFile[str]", text_lines(stdin))  # it iterates lines,
        writer = cast("anyio.AsyncFile[str]", TextWriter(stdout))  # and writes and flushes
        async with stdio_server(lines, writer) as (read, write):
            await server.run(read, write, server.create_initialization_options())


async def _serve_stdio_until_ctrl_c(server: Server[Any]) -> bool:
    """Serve on stdio (:func:`serve_stdio`) until stdin ends (``False``) or a Ctrl-C stops it
    (``True``). The SDK's teardown, cancelled mid-message, can raise its own errors (a stream
    closed under a relay) in place of the cancellation: after a Ctrl-C they are noise, and the
    exit status must still say that Ctrl-C ended the server."""
    interrupted = False
    try:
        async with anyio.create_task_group() as group:

            async def on_ctrl_c(*, task_status: TaskStatus[None]) -> None:
                nonlocal interrupted
                with anyio.open_signal_receiver(signal.SIGINT) as signals:
                    task_status.started()
                    async for _ in signals:
                        interrupted = True
                        group.cancel_scope.cancel()
                        return

            await group.start(on_ctrl_c)
            await serve_stdio(server)
            group.cancel_scope.cancel()
    except Exception:
        if not interrupted:
            raise
        logging.getLogger("hosts.mcp").debug("stopping after Ctrl-C", exc_info=True)
    return interrupted


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6; port 0 picks a free port) as ``(host, port)``.
    Raises ``argparse.ArgumentTypeError`` saying what was expected."""
    host, sep, port = text.rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not HOST:PORT; for example 127.0.0.1:8765 (port 0: any free port)"
        )
    return host, int(port)


def _listen(host: str, port: int) -> socket.socket:
    try:
        family, _, _, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        return socket.create_server(address[:2], family=family, backlog=128)
    except OSError as exc:
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


async def serve_http(
    server: Server[Any],
    host: str,
    port: int,
    *,
    token: str,
    allowed_origins: Sequence[str] = (),
    on_ready: Callable[[str], None] | None = None,
) -> None:
    """Serve ``server`` over streamable HTTP at ``http://HOST:PORT/mcp`` until stopped
    (Ctrl-C or SIGTERM: open streams get :data:`GRACEFUL_SHUTDOWN` seconds to close).

    Every request needs ``token`` (``Authorization: Bearer <token>``; 401 otherwise). A
    browser page may call only from one of ``allowed_origins`` or from the address served
    (its loopback names on a loopback address), on every interface (403 otherwise); on a
    loopback address, however spelled, a request whose ``Host`` is not local is refused too
    (421; DNS rebinding). The socket is listening when ``on_ready(url)`` is called (with the
    port chosen when ``port`` is 0). Raises :class:`~interactions.UsageError` when the
    address cannot be listened on or an origin is malformed.
    """
    import uvicorn

    origins = Origins(check_origins(allowed_origins), host)
    sock = _listen(host, port)
    bound = sock.getsockname()[1]
    # The kit's Gate checks Host and Origin (and the token) in front of the SDK's app; the
    # SDK's own check, off, would compare Origins with a fixed list and no configured ones.
    unchecked = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    app = Gate(
        server.streamable_http_app(host=host, transport_security=unchecked),
        token=token,
        origins=origins,
        local_hosts=True,
    )
    config = uvicorn.Config(
        app, log_level="warning", lifespan="on", timeout_graceful_shutdown=int(GRACEFUL_SHUTDOWN)
    )
    shown = f"[{host}]" if ":" in host else host
    if on_ready is not None:
        on_ready(f"http://{shown}:{bound}/mcp")
    with sock:
        await uvicorn.Server(config).serve(sockets=[sock])


def configure_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Give ``parser`` the arguments, description and epilog of :func:`main` (``pi-recipes
    mcp`` hands its arguments to it); returns ``parser``."""
    stdio_host_parser(parser, DESCRIPTION, EPILOG)
    parser.add_argument(
        "--http",
        metavar="HOST:PORT",
        type=parse_address,
        help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio (port 0: any)",
    )
    parser.add_argument(
        "--agent", help="serve only the tools of this agent (default: every tool of the recipe)"
    )
    access_arguments(parser)  # for --http: the token's file, the origins pages may call from
    policy_argument(parser)
    return parser


def build_parser(prog: str = "pi-recipes mcp") -> argparse.ArgumentParser:
    """The argument parser of :func:`main`."""
    return configure_parser(argparse.ArgumentParser(prog=prog))


def main(argv: Sequence[str] | None = None) -> int:
    """Serve a recipe over MCP; return the exit code (see :func:`run_parsed`). ``argv`` are the
    arguments after the command; bad ones exit with status 2 through ``argparse``."""
    scrub_logs()
    return run_parsed(build_parser().parse_args(argv))


def run_parsed(args: argparse.Namespace) -> int:
    """Serve with the arguments a :func:`configure_parser` parser read; return the exit code:
    0 when stdin ended (stdio), 130 after Ctrl-C, 2 when the recipe, the agent or the address
    cannot be had, 1 for another failure of the library, 130 on Ctrl-C. The server's notices,
    and what the recipe prints while it loads, go to standard error; standard output carries
    the protocol (stdio) or nothing (HTTP)."""
    log_to_stderr("pi-recipes mcp")
    try:
        # What the recipe prints while it loads goes to standard error: on stdio, standard
        # output carries nothing but the protocol's messages.
        apply_policy(args.policy)
        with contextlib.redirect_stdout(sys.stderr):
            recipe = load_recipe(args.recipe)
            tools = served_tools(recipe, args.agent)
            server = build_server(recipe, agent=args.agent, env=dict(os.environ))
        names = ", ".join(tool.name for tool in tools)
        if args.http is None:
            _say(f"serving {recipe.name} ({names}) on stdio")
            if anyio.run(_serve_stdio_until_ctrl_c, server):
                return 130
        else:
            host, port = args.http
            origins = check_origins(args.allow_origin)
            folder = token_folder(chosen_location(None, None, os.environ))  # as serve's
            token, where, created = load_token(folder, args.token_file)

            def ready(url: str) -> None:
                _say(f"serving {recipe.name} ({names}) at {url}")
                made = "made now, " if created else ""
                _say(f"every request needs the token ({made}kept in {where}): {AUTHORIZATION}")

            serve = partial(serve_http, server, host, port, token=token, allowed_origins=origins)
            anyio.run(partial(serve, on_ready=ready))
    except UsageError as exc:
        _say(f"error: {exc}")
        return 2
    except PiRecipesError as exc:
        _say(f"error: {type(exc).__name__}: {exc}")
        return 1
    except KeyboardInterrupt:
        return 130
    return 0
