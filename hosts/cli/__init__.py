"""The ``pi-recipes`` command line.

- ``pi-recipes run RECIPE [PROMPT]``: run an agent with terminal dialogs, or durably without a
  terminal (``--no-interactive``, or when stdin is not a terminal).
- ``pi-recipes rpc RECIPE``: the JSON-lines RPC protocol on stdin/stdout.
- ``pi-recipes mcp RECIPE [--http HOST:PORT]``: the recipe's tools over MCP.
- ``pi-recipes slack RECIPE``: a Slack app (needs the ``slack`` extra).
- ``pi-recipes serve RECIPE``: the web host (page, WebSocket, REST, AG-UI; ``hosts.web``).
- ``pi-recipes graph validate|run FILE``: workflows (``.iter``) of recipe agents and humans.
- ``pi-recipes runs list|show|pending|questions|answer|resume|retry|recover|cancel|expire``:
  stored runs, from any process.
- ``pi-recipes worker RECIPE --temporal HOST:PORT``: a Temporal worker of the recipe's runs;
  ``--engine temporal://HOST:PORT/NS`` (or ``PI_RECIPES_ENGINE``) on ``run`` and ``runs``
  then starts, answers and resumes runs there. Refusals exit non-zero with the reason (see
  :data:`interactions.errors.ERROR_CODES`): 3 conflict, 4 unknown id, 5 expired, 6 invalid
  payload, 2 usage.

Each command imports what it uses when it runs: answering a question loads neither the terminal
dialogs nor the model providers.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

__all__ = ["build_parser", "main"]

DEFAULT_STORE = ".pi-recipes/state.db"


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
    rpc = commands.add_parser(
        "rpc",
        help="serve the JSON-lines RPC protocol on stdin/stdout",
        add_help=False,
        prefix_chars="\0",  # every argument goes to the RPC host's own parser
    )
    rpc.add_argument("rpc_args", nargs=argparse.REMAINDER)
    mcp = commands.add_parser(
        "mcp", help="serve a recipe's tools over MCP", add_help=False, prefix_chars="\0"
    )
    mcp.add_argument("mcp_args", nargs=argparse.REMAINDER)  # parsed by the MCP host
    slack = commands.add_parser(
        "slack", help="serve a recipe as a Slack app", add_help=False, prefix_chars="\0"
    )
    slack.add_argument("slack_args", nargs=argparse.REMAINDER)  # the Slack host's own parser
    serve = commands.add_parser(
        "serve", help="serve the web host (page, WebSocket, REST, AG-UI)", add_help=False,
        prefix_chars="\0",
    )  # fmt: skip
    serve.add_argument("serve_args", nargs=argparse.REMAINDER)  # the web host's own parser
    graph = commands.add_parser("graph", help="workflows: validate or run a .iter file")
    add_graph_commands(graph, parents=[store])
    runs = commands.add_parser("runs", help="stored runs: list, answer, resume...")
    add_runs_commands(runs, parents=[store])
    worker = commands.add_parser("worker", help="run a Temporal worker of a recipe's runs")
    add_worker_command(worker)
    return parser


_HOSTS = {"rpc": ("rpc", None), "mcp": ("mcp", "mcp"), "slack": ("slack", "slack"),
          "serve": ("web", "web")}  # fmt: skip
"""The hosts the command line starts, each with its own parser: command -> (the package in
``hosts``, the extra it needs)."""


def _run_host(name: str, argv: list[str]) -> int:
    """Hand ``argv`` to the host ``name``; without its extra, say which to install (exit 2)."""
    package, extra = _HOSTS[name]
    try:
        host = importlib.import_module(f"hosts.{package}")
    except ModuleNotFoundError as missing:
        if extra is None or (missing.name or "").startswith("hosts."):
            raise
        needed = (missing.name or "?").partition(".")[0]
        print(
            f"pi-recipes: usage: pi-recipes {name} needs {needed}: "
            f"pip install 'pi-recipes[{extra}]'",
            file=sys.stderr,
        )
        return 2
    code: int = host.main(argv)
    return code


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    _open_closed_streams()
    args = build_parser().parse_args(argv)
    if args.command in _HOSTS:
        code = _run_host(args.command, getattr(args, f"{args.command}_args"))
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
