"""What the ask helpers need from their caller: a tool context and, maybe, a dialog UI.

These are Protocols so that ``interactions`` never imports ``recipes`` or ``hosts``: any object
with these attributes works (the recipes ``ToolContext``, a host's own context, a test double).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

__all__ = ["DialogUI", "Mode", "MultiSelectUI", "ToolContextLike"]

Mode = str
"""How the agent runs, in the host's own words (``tui``, ``rpc``, ``print``, ``web``...). The
contract never branches on it; hosts and tools may."""


@runtime_checkable
class DialogUI(Protocol):
    """A surface that can show a dialog to a human and wait for the answer.

    Every method returns ``None`` when the human dismissed the dialog or ``timeout`` (seconds)
    passed. A UI reports that the turn was aborted by raising
    :class:`~interactions.InteractionAborted`. The walk also enforces ``timeout`` itself, so a
    UI that ignores it still cannot make a call wait past it.
    """

    async def select(
        self,
        title: str,
        options: Sequence[str],
        *,
        timeout: float | None = None,
        descriptions: Sequence[str | None] | None = None,
    ) -> str | None:
        """Let the human pick one of ``options``; return the picked string.

        ``descriptions`` (one per option, ``None`` where an option has none) is help text to
        show beside the options where the surface has room.
        """
        ...

    async def confirm(
        self, title: str, message: str, *, timeout: float | None = None
    ) -> bool | None:
        """Ask a yes/no question."""
        ...

    async def input(
        self, title: str, placeholder: str | None = None, *, timeout: float | None = None
    ) -> str | None:
        """Ask for one line of free text."""
        ...

    async def editor(
        self, title: str, prefill: str = "", *, timeout: float | None = None
    ) -> str | None:
        """Ask for multi-line text, starting from ``prefill``."""
        ...


@runtime_checkable
class MultiSelectUI(DialogUI, Protocol):
    """A dialog UI that can also show a checkbox list (optional; the walk falls back to select)."""

    async def multi_select(
        self,
        title: str,
        options: Sequence[str],
        *,
        timeout: float | None = None,
        descriptions: Sequence[str | None] | None = None,
    ) -> list[str] | None:
        """Let the human pick any number of ``options``; return the picked strings."""
        ...


class ToolContextLike(Protocol):
    """The slice of a tool context the ask helpers read.

    ``has_ui`` says whether a human can answer a dialog now; ``mode`` is how the agent runs, in
    the host's words; ``ui`` is the dialog surface, or ``None``; ``env`` is the session's
    environment, from which the flags are read (never the process's, behind its back).

    Optional attributes, read when present:

    - ``can_pause`` (bool): the host can pause the run on an interrupt and resume it later, so
      the interrupt channel answers without ``PI_INTERRUPT_RESUME`` in ``env``;
    - ``interaction_channels`` (a sequence of :class:`~interactions.channels.Channel`): the
      host's own chain, replacing the default one;
    - ``asks`` (an :class:`~interactions.asks.AskLedger`): the asks of this tool call, which
      number the interrupt ids, replay stored answers and keep a pause from being skipped;
    - ``aborted`` (bool): whether the turn was aborted, so a cancellation of a dialog is an
      abort (:class:`~interactions.InteractionAborted`) rather than a timeout;
    - ``clock`` (a callable returning an aware ``datetime``): "now" for the asks (an ask's
      ``expires_at`` is its now plus the lifetime), read once per ask; without it, the wall
      clock. A runner gives its own, so that an engine replaying a run decides as it first did.
    """

    @property
    def has_ui(self) -> bool: ...

    @property
    def mode(self) -> str: ...

    @property
    def ui(self) -> DialogUI | None: ...

    @property
    def env(self) -> Mapping[str, str]: ...
