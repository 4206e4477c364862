"""The context a tool receives: how the agent runs, who can answer, and whether to stop.

:class:`ToolContext` satisfies ``interactions.ToolContextLike``, so a tool passes it straight on:
``await ask_user_question(..., ctx=ctx, env=ctx.env)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from interactions import DialogUI, Mode

__all__ = ["AbortSignal", "ToolContext"]


class AbortSignal:
    """The cancellation of one run of the agent loop (a ``prompt()`` or a ``resume()``).

    The loop cancels running tools itself; a tool reads :attr:`aborted` or awaits :meth:`wait`
    only to clean up or to stop work it shielded from cancellation.
    """

    def __init__(self) -> None:
        self._aborted = False
        self._reason: str | None = None
        self._event: anyio.Event | None = None  # made on the first wait(), inside a loop

    @property
    def aborted(self) -> bool:
        """Whether the run was aborted."""
        return self._aborted

    @property
    def reason(self) -> str | None:
        """Why it was aborted (``None`` while it was not)."""
        return self._reason

    async def wait(self) -> None:
        """Return once the run is aborted (at once if it already was)."""
        if self._aborted:
            return
        if self._event is None:
            self._event = anyio.Event()
        await self._event.wait()

    def fire(self, reason: str) -> None:
        """Mark the run aborted (the first reason is kept). Call from the event loop's thread."""
        if not self._aborted:
            self._aborted = True
            self._reason = reason
            if self._event is not None:
                self._event.set()


@dataclass(frozen=True)
class ToolContext:
    """What one tool call knows about its run. Built by the agent loop; read-only.

    ``mode`` is how the agent runs (``tui`` a terminal, ``rpc`` a JSON-lines client, ``json`` /
    ``print`` headless); ``ui`` is the dialog surface or ``None``; ``env`` is the environment
    snapshot the session was created with (pass it to the ask helpers so a test or a host
    decides the flags, not the process). ``abort`` is the turn's cancellation.
    """

    mode: Mode
    ui: DialogUI | None
    env: Mapping[str, str]
    cwd: Path
    run_id: str
    session_id: str
    agent: str
    tool_call_id: str
    abort: AbortSignal = field(repr=False)

    @property
    def has_ui(self) -> bool:
        """Whether a human can answer a dialog now (a UI is plugged in)."""
        return self.ui is not None

    @property
    def aborted(self) -> bool:
        """Shortcut for ``abort.aborted``."""
        return self.abort.aborted
