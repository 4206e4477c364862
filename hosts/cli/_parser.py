"""The ``pi-recipes`` command line's parser: every command's arguments and help.

Building it imports argparse and the standard library only (``--help``, ``--version`` and shell
completion load nothing else); the commands import what they use when they run. The few names
it shares with the packages (an environment variable, the run statuses) are spelled here, and a
test holds them equal to the packages' own.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from hosts._command import policy_argument

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

__all__ = [
    "AUDIT_FORMATS",
    "AUTO_APPROVE_ENV",
    "COMMAND_ENTRY_POINTS",
    "DEFAULT_STORE",
    "DEFAULT_USERS",
    "DEMO_PROMPT",
    "DEMO_RECIPE",
    "LOG_LEVELS",
    "LOG_LEVEL_ENV",
    "OWN_COMMANDS",
    "RUN_STATUSES",
    "SHELLS",
    "STORE_ENV",
    "build_parser",
]

DEFAULT_STORE = ".pi-recipes/state.db"
DEFAULT_USERS = ".pi-recipes/users.toml"
"""Where `pi-recipes users add` keeps the users file unless told otherwise."""

COMMAND_ENTRY_POINTS = "pi_recipes.commands"
"""The entry point group of the subcommands hosts plug in: the name is the subcommand
(``pi-recipes NAME ARGS...``), the object the host's ``main(argv: list[str]) -> int``, given
the arguments after the subcommand (it parses them, ``--help`` included) and returning the exit
code. A name the command line has itself (``run``, ``graph``, ``runs``, ``worker``) is not
replaced."""

STORE_ENV = "PI_RECIPES_STORE"
"""``hosts._store.STORE_ENV``: the store when no ``--store`` or ``--engine`` is given."""

LOG_LEVEL_ENV = "PI_RECIPES_LOG_LEVEL"
"""The log level when no ``--log-level`` is given."""

LOG_LEVELS = ("debug", "info", "warning", "error")

AUTO_APPROVE_ENV = "PI_ASK_USER_AUTO_APPROVE"
"""``interactions.AUTO_APPROVE_ENV``, which ``run --auto-approve`` sets for its run."""

RUN_STATUSES = (
    "running",
    "paused_waiting_human",
    "finished",
    "failed",
    "failed_resumable",
    "cancelled",
)
"""``interactions.store.RunStatus``'s values: what ``runs list --status`` takes."""

DEMO_RECIPE = "recipes.demo:recipe"
"""What ``run --demo`` runs: the demo recipe that ships in the package."""

DEMO_PROMPT = "Release v1.4.0"

OWN_COMMANDS = (
    "run", "graph", "runs", "rules", "audit", "users", "worker", "new", "completion",
)  # fmt: skip
"""The command line's own commands (a host's command of the same name is not taken)."""

SHELLS = ("bash", "zsh", "fish")

_HELP = {
    "rpc": "serve the JSON-lines RPC protocol on stdin/stdout",
    "mcp": "serve a recipe's tools over MCP",
    "slack": "serve a recipe as a Slack app",
    "email": "mail questions to their approvers, answered from the mails' links",
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


def _log_level_default() -> str:
    import os

    given = os.environ.get(LOG_LEVEL_ENV, "").strip().lower()
    return given if given in LOG_LEVELS else "warning"


def _plugged_commands() -> dict[str, EntryPoint]:
    """The commands installed packages plug in, by name (the first found wins), read from their
    metadata: nothing is imported (as :func:`interactions.plugins.installed_plugins` reads
    them, without loading the package that function lives in)."""
    from importlib.metadata import entry_points

    found: dict[str, EntryPoint] = {}
    for entry in entry_points(group=COMMAND_ENTRY_POINTS):
        found.setdefault(entry.name, entry)
    return found


def build_parser(*, plugged: bool = True) -> argparse.ArgumentParser:
    """The whole command line (argparse only: building it imports nothing else). With
    ``plugged`` false, the commands installed packages plug in are left out (reading them from
    the packages' metadata is most of what building costs): for a command line that names one
    of the command line's own commands."""
    parser = argparse.ArgumentParser(
        prog="pi-recipes", description="Run recipe agents whose tools ask a human."
    )
    parser.add_argument("--version", action=_Version, nargs=0, help="print the version and exit")
    parser.add_argument(
        "--log-level",
        choices=LOG_LEVELS,
        default=_log_level_default(),
        help=f"what is logged on stderr (default: ${LOG_LEVEL_ENV}, else warning)",
    )
    store = argparse.ArgumentParser(add_help=False)
    store.add_argument(
        "--store",
        dest="store_given",
        metavar="PATH",
        help=f"a SQLite file (default: ${STORE_ENV}, else {DEFAULT_STORE}) or a postgresql:// URL",
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
    for name, entry in sorted(_plugged_commands().items() if plugged else ()):
        if name in OWN_COMMANDS:
            continue
        host = commands.add_parser(
            name,
            help=_HELP.get(name) or f"(from {entry.dist.name if entry.dist else entry.module})",
            add_help=False,
            prefix_chars="\0",  # every argument goes to the host's own parser
        )
        host.add_argument("host_args", nargs=argparse.REMAINDER)
        host.set_defaults(host_command=entry)
    graph = commands.add_parser("graph", help="workflows: validate, draw or run a .iter file")
    add_graph_commands(graph, parents=[store])
    runs = commands.add_parser("runs", help="stored runs: list, answer, resume...")
    add_runs_commands(runs, parents=[store])
    rules = commands.add_parser(
        "rules", help="remembered approval decisions ('approve always'): list, revoke"
    )
    add_rules_commands(rules, parents=[store])
    audit = commands.add_parser("audit", help="the audit trail: export every interaction")
    add_audit_commands(audit, parents=[store])
    users = commands.add_parser("users", help="the users file: people, groups, sign-in tokens")
    users_sub = users.add_subparsers(dest="users_command", required=True, metavar="COMMAND")
    add = users_sub.add_parser(
        "add", help="add a person (or give them a new token): prints their token once"
    )
    add.add_argument("name", help="their name, recorded with each answer they give")
    add.add_argument("--group", action="append", default=[], dest="groups", metavar="GROUP",
                     help="a group they belong to (repeatable)")  # fmt: skip
    add.add_argument("--slack", action="append", default=[], metavar="USER_ID",
                     help="a Slack user id that is this person (repeatable)")  # fmt: skip
    add.add_argument("--email", help="their address")
    add.add_argument("--file", type=Path, default=Path(DEFAULT_USERS),
                     help=f"the users file (default: {DEFAULT_USERS})")  # fmt: skip
    worker = commands.add_parser("worker", help="run a Temporal worker of a recipe's runs")
    add_worker_command(worker)
    new = commands.add_parser(
        "new",
        help="start a project: a recipe that asks, its scripted model, a test and a README",
    )
    new.add_argument("name", help="the project's folder (created; it must not hold files)")
    completion = commands.add_parser(
        "completion",
        help="print the shell completion script (bash, zsh, fish)",
        description="Print the script that completes pi-recipes' commands and options in your "
        "shell. bash: add 'eval \"$(pi-recipes completion bash)\"' to ~/.bashrc; zsh: the same "
        "with zsh in ~/.zshrc; fish: pi-recipes completion fish > "
        "~/.config/fish/completions/pi-recipes.fish",
    )
    completion.add_argument("shell", choices=SHELLS)
    return parser


def add_run_command(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "recipe",
        nargs="?",
        help="a recipe file (path.py[:function]) or module:function (with --demo: the prompt)",
    )
    parser.add_argument("prompt", nargs="?", help="what to ask the agent")
    parser.add_argument(
        "--demo",
        action="store_true",
        help=f"run the demo recipe that ships with pi-recipes (prompt: {DEMO_PROMPT!r} unless "
        "given)",
    )
    parser.add_argument("--agent", help="which of the recipe's agents (default: its default)")
    parser.add_argument("--model", help="provider:name, e.g. openai:gpt-4.1-mini")
    parser.add_argument(
        "--auto-approve", action="store_true", help=f"set {AUTO_APPROVE_ENV} for this run only"
    )
    parser.add_argument(
        "--no-interactive",
        action="store_true",
        help="never show a dialog: pause into the store and print how to answer",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the outcome as JSON (run id, status, open questions with the commands that "
        "answer them); implies --no-interactive",
    )
    policy_argument(parser)


def _limit(text: str) -> int:
    """``--limit``: a whole number from 1 to 10,000 (argparse says so in one line)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 1 <= value <= 10_000:
        raise argparse.ArgumentTypeError(f"give 1 to 10000, not {text}")
    return value


def add_runs_commands(
    parser: argparse.ArgumentParser, parents: list[argparse.ArgumentParser]
) -> None:
    """Add the ``runs`` subcommands; each also takes the options of ``parents`` (``--store``)."""
    common = argparse.ArgumentParser(add_help=False, parents=parents)
    common.add_argument("--json", action="store_true", help="machine-readable output")
    sub = parser.add_subparsers(dest="runs_command", required=True, metavar="COMMAND")

    def command(name: str, help: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=help, parents=[common])

    def users(parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--users", type=Path, metavar="FILE", help="the users file: people, their groups, "
            f"whether --as may name another (default: $PI_RECIPES_USERS, else {DEFAULT_USERS} when "
            "it exists)",
        )  # fmt: skip

    listing = command("list", "list runs, newest first")
    listing.add_argument("--status", choices=RUN_STATUSES)
    listing.add_argument("--limit", type=_limit, default=50, help="at most this many (1-10000)")
    show = command("show", "one run: status, interactions, last text")
    show.add_argument("run")
    pending = command("pending", "questions waiting for an answer")
    pending.add_argument("run", nargs="?")
    pending.add_argument(
        "--mine", action="store_true", help="only what you may answer (the operator cli:<os "
        "user>, in the users file's groups): first those whose approvers name you or your "
        "groups, then those open to anyone; newest first within each",
    )  # fmt: skip
    users(pending)
    questions = command("questions", "a run's pending async questions (asked while it works)")
    questions.add_argument("run")
    answer = command("answer", "answer one interaction (first answer wins)")
    answer.add_argument("run")
    answer.add_argument("interaction")
    answer.add_argument(
        "payload",
        nargs="?",
        help='JSON, e.g. \'{"answer": "beta"}\' or \'{"approved": true}\'; '
        "plain text answers a question",
    )
    answer.add_argument("--cancel", action="store_true", help="decline instead of answering")
    answer.add_argument(
        "--as", "--by", dest="answered_by", metavar="NAME", help="record NAME as who answers, "
        "in NAME's groups (default: cli:<os user>); refused unless the users file, if any, "
        "says [cli] impersonate = true",
    )  # fmt: skip
    users(answer)
    answer.add_argument("--resume", action="store_true", help="continue the run if complete")
    resume = command("resume", "resume a paused run")
    resume.add_argument("run")
    resume.add_argument("--entries", type=Path, help="JSON file: [{interruptId, status, payload}]")
    resume.add_argument(
        "--as", "--by", dest="answered_by", metavar="NAME",
        help="with --entries: record NAME as who answers (as for 'runs answer --as')",
    )  # fmt: skip
    users(resume)
    retry = command("retry", "continue a run that failed on a passing model failure")
    retry.add_argument("run")
    recover = command("recover", "mark runs whose process died mid-run as retryable")
    recover.add_argument(
        "--older-than",
        type=float,
        required=True,
        metavar="SECONDS",
        help="runs with no progress for this long count as stranded",
    )
    cancel = command("cancel", "cancel a run")
    cancel.add_argument("run")
    command("expire", "settle interactions past their expiry")


def add_rules_commands(
    parser: argparse.ArgumentParser, parents: list[argparse.ArgumentParser]
) -> None:
    """Add the ``rules`` subcommands; each also takes the options of ``parents`` (``--store``)."""
    common = argparse.ArgumentParser(add_help=False, parents=parents)
    common.add_argument("--json", action="store_true", help="machine-readable output")
    sub = parser.add_subparsers(dest="rules_command", required=True, metavar="COMMAND")
    listing = sub.add_parser(
        "list", help="decisions approvers asked to remember, newest first", parents=[common]
    )
    listing.add_argument("--run", help="only those made in this run")
    listing.add_argument("--thread", help="only those of this thread (conversation)")
    listing.add_argument("--all", action="store_true", help="revoked ones too")
    listing.add_argument("--limit", type=_limit, default=50, help="at most this many (1-10000)")
    revoke = sub.add_parser(
        "revoke", help="end a remembered decision: the tool's next call asks again",
        parents=[common],
    )  # fmt: skip
    revoke.add_argument("decision", help="its id (dec-..., from 'rules list')")
    revoke.add_argument("--by", dest="revoked_by", help="who revokes it (default: cli:<user>)")


AUDIT_FORMATS = ("jsonl", "csv")


def add_audit_commands(
    parser: argparse.ArgumentParser, parents: list[argparse.ArgumentParser]
) -> None:
    """Add ``audit export`` (``parents`` give ``--store``)."""
    sub = parser.add_subparsers(dest="audit_command", required=True, metavar="COMMAND")
    export = sub.add_parser(
        "export",
        parents=parents,
        help="every interaction across runs, oldest asked first, on stdout",
        description="Write every interaction of the store to stdout, oldest asked first: its "
        "run, the question and options, who could answer, when it was asked, expires and was "
        "answered, the answer, who gave it and through which host, the votes, and the run's "
        "decisions on tool calls. Streams: any number of interactions in constant memory.",
    )
    when = "an ISO 8601 date or time, e.g. 2026-12-01 or 2026-12-01T09:30:00Z (no offset: UTC)"
    export.add_argument("--since", metavar="T", help=f"only those asked at or after T: {when}")
    export.add_argument("--until", metavar="T", help="only those asked before T")
    export.add_argument(
        "--format", choices=AUDIT_FORMATS, default="jsonl",
        help="JSON lines (default) or CSV with a header row",
    )  # fmt: skip


def add_worker_command(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("recipe", help="the recipe whose runs it runs (path.py[:function])")
    policy_argument(parser)
    parser.add_argument(
        "--temporal", required=True, metavar="HOST:PORT", help="the Temporal frontend"
    )
    parser.add_argument("--namespace", help="the namespace (default: default)")
    parser.add_argument("--task-queue", help="the task queue (default: pi-recipes)")
    parser.add_argument(
        "--tool-timeout", type=float, metavar="SECONDS", help="bound each tool call"
    )
    parser.add_argument(
        "--heartbeat",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="a lost worker's activity moves to another worker after this long (default 30)",
    )
    parser.add_argument(
        "--max-cached-workflows",
        type=int,
        default=100,
        metavar="N",
        help="runs kept in memory between their steps (default 100; paused runs replay)",
    )
    parser.add_argument(
        "--history-limit",
        type=int,
        metavar="BYTES",
        help="the server's limit.historySize.error, if not the default 52428800: a run stops, "
        "saying why, before its history reaches it",
    )


def _retries(text: str) -> int:
    try:
        count = int(text)
    except ValueError:
        count = 0
    if not 1 <= count <= 1000:
        raise argparse.ArgumentTypeError(f"expected 1 to 1000 retries, got {text!r}")
    return count


def add_graph_commands(
    parser: argparse.ArgumentParser, parents: list[argparse.ArgumentParser]
) -> None:
    """Add ``graph validate``, ``graph draw`` and ``graph run`` (``parents`` give
    ``--store``)."""
    sub = parser.add_subparsers(dest="graph_command", required=True, metavar="COMMAND")
    check = sub.add_parser("validate", help="check a .iter workflow; exit 1 on errors")
    check.add_argument("file", type=Path)
    check.add_argument("--json", action="store_true", help="machine-readable output")
    draw = sub.add_parser(
        "draw", help="draw a .iter workflow as SVG (or Mermaid text); needs the draw extra"
    )
    draw.add_argument("file", type=Path)
    draw.add_argument("-o", "--output", type=Path, metavar="OUT",
                      help="write the picture to OUT (default: standard output)")  # fmt: skip
    draw.add_argument("--format", choices=("svg", "mermaid"), default="svg",
                      help="svg (the default) or mermaid (a flowchart, for docs)")  # fmt: skip
    run = sub.add_parser("run", help="run a .iter workflow", parents=parents)
    run.add_argument("file", type=Path)
    run.add_argument("--var", action="append", default=[], metavar="NAME=VALUE",
                     help="a workflow variable (repeatable)")  # fmt: skip
    run.add_argument(
        "--auto-approve",
        action="store_true",
        help="resolve every ask at once (approvals approved, questions declined)",
    )
    run.add_argument(
        "--no-interactive",
        action="store_true",
        help="never show a dialog: pause into the store and print how to answer (an "
        "await_answers gate still waits here, up to its timeout, for answers given elsewhere)",
    )
    run.add_argument(
        "--json", action="store_true",
        help="print the outcome as JSON (run id, status, open questions with the commands "
        "that answer them); implies --no-interactive",
    )  # fmt: skip
    policy_argument(run)
    run.add_argument(
        "--auto-resume", type=_retries, metavar="N",
        help="retry the run on its own, at most N times, when a model's usage window or "
        "outage passes (waiting as long as the provider says, with backoff)",
    )  # fmt: skip
