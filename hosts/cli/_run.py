"""``pi-recipes run RECIPE [PROMPT]``: run a recipe's agent in the terminal, or durably.

On a terminal, tools' questions are dialogs (arrow-key select, checkboxes, text, an editor);
on an engine (``--engine``) the run is always durable, since its tools run on the workers;
the assistant's text streams as it arrives, tool calls show a spinner while they run, and a
summary closes the run. Without a terminal (or with ``--no-interactive``) the run is durable:
it pauses at the first interrupt into the store, prints how to answer and resume, and exits 0.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from hosts._command import POLICY_ENV
from interactions import AUTO_APPROVE_ENV, UsageError

if TYPE_CHECKING:
    from hosts.cli._output import Console
    from interactions.store import Store

__all__ = ["run_command", "run_durably", "run_env"]


def run_env(args: argparse.Namespace, env: Mapping[str, str]) -> dict[str, str]:
    """The environment the run's tools see: the process's, plus the run's own flags. An
    approval policy (``--policy``, else ``PI_RECIPES_POLICY``) is read and checked here, before
    anything starts (a bad one is a usage error listing its problems), and named by its
    absolute path."""
    out = dict(env)
    if args.auto_approve:
        out[AUTO_APPROVE_ENV] = "1"
    named = getattr(args, "policy", None) or out.get(POLICY_ENV)
    if named:
        from recipes.policy import load_policy

        policy = load_policy(Path(named))
        out[POLICY_ENV] = str(policy.path.resolve())
    return out


async def run_command(args: argparse.Namespace) -> int:
    """``pi-recipes run``: terminal dialogs on a terminal, else a durable run."""
    from hosts.cli._output import console
    from hosts.cli._store import engine_of, location_of
    from interactions.store import open_store

    out = console()
    env = dict(os.environ)
    _choose_recipe(args)
    run_env(args, env)  # a bad policy is refused before anything opens
    engine = engine_of(args, env)
    if not engine and not args.no_interactive and not args.json and stdin_is_terminal():
        from hosts.cli._terminal_run import run_in_terminal  # only a terminal run needs dialogs

        return await run_in_terminal(args, env)
    async with await open_store(location_of(args, env)) as store:
        return await run_durably(args, store, out, env)


def _choose_recipe(args: argparse.Namespace) -> None:
    """``run --demo [PROMPT]`` runs the demo recipe that ships in the package; ``run`` without
    ``--demo`` needs a RECIPE."""
    from hosts.cli._parser import DEMO_PROMPT, DEMO_RECIPE

    if args.demo:
        if args.prompt is not None:
            raise UsageError("--demo runs the demo recipe: give a PROMPT only, not a RECIPE")
        args.recipe, args.prompt = DEMO_RECIPE, args.recipe or DEMO_PROMPT
    elif args.recipe is None:
        raise UsageError(
            "give a RECIPE (a recipe file, path.py[:function], or module:function) and a "
            "PROMPT, or try the demo: pi-recipes run --demo"
        )


async def run_durably(
    args: argparse.Namespace, store: Store, console: Console, env: Mapping[str, str]
) -> int:
    """Start a durable run; print its outcome, or how to answer what it waits for."""
    from hosts.cli._errors import DRIVEN_RUN
    from hosts.cli._output import print_json, print_result, result_json
    from hosts.cli._store import where_of
    from recipes.runs import new_run_id, runner_for

    if not args.prompt:
        raise UsageError("give a PROMPT: pi-recipes run RECIPE 'what to do'")
    runner = runner_for(store, env=run_env(args, env), host="cli", cwd=Path.cwd())
    run_id = new_run_id()  # known before it starts: a signal names it
    setattr(args, DRIVEN_RUN, run_id)
    result = await runner.start(
        args.recipe, args.prompt, agent=args.agent, model=args.model, run_id=run_id
    )
    if args.json:
        print_json(result_json(result, where_of(args)))
    else:
        print_result(console, result, where_of(args))
    return 0 if result.status.value in ("finished", "paused_waiting_human") else 1


def stdin_is_terminal() -> bool:
    return sys.stdin is not None and sys.stdin.isatty() and sys.stdout.isatty()
