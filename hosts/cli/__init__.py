"""The ``pi-recipes`` command line.

- ``pi-recipes run RECIPE [PROMPT]``: run an agent with terminal dialogs, or durably without a
  terminal (``--no-interactive``, or when stdin is not a terminal).
- ``pi-recipes rpc RECIPE``: the JSON-lines RPC protocol on stdin/stdout.
- ``pi-recipes runs list|show|pending|answer|resume|cancel|expire``: stored runs, from any
  process. Refusals exit non-zero with the reason: 3 conflict, 4 unknown id, 5 expired,
  6 invalid payload, 2 usage.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import anyio
from rich.console import Console

from hosts.cli._errors import report
from hosts.cli._run import add_run_command, run_durably, run_in_terminal, stdin_is_terminal
from hosts.cli._runs import add_runs_commands, run_runs_command
from interactions import PiRecipesError
from interactions.store import DEFAULT_STORE_PATH, Store, open_postgres_store, open_sqlite_store

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pi-recipes", description="Run recipe agents whose tools ask a human."
    )
    store = argparse.ArgumentParser(add_help=False)
    store.add_argument(
        "--store",
        dest="store_given",
        metavar="PATH",
        help=f"a SQLite file (default {DEFAULT_STORE_PATH}) or a postgresql:// URL",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run = commands.add_parser("run", help="run a recipe's agent", parents=[store])
    add_run_command(run)
    from hosts.rpc import configure_parser as configure_rpc

    configure_rpc(commands.add_parser("rpc", help="serve the pi RPC protocol on stdin/stdout"))
    runs = commands.add_parser("runs", help="stored runs: list, answer, resume...")
    add_runs_commands(runs, parents=[store])
    return parser


async def open_store(where: str | None) -> Store:
    """The store ``--store`` names: a PostgreSQL URL (``postgresql://...``) or a SQLite file
    (default ``.pi-recipes/state.db``)."""
    if where and where.startswith(("postgresql://", "postgres://")):
        return await open_postgres_store(where)
    return await open_sqlite_store(Path(where or DEFAULT_STORE_PATH))


async def _main(args: argparse.Namespace) -> int:
    console = Console(highlight=False)
    env = dict(os.environ)
    if args.command == "run" and not args.no_interactive and stdin_is_terminal():
        return await run_in_terminal(args, console, env)
    async with await open_store(args.store_given) as store:
        if args.command == "run":
            return await run_durably(args, store, console, env)
        return await run_runs_command(args, store, console)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    args = build_parser().parse_args(argv)
    if args.command == "rpc":
        from hosts.rpc import run_parsed

        return run_parsed(args)
    try:
        code: int = anyio.run(_main, args)
        return code
    except PiRecipesError as error:
        return report(error)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
