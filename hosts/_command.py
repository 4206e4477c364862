"""What the command lines of the stdio hosts share (``pi-recipes rpc``, ``pi-recipes mcp``):
the recipe they serve as their first argument, and logging that keeps off standard output,
which carries the protocol."""

from __future__ import annotations

import argparse
import logging
import sys

__all__ = ["RECIPE_HELP", "log_to_stderr", "stdio_host_parser"]

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
