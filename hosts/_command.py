"""What the hosts' command lines share: for the stdio hosts (``pi-recipes rpc``, ``pi-recipes
mcp``) the recipe they serve as their first argument, and logging that keeps off standard
output, which carries the protocol; for the HTTP hosts (``pi-recipes serve``, ``pi-recipes mcp
--http``) the token's file and the origins pages may call from; for every host the approval
policy its runs' tool calls are ruled by; for the hosts that follow the store (``serve``,
``slack``) the webhooks they deliver; for the long-lived hosts (``slack``, ``email``) how
their run ends (:func:`run_host`)."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path

__all__ = [
    "RECIPE_HELP",
    "WEBHOOK_SECRET_ENV",
    "access_arguments",
    "apply_policy",
    "log_to_stderr",
    "policy_argument",
    "run_host",
    "stdio_host_parser",
    "webhook_arguments",
]

RECIPE_HELP = "a recipe file (path.py[:function]), module:function or entry point name"


def stdio_host_parser(
    parser: argparse.ArgumentParser, description: str, epilog: str
) -> argparse.ArgumentParser:
    """``parser`` with ``description`` and ``epilog`` (shown as written) and its first
    argument, ``recipe``; the host adds its own after it. Returns ``parser``."""
    parser.description = description
    parser.epilog = epilog
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("recipe", help=RECIPE_HELP)
    return parser


def log_to_stderr(command: str) -> None:
    """Send warnings and worse to standard error, each line headed by ``command``."""
    logging.basicConfig(
        stream=sys.stderr,
        level=logging.WARNING,
        format=f"{command}: %(levelname)s: %(message)s",
    )


def access_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Give ``parser`` the options every HTTP host shares: ``--token-file`` and
    ``--allow-origin``; returns ``parser``."""
    parser.add_argument("--token-file", type=Path, help="read the token from this file")
    parser.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="let pages from ORIGIN (https://host:port) call the server; repeatable; default "
        "none beyond the address served",
    )
    return parser


WEBHOOK_SECRET_ENV = "PI_RECIPES_WEBHOOK_SECRET"


def webhook_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Give ``parser`` ``--webhook URL`` (repeatable) and ``--webhook-secret-file FILE``
    (:func:`hosts._kit.webhooks_from` reads them); returns it."""
    hooks = parser.add_argument_group("webhooks (signed, delivered at least once from the store)")
    hooks.add_argument(
        "--webhook",
        action="append",
        default=[],
        metavar="URL",
        help="post each interaction event (opened, voted, answered, expired, cancelled) here as "
        "JSON, signed the Standard Webhooks way; repeatable",
    )
    hooks.add_argument(
        "--webhook-secret-file",
        metavar="FILE",
        help=f"the webhooks' signing secret, whsec_... (default: ${WEBHOOK_SECRET_ENV}); "
        "required with --webhook",
    )
    return parser


POLICY_ENV = "PI_RECIPES_POLICY"


def policy_argument(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Give ``parser`` ``--policy FILE``, the approval policy of the host's runs; returns it."""
    parser.add_argument(
        "--policy",
        metavar="FILE",
        help=f"an approval policy for every run's tool calls (TOML [[rule]]s: allow, ask or "
        f"deny; default: ${POLICY_ENV})",
    )
    return parser


def apply_policy(given: str | None, env: MutableMapping[str, str] = os.environ) -> None:
    """Check the approval policy ``given`` (``--policy``), else the one ``env`` names, before
    the host serves anything, and name it in ``env`` by its absolute path: every run's tools
    read it there. Raises :class:`~recipes.policy.PolicyError` (a ``UsageError``, exit 2)
    listing every mistake of a bad file."""
    named = given or env.get(POLICY_ENV)
    if named:
        from recipes.policy import load_policy

        env[POLICY_ENV] = str(load_policy(Path(named)).path.resolve())


def run_host(main: Callable[[argparse.Namespace], Awaitable[int]], args: argparse.Namespace) -> int:
    """Run a long-lived host's ``main(args)`` to its end: its exit code; an error of ours (alone,
    or alone in the task group that raised it) said in one line, ``pi-recipes: LABEL:
    message``, with its exit code; 130 on Ctrl-C. Anything else is raised: a bug shows whole."""
    import anyio  # here, not at the top: a parser's --help imports this module

    from interactions import PiRecipesError
    from interactions.errors import error_code

    try:
        code: int = anyio.run(main, args)
        return code
    except (PiRecipesError, BaseExceptionGroup) as raised:
        error: BaseException = raised
        while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
            error = error.exceptions[0]
        if not isinstance(error, PiRecipesError):
            raise
        label = error_code(error)
        print(f"pi-recipes: {label.label}: {error}", file=sys.stderr)
        return label.exit_code
    except KeyboardInterrupt:
        return 130
