"""The ``pi-recipes`` command line.

- ``pi-recipes run RECIPE [PROMPT]``: run an agent with terminal dialogs, or durably without a
  terminal (``--no-interactive``, or when stdin is not a terminal).
- ``pi-recipes graph validate|run FILE``: workflows (``.iter``) of recipe agents and humans.
- ``pi-recipes runs list|show|pending|questions|answer|resume|retry|recover|cancel|expire``:
  stored runs, from any process.
- ``pi-recipes worker RECIPE --temporal HOST:PORT``: a Temporal worker of the recipe's runs;
  ``--engine temporal://HOST:PORT/NS`` (or ``PI_RECIPES_ENGINE``) on ``run`` and ``runs``
  then starts, answers and resumes runs there. Refusals exit non-zero with the reason (see
  :data:`interactions.errors.ERROR_CODES`): 3 conflict, 4 unknown id, 5 expired, 6 invalid
  payload, 2 usage.

Hosts plug their own command in through the entry point group :data:`COMMAND_ENTRY_POINTS`
(pi-recipes' hosts: ``rpc``, ``mcp``, ``slack``, ``serve``); the command line names none of them
and imports a host only to run its command. A host without its extra installed is a usage error
saying what to install.

Each command imports what it uses when it runs: answering a question loads neither the terminal
dialogs nor the model providers, nor any host.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import EntryPoint
from typing import cast

__all__ = ["COMMAND_ENTRY_POINTS", "build_parser", "main"]

DEFAULT_STORE = ".pi-recipes/state.db"

COMMAND_ENTRY_POINTS = "pi_recipes.commands"
"""The entry point group of the subcommands hosts plug in: the name is the subcommand
(``pi-recipes NAME ARGS...``), the object the host's ``main(argv: list[str]) -> int``, given
the arguments after the subcommand (it parses them, ``--help`` included) and returning the exit
code. A name the command line has itself (``run``, ``graph``, ``runs``, ``worker``) is not
replaced."""

_OWN = ("run", "graph", "runs", "worker")

_HELP = {
    "rpc": "serve the JSON-lines RPC protocol on stdin/stdout",
    "mcp": "serve a recipe's tools over MCP",
    "slack": "serve a recipe as a Slack app",
    "serve": "serve the web host (page, WebSocket, REST, AG-UI)",
}
"""The ``--help`` line of the commands pi-recipes' own hosts plug in (listing a command imports
no host); another shows the package that brings it."""


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pi-recipes")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"


class _Version(argparse.Action):
    """``--version``, read from the installed package only when asked for."""

    def __call__(self, parser: argparse.ArgumentParser, *args: object, **kwargs: object) -> None:
        print(f"pi-recipes {_version()}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    """The whole command line (argparse only: building it imports nothing else)."""
    from hosts.cli._graph_commands import add_graph_commands
    from hosts.cli._run import add_run_command
    from hosts.cli._runs import add_runs_commands
    from hosts.cli._worker import add_worker_command
    from interactions.plugins import installed_plugins

    parser = argparse.ArgumentParser(
        prog="pi-recipes", description="Run recipe agents whose tools ask a human."
    )
    parser.add_argument("--version", action=_Version, nargs=0, help="print the version and exit")
    store = argparse.ArgumentParser(add_help=False)
    store.add_argument(
        "--store",
        dest="store_given",
        metavar="PATH",
        help=f"a SQLite file (default {DEFAULT_STORE}) or a postgresql:// URL",
    )
    store.add_argument(
        "--engine",
        dest="engine_given",
        metavar="URL",
        help="run on an engine instead of a store: temporal://HOST:PORT/NAMESPACE "
        "(default: $PI_RECIPES_ENGINE)",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run = commands.add_parser("run", help="run a recipe's agent", parents=[store])
    add_run_command(run)
    for name, entry in sorted(installed_plugins(COMMAND_ENTRY_POINTS).items()):
        if name in _OWN:
            continue
        plugged = commands.add_parser(
            name,
            help=_HELP.get(name) or f"(from {entry.dist.name if entry.dist else entry.module})",
            add_help=False,
            prefix_chars="\0",  # every argument goes to the host's own parser
        )
        plugged.add_argument("host_args", nargs=argparse.REMAINDER)
        plugged.set_defaults(host_command=entry)
    graph = commands.add_parser("graph", help="workflows: validate or run a .iter file")
    add_graph_commands(graph, parents=[store])
    runs = commands.add_parser("runs", help="stored runs: list, answer, resume...")
    add_runs_commands(runs, parents=[store])
    worker = commands.add_parser("worker", help="run a Temporal worker of a recipe's runs")
    add_worker_command(worker)
    return parser


def _run_host(entry: EntryPoint, argv: list[str]) -> int:
    """Hand ``argv`` to the command a host plugged in; without its extra, say which to install
    (exit 2)."""
    from interactions import UsageError
    from interactions.plugins import load_plugin

    try:
        command = load_plugin(entry, what=f"pi-recipes {entry.name}")
        if not callable(command):
            raise UsageError(f"pi-recipes {entry.name}: {entry.value} is not a command's main")
    except UsageError as error:
        print(f"pi-recipes: usage: {error}", file=sys.stderr)
        return 2
    return cast(Callable[[list[str]], int], command)(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    _open_closed_streams()
    args = build_parser().parse_args(argv)
    host_command: EntryPoint | None = getattr(args, "host_command", None)
    if host_command is not None:
        code = _run_host(host_command, args.host_args)
    else:
        from hosts.cli._errors import run_reporting

        code = run_reporting(args)
    if argv is None and "temporalio.bridge" in sys.modules:
        _exit_now(code)
    return code


def _open_closed_streams() -> None:
    """Give a standard stream the process was started without (``>&-``, a daemon's closed
    descriptor) the null device: what is printed there is dropped, as a shell's redirection
    to /dev/null would, instead of every print failing on ``None``."""
    if sys.stdout is None:
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - the process's own, never closed
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - the process's own, never closed


def _exit_now(code: int) -> None:
    """End the process without CPython's finalization: the Temporal client's runtime threads
    can abort it (temporalio/sdk-python#300), which would turn any exit code into 134."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
