"""The context a tool receives: how the agent runs, who can answer, and whether to stop.

:class:`ToolContext` satisfies ``interactions.asks.ToolContextLike``, so a tool passes it straight
on: ``await ask_user_question(..., tool_call_id=tool_call_id, ctx=ctx)``; the ask reads the
session's environment, UI and host from it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from interactions.asks import AskLedger
from interactions.channels import Channel
from interactions.dialogs import DialogUI
from interactions.store import utc_now

if TYPE_CHECKING:
    from recipes.decisions import DecisionBook
    from recipes.policy import Policy

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

    ``mode`` is how the agent runs, in its host's words (``tui`` a terminal, ``rpc`` a
    JSON-lines client, ``print`` headless...); ``ui`` is the dialog surface or ``None``; ``env``
    is the environment snapshot the session was created with — the ask helpers read their flags
    from it, so the session, not the process, decides. ``can_pause`` says the host pauses the
    run on an interrupt (a durable run); ``interaction_channels`` is the host's own channel
    chain, if any; ``asks`` is this call's ask ledger. ``abort`` is the turn's cancellation.
    ``clock`` is "now" for its asks (their expiry), the session's: the runner's in a durable
    run, else the wall clock. ``decisions`` is where the call's approval gate finds and keeps
    remembered decisions ("approve always") and leaves its audit. ``policy``: the approval
    policy a durable run kept from its start, when the process continuing it names none (else
    the gate reads the one ``env`` names).
    """

    mode: str
    ui: DialogUI | None
    env: Mapping[str, str]
    cwd: Path
    run_id: str
    session_id: str
    agent: str
    tool_call_id: str
    abort: AbortSignal = field(repr=False)
    can_pause: bool = False
    interaction_channels: Sequence[Channel] | None = None
    asks: AskLedger | None = field(default=None, repr=False)
    clock: Callable[[], datetime] = field(default=utc_now, repr=False)
    decisions: DecisionBook | None = field(default=None, repr=False)
    policy: Policy | None = field(default=None, repr=False)

    @property
    def has_ui(self) -> bool:
        """Whether a human can answer a dialog now (a UI is plugged in)."""
        return self.ui is not None

    @property
    def aborted(self) -> bool:
        """Shortcut for ``abort.aborted``."""
        return self.abort.aborted
