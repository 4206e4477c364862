"""How the command line runs a command and reports its errors: one line on stderr, the exit code
of the error's family (from :data:`interactions.errors.ERROR_CODES`), never a traceback."""

from __future__ import annotations

import argparse
import sys

import anyio

from interactions.errors import PiRecipesError, RunError, error_code

__all__ = ["report", "run_reporting"]

RESUMABLE = frozenset({"usage_window", "unavailable", "transient_exhausted"})


def report(error: PiRecipesError) -> int:
    """Print ``error`` as ``pi-recipes: <label>: <message>`` on stderr; return its exit code."""
    code = error_code(error)
    print(f"pi-recipes: {code.label}: {error}", file=sys.stderr)
    if isinstance(error, RunError) and error.run_id and error.reason in RESUMABLE:
        print(
            f"pi-recipes: retry it later with: pi-recipes runs retry {error.run_id}",
            file=sys.stderr,
        )
    return code.exit_code


async def _main(args: argparse.Namespace) -> int:
    if args.command == "run":
        from hosts.cli._run import run_command

        return await run_command(args)
    if args.command == "graph":
        from hosts.cli._graph import graph_command

        return await graph_command(args)
    from hosts.cli._runs import runs_command

    return await runs_command(args)


def run_reporting(args: argparse.Namespace) -> int:
    """Run the parsed command; return its exit code (errors reported, Ctrl-C is 130)."""
    try:
        code: int = anyio.run(_main, args)
        return code
    except PiRecipesError as error:
        return report(error)
    except KeyboardInterrupt:
        return 130
