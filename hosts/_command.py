"""What the hosts' command lines share: for the stdio hosts (``pi-recipes rpc``, ``pi-recipes
mcp``) the recipe they serve as their first argument, and logging that keeps off standard
output, which carries the protocol; for the HTTP hosts (``pi-recipes serve``, ``pi-recipes mcp
--http``) the token's file and the origins pages may call from."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

__all__ = ["RECIPE_HELP", "access_arguments", "log_to_stderr", "stdio_host_parser"]

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
