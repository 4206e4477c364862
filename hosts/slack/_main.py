"""``pi-recipes slack RECIPE``: serve a recipe as a Slack app, in Socket Mode (the default) or
as HTTP endpoints (``--http HOST:PORT``, served by uvicorn)."""

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

import aiohttp
import anyio
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from hosts._command import (
    WEBHOOK_SECRET_ENV,
    apply_policy,
    policy_argument,
    run_host,
    webhook_arguments,
)
from hosts._kit import USERS_ENV, Webhook, delivering, find_users, webhooks_from
from hosts._store import chosen_location
from hosts.slack._client import DEFAULT_TIMEOUT, SlackOut, slack_error, slack_session, web_client
from hosts.slack._config import API_URL_ENV, SECRET_ENVS, AllowList, SlackConfig, SlackSecrets
from hosts.slack._host import SlackHost
from interactions import UsageError
from interactions.asks import interrupt_ttl
from interactions.secrets import Secrets, scrub_logs
from interactions.store import DEFAULT_STORE_PATH, Store, open_store
from recipes import load_recipe
from recipes.runs import runner_for

__all__ = ["build_parser", "main", "serve"]

logger = logging.getLogger("hosts.slack")

EPILOG = """\
environment: SLACK_BOT_TOKEN (xoxb-, always), SLACK_APP_TOKEN (xapp-, Socket Mode),
SLACK_SIGNING_SECRET (--http); SLACK_API_URL to reach another Slack API (GovSlack);
PI_RECIPES_USERS: the users file, when --users is not given.
The tokens are read from the environment only, and never stored, printed or logged."""


def build_parser() -> argparse.ArgumentParser:
    """The arguments of ``pi-recipes slack``."""
    parser = argparse.ArgumentParser(
        prog="pi-recipes slack",
        description="Serve a recipe's agent as a Slack app: mention it to start a run; its "
        "questions and approvals, from runs started anywhere, become cards to answer in Slack.",
        epilog=EPILOG,
    )
    parser.add_argument("recipe", help="a recipe file (path.py[:function]) or module:function")
    policy_argument(parser)
    parser.add_argument("--agent", help="which of the recipe's agents (default: its default)")
    parser.add_argument("--model", help="provider:name, e.g. openai:gpt-4.1-mini")
    parser.add_argument(
        "--store", metavar="PATH", help=f"a SQLite file (default {DEFAULT_STORE_PATH}) or a "
        "postgresql:// URL",
    )  # fmt: skip
    parser.add_argument(
        "--engine", metavar="URL", help="serve the runs of an engine instead of a store: "
        "temporal://HOST:PORT/NAMESPACE (default: $PI_RECIPES_ENGINE unless --store is given)",
    )  # fmt: skip
    parser.add_argument("--channel", help="channel id (C…) for cards of runs started elsewhere")
    parser.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="WHO",
        help="who may answer: user ids (U…), user groups (S…), 'channel' (the card channel's "
        "members); repeat or separate with commas (default: anyone who sees the card)",
    )
    parser.add_argument(
        "--users", metavar="FILE", help="the users file: answers are recorded as the person a "
        "Slack user (and their user groups) maps to, others as slack:USER_ID, and questions "
        f"naming approvers refuse anyone else (default: ${USERS_ENV}; without either, answers "
        "record the Slack user id)",
    )  # fmt: skip
    parser.add_argument("--command", help="a slash command that starts a run, e.g. /release")
    parser.add_argument(
        "--http", metavar="HOST:PORT", help="serve /slack/events, /slack/interactivity and "
        "/slack/commands here instead of Socket Mode",
    )  # fmt: skip
    parser.add_argument(
        "--full-text-url", metavar="TEMPLATE", help="a page with an interaction's whole text, "
        "linked from cards cut to fit, e.g. https://pi.example/runs/{run_id}#{interaction_id}",
    )  # fmt: skip
    parser.add_argument(
        "--expire-every", type=float, default=60.0, metavar="SECONDS",
        help="how often expired questions are settled (default 60)",
    )  # fmt: skip
    webhook_arguments(parser)
    return parser


def _listen(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise UsageError(f"--http {value!r}: give HOST:PORT, e.g. 127.0.0.1:3000")
    return host, int(port)


async def _identity(client: AsyncWebClient) -> str:
    try:
        me = await client.auth_test()
    except SlackApiError as exc:
        if isinstance(getattr(exc.response, "data", None), dict):  # Slack's own answer
            raise UsageError(f"Slack refused SLACK_BOT_TOKEN ({slack_error(exc)})") from None
        raise UsageError(
            f"Slack at {client.base_url} did not answer ({slack_error(exc)}); try again later, "
            f"or check {API_URL_ENV} if it is set"
        ) from None
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        raise UsageError(
            f"cannot reach Slack at {client.base_url} ({exc or type(exc).__name__}); check the "
            f"network, or {API_URL_ENV} if it is set"
        ) from None
    return f"@{me.get('user', '?')} in {me.get('team', '?')}"


def _say(text: str) -> None:
    print(f"pi-recipes slack: {text}", file=sys.stderr, flush=True)


async def serve(
    config: SlackConfig,
    secrets: SlackSecrets,
    store: Store,
    *,
    http: tuple[str, int] | None = None,
    env: Mapping[str, str] | None = None,
    webhooks: Sequence[Webhook] = (),
) -> int:
    """Serve ``config``'s recipe as a Slack app until interrupted; return the exit code.

    Raises ``UsageError`` before serving when Slack refuses a token, the recipe does not
    load or ``PI_INTERRUPT_TTL_SECONDS`` is malformed, or ``webhooks`` are given on a store
    that keeps no consumers (an engine's). The runs' tools see ``env`` (default
    ``os.environ``) without the Slack secrets and the webhooks' secret. Each of ``webhooks``
    is posted the interaction events of the store while the host serves.
    """
    given = os.environ if env is None else env
    sent = Secrets.from_env(given)  # kept out of all the host says in Slack, its tokens too
    env = {k: v for k, v in given.items() if k not in (*SECRET_ENVS, WEBHOOK_SECRET_ENV)}
    runner = runner_for(store, env=env, host="slack", cwd=Path.cwd())
    recipe = load_recipe(config.recipe)  # a recipe that does not load stops us here
    interrupt_ttl(env)  # as does a malformed lifetime of the questions
    async with slack_session(DEFAULT_TIMEOUT) as session:
        client = web_client(
            secrets.bot_token, session, api_url=config.api_url, timeout=DEFAULT_TIMEOUT
        )
        who = await _identity(client)
        host = SlackHost(config, runner, SlackOut(client, sent))
        async with host.running(), delivering(store, webhooks):
            agent = recipe.agent(config.agent).name
            serving = (  # said once Slack can reach us: a refused app token says nothing else
                f"serving {config.recipe} (agent {agent}) as {who}; answers from: "
                f"{config.allow.describe()}"
                + (f"; people from {config.users.path}" if config.users is not None else "")
            )
            if http is not None:
                await _serve_http(host, secrets, http, serving)
            else:
                await _serve_socket(host, secrets, client, serving)
    return 0


async def _until_signalled() -> None:
    """Return on the first SIGINT or SIGTERM (the host then stops gracefully)."""
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for _ in signals:
            _say("stopping")
            return


async def _serve_http(
    host: SlackHost, secrets: SlackSecrets, where: tuple[str, int], serving: str
) -> None:
    import uvicorn

    from hosts.slack._http import slack_asgi_app

    class Server(uvicorn.Server):  # signals are ours: both modes stop the same way
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

    assert secrets.signing_secret is not None
    listener = socket.socket(socket.AF_INET6 if ":" in where[0] else socket.AF_INET)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(where)
    listener.listen(128)  # connections queue from now on, before uvicorn accepts them
    bound = listener.getsockname()
    app = slack_asgi_app(host, secrets.signing_secret)
    server = Server(uvicorn.Config(app, lifespan="off", log_level="warning"))
    async with anyio.create_task_group() as group:

        async def stop_on_signal() -> None:
            await _until_signalled()
            server.should_exit = True

        group.start_soon(stop_on_signal)
        _say(serving)
        _say(f"listening on http://{where[0]}:{bound[1]}/slack/events (and "
             "/slack/interactivity, /slack/commands)")  # fmt: skip
        await server.serve(sockets=[listener])
        group.cancel_scope.cancel()


async def _serve_socket(
    host: SlackHost, secrets: SlackSecrets, client: AsyncWebClient, serving: str
) -> None:
    from hosts.slack._socket import socket_mode

    assert secrets.app_token is not None
    async with socket_mode(host, secrets.app_token, client):
        _say(serving)
        _say("connected in Socket Mode")
        await _until_signalled()


def config_from(args: argparse.Namespace, env: Mapping[str, str]) -> SlackConfig:
    """The :class:`SlackConfig` the parsed arguments describe (``UsageError`` if invalid)."""
    return SlackConfig(
        recipe=args.recipe,
        agent=args.agent,
        model=args.model,
        channel=args.channel,
        allow=AllowList.parse(args.allow),
        command=args.command,
        full_text_url=args.full_text_url,
        expire_every=args.expire_every,
        api_url=env.get(API_URL_ENV) or None,
        users=find_users(args.users, env),
    )


async def _run(args: argparse.Namespace) -> int:
    apply_policy(args.policy)
    env = dict(os.environ)
    http = _listen(args.http) if args.http else None
    config = config_from(args, env)
    webhooks = webhooks_from(args.webhook, args.webhook_secret_file, env)
    secrets = SlackSecrets.from_env(env, socket_mode=http is None, http=http is not None)
    async with await open_store(chosen_location(args.store, args.engine, env)) as store:
        return await serve(config, secrets, store, http=http, env=env, webhooks=webhooks)


def main(argv: Sequence[str] | None = None) -> int:
    """``pi-recipes slack``: parse ``argv``, serve; return the exit code (2 for a usage error,
    130 on Ctrl-C)."""
    scrub_logs()  # the bot token is never logged, whoever logs (the SDK, a failed leg)
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="pi-recipes slack: %(levelname)s %(message)s")
    for chatty in ("slack_sdk", "hosts.slack.socket_mode"):  # their INFO is the SDK's life
        logging.getLogger(chatty).setLevel(logging.WARNING)
    return run_host(_run, args)

