"""``pi-recipes run`` on a terminal: the agent in-process, its questions as terminal dialogs.

The assistant's text streams as it arrives, tool calls show a spinner while they run (stopped
while a dialog is on screen), and a summary closes the run. Ctrl-C in a dialog aborts the run.
What the model and the tools say is printed literally: no markup, no emoji codes, and control
characters shown as ``^[`` (as the dialogs show them), never sent to the terminal as commands.
"""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

from rich.console import Console
from rich.markup import escape
from rich.status import Status
from rich.text import Text

from hosts.cli._output import literal
from hosts.cli._run import run_env
from hosts.cli.terminal import TerminalDialogUI
from interactions import InteractionAborted
from interactions.dialogs import around
from recipes import create_agent_session, load_recipe, resolve_model
from recipes.events import AgentEnd, AgentEvent, MessageUpdate, ToolExecutionEnd, ToolExecutionStart
from recipes.messages import stop_warning
from recipes.models import TextDelta

__all__ = ["run_in_terminal"]


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

    @asynccontextmanager
    async def paused(self) -> AsyncIterator[None]:
        """Stops the spinner while a dialog is on screen."""
        self.stop_spinner()
        try:
            yield
        finally:
            self.start_spinner()

    def stop_spinner(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def start_spinner(self) -> None:
        if self._running and self._status is None:
            self._status = self.console.status(Text(f"{literal(self._running)}…"))
            self._status.start()

    def __call__(self, event: AgentEvent) -> None:
        if isinstance(event, MessageUpdate) and isinstance(event.delta, TextDelta):
            self.console.print(literal(event.delta.delta), end="", markup=False, highlight=False)
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
            self.console.print(f"{mark} {escape(literal(event.tool_name))}", highlight=False)
        elif isinstance(event, AgentEnd):
            self.stop_spinner()
            self._newline()
            self.end = event

    def _newline(self) -> None:
        if not self._at_line_start:
            self.console.print()
            self._at_line_start = True


async def run_in_terminal(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    """Run the agent in-process with terminal dialogs; return the exit code."""
    console = Console(highlight=False, soft_wrap=True, emoji=False)
    recipe = load_recipe(args.recipe)
    run_env_ = run_env(args, env)
    model = resolve_model(recipe, args.agent, args.model, env=run_env_)
    agent = recipe.agent(args.agent)
    renderer = _Renderer(console)
    ui = around(TerminalDialogUI(), renderer.paused)
    session = create_agent_session(
        recipe, agent=agent.name, model=model, mode="tui", ui=ui, env=run_env_
    )
    session.on_event(renderer)
    try:
        prompt = args.prompt or await TerminalDialogUI().input("What should the agent do?")
    except InteractionAborted:
        console.print("Aborted.")
        return 130
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
    console.print(f"[dim]{escape(literal(summary))}[/]", highlight=False)
    warning = stop_warning(session.messages) if status == "idle" else None
    if warning:
        console.print(f"[yellow]Warning: {escape(literal(warning))}[/]", highlight=False)
    return 0 if status == "idle" else 130 if status == "aborted" else 1
