"""``pi-recipes graph …``: validate a workflow, draw it, or run it — with terminal dialogs on a
terminal, durably (pausing into the store) otherwise, exactly as ``run`` does. The engine's code
is in ``hosts.cli._graph_commands``; this module brings it the store, the terminal and the
printing."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from hosts.cli._errors import DRIVEN_RUN
from hosts.cli._graph_commands import diagnostics_of, draw_command, run_graph, validate_command
from hosts.cli._output import (
    Console,
    console,
    print_json,
    print_result,
    program,
    result_json,
    store_flag,
)
from hosts.cli._run import run_env, stdin_is_terminal
from hosts.cli._store import engine_of, location_of
from interactions import UsageError
from interactions.store import open_store
from recipes.runs import Surface, new_run_id

__all__ = ["graph_command"]


class _Questions:
    """Prints each async question a graph run posts, with the command that answers it from
    another terminal (the run goes on meanwhile)."""

    def __init__(self, out: Console, store: str | None, run_id: str) -> None:
        self.out = out
        self.store = store_flag(store)
        self.run_id = run_id

    def __call__(self, event: Any) -> None:
        value = getattr(event, "value", None) or {}
        if getattr(event, "name", None) != "human_input_requested" or not value.get("async"):
            return
        iid, node = str(value["interaction_id"]), str(value.get("node_id") or "")
        question = (value.get("questions") or {}).get("ask_user_response", "")
        self.out.print(f"? {node} asks ({iid}): {question}", markup=False)
        self.out.print(
            f"  answer from anywhere: {program()} runs answer {self.run_id} {iid} "
            f'"..."{self.store}',
            markup=False,
        )
        sys.stdout.flush()  # a script reading a pipe sees the question as it is posted


class _Progress(_Questions):
    """Prints a graph run's node events as they happen (text from models literally)."""

    def __call__(self, event: Any) -> None:
        super().__call__(event)
        name = getattr(event, "name", None)
        value = getattr(event, "value", None) or {}
        if name == "node_started":
            self.out.print(f"▸ {value['node_id']} ({value['kind']})", markup=False)
        elif name == "node_finished":
            self.out.print(f"✓ {value['node_id']}", markup=False)
        elif name == "node_failed":
            self.out.print(f"✗ {value['node_id']}: {value['error']}", markup=False)


async def graph_command(args: argparse.Namespace) -> int:
    """Run ``pi-recipes graph validate|draw|run``; return the exit code."""
    if args.graph_command == "validate":
        return validate_command(args, sys.stdout)
    if args.graph_command == "draw":
        return draw_command(args, sys.stdout)
    out = console()
    run_id = new_run_id()  # known before it starts: a signal names it, its questions too
    questions = None if args.json else _Questions(out, args.store_given, run_id)
    surface = Surface(mode="print", on_event=questions)
    if not args.no_interactive and not args.json and stdin_is_terminal():
        from hosts.cli.terminal import TerminalDialogUI  # only a terminal run needs dialogs

        progress = _Progress(out, args.store_given, run_id)
        surface = Surface(ui=TerminalDialogUI(), on_event=progress, mode="tui")
    if engine_of(args):
        raise UsageError(
            "graph runs run on a store (SQLite, PostgreSQL), not on an engine; give --store "
            "(or unset PI_RECIPES_ENGINE)"
        )
    run_env(args, os.environ)  # a bad policy is refused before anything opens
    for diagnostic in diagnostics_of(args.file):  # errors: the run refuses to start below
        if not diagnostic.is_error:
            print(diagnostic.format(), file=sys.stderr)
    async with await open_store(location_of(args)) as store:
        setattr(args, DRIVEN_RUN, run_id)
        result = await run_graph(args, store, run_env(args, dict(os.environ)), surface,
                                 notify=lambda line: print(line, file=sys.stderr) if args.json
                                 else out.print(line, markup=False),
                                 run_id=run_id)  # fmt: skip
    if args.json:
        print_json(result_json(result, args.store_given))
    else:
        print_result(out, result, args.store_given)
    if result.status.value == "cancelled":
        return 130
    return 0 if result.status.value in ("finished", "paused_waiting_human") else 1
