"""``pi-recipes email``: mail each question of the store to its approvers, and serve the pages
their links open (uvicorn)."""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import socket
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import anyio

from hosts._command import apply_policy, policy_argument, run_host
from hosts._kit import USERS_ENV, find_users
from hosts._store import chosen_location
from hosts.email._config import (
    PASSWORD_ENV,
    SECRET_ENV,
    TLS_MODES,
    USERNAME_ENV,
    EmailConfig,
    SmtpSettings,
    UsersFile,
    read_secret,
)
from hosts.email._host import EmailHost
from hosts.email._links import LinkSigner
from interactions import UsageError
from interactions.secrets import scrub_logs
from interactions.store import DEFAULT_STORE_PATH, Store, open_store
from recipes.runs import runner_for

__all__ = ["build_parser", "main", "serve"]

logger = logging.getLogger("hosts.email")

EPILOG = f"""\
environment: {USERNAME_ENV} and {PASSWORD_ENV}: the SMTP login (none when unset);
{SECRET_ENV}: the links' signing secret, when --secret-file is not given;
{USERS_ENV}: the users file, when --users is not given.
The password and the secret are read from the environment (or the file) only, and never
stored, printed or logged."""


def build_parser() -> argparse.ArgumentParser:
    """The arguments of ``pi-recipes email``."""
    parser = argparse.ArgumentParser(
        prog="pi-recipes email",
        description="Mail each question of the store's runs to its approvers (their addresses "
        "from the users file), with a link per choice that answers it once confirmed on a page "
        "this command serves, and a link to the card on the web page.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--store", metavar="PATH", help=f"a SQLite file (default {DEFAULT_STORE_PATH}) or a "
        "postgresql:// URL",
    )  # fmt: skip
    parser.add_argument(
        "--users", metavar="FILE", help=f"the users file: who the approvers are, their groups "
        f"and their addresses (default: ${USERS_ENV}); required",
    )  # fmt: skip
    parser.add_argument(
        "--base-url", required=True, metavar="URL", help="where recipients reach this "
        "command's link pages, e.g. https://pi.example/email (behind your proxy)",
    )  # fmt: skip
    parser.add_argument(
        "--listen", default="127.0.0.1:8025", metavar="HOST:PORT",
        help="serve the link pages here (default 127.0.0.1:8025)",
    )  # fmt: skip
    parser.add_argument(
        "--page-url", metavar="URL", help="the card on the web page (pi-recipes serve), "
        "linked from each mail; may hold {run_id} and {interaction_id}",
    )  # fmt: skip
    parser.add_argument(
        "--to", action="append", default=[], metavar="NAME",
        help="who gets the questions that name no approvers: a name or group:NAME of the users "
        "file; repeatable (default: nobody)",
    )  # fmt: skip
    parser.add_argument(
        "--secret-file", metavar="FILE", help=f"the links' signing secret, at least 32 random "
        f"characters (default: ${SECRET_ENV})",
    )  # fmt: skip
    mail = parser.add_argument_group("mail server")
    mail.add_argument("--from", dest="sender", metavar="ADDRESS", required=True,
                      help="the address mails are sent from")  # fmt: skip
    mail.add_argument("--smtp-host", default="localhost", help="default localhost")
    mail.add_argument("--smtp-port", type=int, help="default 587, 465 with --smtp-tls tls, "
                      "25 with none")  # fmt: skip
    mail.add_argument(
        "--smtp-tls", default="starttls", choices=TLS_MODES,
        help="starttls (default): upgrade the connection, refuse a server that cannot; tls: "
        "TLS from the start; none: a local test server only",
    )  # fmt: skip
    parser.add_argument("--workers", type=int, default=4, metavar="N",
                        help="runs continued here at once (default 4)")  # fmt: skip
    policy_argument(parser)
    return parser


def _listen(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise UsageError(f"--listen {value!r}: give HOST:PORT, e.g. 127.0.0.1:8025")
    return host.strip("[]"), int(port)


def _say(text: str) -> None:
    print(f"pi-recipes email: {text}", file=sys.stderr, flush=True)


async def serve(host: EmailHost, where: tuple[str, int]) -> int:
    """Run ``host`` and serve its pages on ``where`` until SIGINT or SIGTERM; return the exit
    code."""
    import uvicorn

    class Server(uvicorn.Server):  # signals are ours
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

    listener = socket.socket(socket.AF_INET6 if ":" in where[0] else socket.AF_INET)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(where)
    listener.listen(128)
    bound = listener.getsockname()
    # no access log: the links' tokens are in their paths
    server = Server(uvicorn.Config(host.app, lifespan="off", log_level="warning", access_log=False))
    async with host.running(), anyio.create_task_group() as group:

        async def stop_on_signal() -> None:
            with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                async for _ in signals:
                    _say("stopping")
                    server.should_exit = True
                    return

        group.start_soon(stop_on_signal)
        smtp = host.outbox.mailer.settings
        _say(f"mailing questions through {smtp.host}:{smtp.port} ({smtp.tls}) from "
             f"{smtp.sender}; links to {host.config.base_url}")  # fmt: skip
        _say(f"listening on http://{where[0]}:{bound[1]}/answer/…")
        await server.serve(sockets=[listener])
        group.cancel_scope.cancel()
    return 0


async def _run(args: argparse.Namespace) -> int:
    apply_policy(args.policy)
    env = dict(os.environ)
    where = _listen(args.listen)
    if args.workers < 1:
        raise UsageError(f"--workers is at least 1, got {args.workers}")
    users = find_users(args.users, env)
    if users is None:
        raise UsageError(f"pi-recipes email needs the users file: --users FILE or ${USERS_ENV}")
    config = EmailConfig(args.base_url, args.page_url, tuple(args.to))
    signer: LinkSigner = read_secret(args.secret_file, env)
    smtp = SmtpSettings.of(args.smtp_host, args.smtp_port, args.smtp_tls, args.sender, env)
    runs_env = {k: v for k, v in env.items() if k not in (PASSWORD_ENV, SECRET_ENV)}
    async with await open_store(chosen_location(args.store, None, env)) as store:
        host = _host(store, runs_env, config, UsersFile(users), signer, smtp, args.workers)
        return await serve(host, where)


def _host(
    store: Store,
    env: Mapping[str, str],
    config: EmailConfig,
    users: UsersFile,
    signer: LinkSigner,
    smtp: SmtpSettings,
    workers: int,
) -> EmailHost:
    runner = runner_for(store, env=env, host="email", cwd=Path.cwd())
    return EmailHost(runner, config, users, signer, smtp, workers=workers)


def main(argv: Sequence[str] | None = None) -> int:
    """``pi-recipes email``: parse ``argv``, serve; return the exit code (2 for a usage error,
    130 on Ctrl-C)."""
    scrub_logs()
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="pi-recipes email: %(levelname)s %(message)s")
    logging.getLogger("aiosmtplib").setLevel(logging.WARNING)
    return run_host(_run, args)

