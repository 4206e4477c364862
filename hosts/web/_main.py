"""``pi-recipes serve RECIPE``: the web host under uvicorn, on the store the CLI uses.

Building the parser imports nothing but argparse; the server's libraries (FastAPI, uvicorn)
are imported when it runs, and their absence is a usage error saying what to install.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence

from hosts._command import access_arguments, apply_policy, policy_argument, webhook_arguments
from interactions import PiRecipesError, UsageError
from interactions.errors import error_code
from interactions.secrets import scrub_logs
from interactions.store import DEFAULT_STORE_PATH

__all__ = ["build_parser", "configure_parser", "main", "run_parsed"]

DESCRIPTION = """\
Serve a recipe on the web: the page (/), a WebSocket (/ws), REST (/api/runs...), the AG-UI
endpoint (POST /agui) and the OpenAPI docs (/docs), on the same store as the command line, so
runs started by `pi-recipes run` show up on the page and are answered there."""

EPILOG = """\
Every API call and WebSocket needs someone signed in: the shared bearer token (generated at
first start into the store's folder, web-token, and printed once, or read from --token-file;
it signs in as `token`), a person's token from --users, the headers of a proxy --trust-proxy
names, or a JWT of --jwt-issuer. Answers record who signed in. The page asks for a token
once. Stop with Ctrl-C (running legs get a few seconds to end)."""


def configure_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Give ``parser`` the arguments of ``pi-recipes serve``; returns ``parser``."""
    parser.description = DESCRIPTION
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("recipe", help="the recipe new runs start (path.py[:function] or module)")
    parser.add_argument(
        "--store",
        metavar="PATH",
        help=f"a SQLite file (default {DEFAULT_STORE_PATH}) or a postgresql:// URL",
    )
    parser.add_argument(
        "--engine",
        metavar="URL",
        help="serve the runs of an engine instead of a store: temporal://HOST:PORT/NAMESPACE "
        "(default: $PI_RECIPES_ENGINE unless --store is given)",
    )
    parser.add_argument("--host", default="127.0.0.1", help="the address (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="the port (default 8000; 0: any)")
    parser.add_argument("--agent", help="the recipe's agent for new runs (default: its default)")
    parser.add_argument(
        "--workflow",
        action="append",
        default=[],
        metavar="FILE",
        help="a .iter workflow the page (and POST /api/runs) may start too, with its vars "
        "(repeatable)",
    )
    access_arguments(parser)  # --token-file, --allow-origin (CORS and WebSockets)
    policy_argument(parser)
    people_arguments(parser)
    webhook_arguments(parser)
    parser.add_argument("--workers", type=int, default=4, help="legs run at once (default 4)")
    parser.add_argument(
        "--ping-interval",
        type=float,
        default=20.0,
        metavar="SECONDS",
        help="ping WebSocket clients this often; one that does not answer within as long is "
        "closed (default 20)",
    )
    return parser


def people_arguments(parser: argparse.ArgumentParser) -> None:
    """The ways people sign in: ``--users``, ``--trust-proxy``, ``--jwt-*``."""
    who = parser.add_argument_group("who signs in (answers record them)")
    who.add_argument(
        "--users",
        metavar="FILE",
        help="the users file: people sign in with their token (pr_NAME_...; "
        "`pi-recipes users add`); default $PI_RECIPES_USERS",
    )
    who.add_argument(
        "--trust-proxy",
        action="append",
        default=[],
        metavar="CIDR",
        help="read the sign-in headers of oauth2-proxy (X-Forwarded-User, -Groups, -Email) "
        "from these addresses only (repeatable)",
    )
    who.add_argument("--jwt-issuer", metavar="URL", help="accept bearer JWTs of this OIDC provider")
    who.add_argument("--jwt-audience", metavar="AUD", help="the audience those JWTs must name")
    who.add_argument(
        "--jwks-url",
        metavar="URL",
        help="the provider's keys (default: the jwks_uri of "
        "ISSUER/.well-known/openid-configuration)",
    )
    who.add_argument(
        "--jwt-groups-claim",
        default="groups",
        metavar="CLAIM",
        help="the claim listing a person's groups (default groups)",
    )


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``pi-recipes serve``."""
    return configure_parser(argparse.ArgumentParser(prog="pi-recipes serve"))


def main(argv: Sequence[str] | None = None) -> int:
    """``pi-recipes serve ARGS``; return the exit code (2 for a usage error)."""
    scrub_logs()
    return run_parsed(build_parser().parse_args(argv))


def run_parsed(args: argparse.Namespace) -> int:
    """Serve with parsed arguments until stopped; return the exit code."""
    try:
        apply_policy(args.policy)
        try:
            from hosts.web._serve import serve
        except ImportError as exc:
            needed = (exc.name or "its extra").partition(".")[0]
            raise UsageError(
                f"pi-recipes serve needs {needed}: pip install 'pi-recipes[web]'"
            ) from None
        return asyncio.run(serve(args))
    except PiRecipesError as exc:
        code = error_code(exc)
        print(f"pi-recipes: {code.label}: {exc}", file=sys.stderr)
        return code.exit_code
    except KeyboardInterrupt:
        return 130
