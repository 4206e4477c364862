"""``pi-recipes run RECIPE [PROMPT]``: run a recipe's agent in the terminal, or durably.

On a terminal, tools' questions are dialogs (arrow-key select, checkboxes, text, an editor);
the assistant's text streams as it arrives, tool calls show a spinner while they run, and a
summary closes the run. Without a terminal (or with ``--no-interactive``) the run is durable:
it pauses at the first interrupt into the store, prints how to answer and resume, and exits 0.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.status import Status

from hosts.cli._output import console, print_result
from hosts.cli._store import open_store
from interactions import AUTO_APPROVE_ENV, UsageError
from interactions.dialogs import DialogUI
from interactions.store import Store
from recipes import create_agent_session, load_recipe, resolve_model
from recipes.events import AgentEnd, AgentEvent, MessageUpdate, ToolExecutionEnd, ToolExecutionStart
from recipes.models import TextDelta
from recipes.runs import Runner

if TYPE_CHECKING:
    from hosts.terminal import TerminalDialogUI

__all__ = ["add_run_command", "run_command", "run_durably", "run_in_terminal"]


def add_run_command(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("recipe", help="a recipe file (path.py[:function]) or module:function")
    parser.add_argument("prompt", nargs="?", help="what to ask the agent")
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


def run_env(args: argparse.Namespace, env: Mapping[str, str]) -> dict[str, str]:
    """The environment the run's tools see: the process's, plus the run's own flags."""
    out = dict(env)
    if args.auto_approve:
        out[AUTO_APPROVE_ENV] = "1"
    return out


async def run_command(args: argparse.Namespace) -> int:
    """``pi-recipes run``: terminal dialogs on a terminal, else a durable run."""
    out = console()
    env = dict(os.environ)
    if not args.no_interactive and stdin_is_terminal():
        return await run_in_terminal(args, out, env)
    async with await open_store(args.store_given) as store:
        return await run_durably(args, store, out, env)


async def run_durably(
    args: argparse.Namespace, store: Store, console: Console, env: Mapping[str, str]
) -> int:
    """Start a durable run; print its outcome, or how to answer what it waits for."""
    if not args.prompt:
        raise UsageError("give a PROMPT: pi-recipes run RECIPE 'what to do'")
    runner = Runner(store, env=run_env(args, env), host="cli", cwd=Path.cwd())
    result = await runner.start(args.recipe, args.prompt, agent=args.agent, model=args.model)
    print_result(console, result, args.store_given)
    return 0 if result.status.value in ("finished", "paused_waiting_human") else 1


class _SpinnerAwareUI:
    """A terminal UI that stops the tool spinner while a dialog is on screen."""

    def __init__(self, ui: TerminalDialogUI, renderer: _Renderer) -> None:
        self._ui = ui
        self._renderer = renderer

    async def select(
        self,
        title: str,
        options: Sequence[str],
        *,
        timeout: float | None = None,
        descriptions: Sequence[str | None] | None = None,
    ) -> str | None:
        with self._renderer.paused():
            return await self._ui.select(
                title, options, timeout=timeout, descriptions=descriptions
            )

    async def multi_select(
        self,
        title: str,
        options: Sequence[str],
        *,
        timeout: float | None = None,
        descriptions: Sequence[str | None] | None = None,
    ) -> list[str] | None:
        with self._renderer.paused():
            return await self._ui.multi_select(
                title, options, timeout=timeout, descriptions=descriptions
            )

    async def confirm(
        self, title: str, message: str, *, timeout: float | None = None
    ) -> bool | None:
        with self._renderer.paused():
            return await self._ui.confirm(title, message, timeout=timeout)

    async def input(
        self, title: str, placeholder: str | None = None, *, timeout: float | None = None
    ) -> str | None:
        with self._renderer.paused():
            return await self._ui.input(title, placeholder, timeout=timeout)

    async def editor(
        self, title: str, prefill: str = "", *, timeout: float | None = None
    ) -> str | None:
        with self._renderer.paused():
            return await self._ui.editor(title, prefill, timeout=timeout)


class _Renderer:
    """Streams the session's events to the terminal."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._status: Status | None = None
        self._running: str | None = None
        self._at_line_start = True
        self.tool_calls = 0
        self.failed_calls = 0
        self.end: AgentEnd | None = None

    def paused(self) -> _Pause:
        return _Pause(self)

    def stop_spinner(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def start_spinner(self) -> None:
        if self._running and self._status is None:
            self._status = self.console.status(f"{self._running}…")
            self._status.start()

    def __call__(self, event: AgentEvent) -> None:
        if isinstance(event, MessageUpdate) and isinstance(event.delta, TextDelta):
            self.console.print(event.delta.delta, end="", markup=False, highlight=False)
            self._at_line_start = event.delta.delta.endswith("\n")
        elif isinstance(event, ToolExecutionStart):
            self._newline()
            self._running = event.tool_name
            self.start_spinner()
        elif isinstance(event, ToolExecutionEnd):
            self.stop_spinner()
            self._running = None
            self.tool_calls += 1
            failed = event.result.is_error
            self.failed_calls += failed
            mark = "[red]✗[/]" if failed else "[green]✓[/]"
            self.console.print(f"{mark} {escape(event.tool_name)}", highlight=False)
        elif isinstance(event, AgentEnd):
            self.stop_spinner()
            self._newline()
            self.end = event

    def _newline(self) -> None:
        if not self._at_line_start:
            self.console.print()
            self._at_line_start = True


class _Pause:
    def __init__(self, renderer: _Renderer) -> None:
        self._renderer = renderer

    def __enter__(self) -> None:
        self._renderer.stop_spinner()

    def __exit__(self, *exc: object) -> None:
        self._renderer.start_spinner()


async def run_in_terminal(
    args: argparse.Namespace, console: Console, env: Mapping[str, str]
) -> int:
    """Run the agent in-process with terminal dialogs; return the exit code."""
    from hosts.terminal import TerminalDialogUI  # only a terminal run needs the dialogs

    recipe = load_recipe(args.recipe)
    run_env_ = run_env(args, env)
    model = resolve_model(recipe, args.agent, args.model, env=run_env_)
    agent = recipe.agent(args.agent)
    renderer = _Renderer(console)
    ui: DialogUI = _SpinnerAwareUI(TerminalDialogUI(), renderer)
    session = create_agent_session(
        recipe, agent=agent.name, model=model, mode="tui", ui=ui, env=run_env_
    )
    session.on_event(renderer)
    prompt = args.prompt or await TerminalDialogUI().input("What should the agent do?")
    if not prompt:
        console.print("Nothing to do.")
        return 0
    try:
        await session.prompt(prompt)
    except KeyboardInterrupt:
        session.abort("Ctrl-C")
        console.print("\nAborted.")
        return 130
    status = session.status
    summary = f"{status}: {renderer.tool_calls} tool call(s)"
    if renderer.failed_calls:
        summary += f", {renderer.failed_calls} failed"
    end = renderer.end
    if end is not None and end.error:
        summary += f" — {end.error}"
    console.print(f"[dim]{escape(summary)}[/]", highlight=False)
    return 0 if status == "idle" else 130 if status == "aborted" else 1


def stdin_is_terminal() -> bool:
    return sys.stdin is not None and sys.stdin.isatty() and sys.stdout.isatty()
