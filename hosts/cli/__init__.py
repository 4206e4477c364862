"""The ``pi-recipes`` command line.

- ``pi-recipes run RECIPE [PROMPT]``: run an agent with terminal dialogs, or durably without a
  terminal (``--no-interactive``, or when stdin is not a terminal).
- ``pi-recipes graph validate|run FILE``: workflows (``.iter``) of recipe agents and humans.
- ``pi-recipes runs list|show|pending|questions|answer|resume|retry|recover|cancel|expire``:
  stored runs, from any process.
- ``pi-recipes audit export [--since T] [--until T] [--format jsonl|csv]``: every interaction
  across runs, oldest asked first, streamed to stdout.
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

import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, cast

from hosts.cli._parser import COMMAND_ENTRY_POINTS, OWN_COMMANDS, build_parser

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

__all__ = ["COMMAND_ENTRY_POINTS", "build_parser", "main"]


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
    words = list(sys.argv[1:] if argv is None else argv)
    own = next((w for w in words if not w.startswith("-")), None) in OWN_COMMANDS
    parser = build_parser(plugged=not own and words != ["--version"])
    if "_ARGCOMPLETE" in os.environ:  # a shell asks for completions: answer, then exit
        from argcomplete import autocomplete

        autocomplete(parser)
    args = parser.parse_args(argv)
    if args.log_level != "warning":
        _log_at(args.log_level)
    host_command: EntryPoint | None = getattr(args, "host_command", None)
    if args.command == "completion":
        from argcomplete.shell_integration import shellcode

        print(shellcode(["pi-recipes"], shell=args.shell), end="")
        return 0
    if host_command is not None:
        code = _run_host(host_command, args.host_args)
    else:
        from hosts.cli._errors import run_reporting

        code = run_reporting(args)
    if argv is None and "temporalio.bridge" in sys.modules:
        _exit_now(code)
    return code


def _log_at(level: str) -> None:
    """Log at ``level`` (``--log-level``) on stderr, whatever the command or host configures
    after."""
    import logging

    logging.basicConfig(stream=sys.stderr, format="pi-recipes: %(levelname)s %(name)s: %(message)s")
    logging.getLogger().setLevel(level.upper())


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
