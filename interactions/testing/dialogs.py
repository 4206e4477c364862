"""A scripted dialog UI and a plain tool context: how to test a tool that asks a human.

>>> ui = ScriptedDialogUI(["Request changes", "tighten the wording"])
>>> ctx = StaticToolContext(ui=ui, env={})
>>> result = await ask_user_approval(title="Publish?", tool_call_id="t1", ctx=ctx)  # doctest: +SKIP
>>> result.text  # doctest: +SKIP
'Revision requested. Feedback: tighten the wording'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

import anyio

from interactions._asks import AskLedger
from interactions._context import DialogUI
from interactions._errors import InteractionAborted
from interactions.store import utc_now

__all__ = ["ABORT", "HANG", "DialogCall", "ScriptedDialogUI", "StaticToolContext"]


class _Sentinel:
    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return self._name


HANG: Final = _Sentinel("HANG")
"""Script entry: the dialog never answers (until its timeout or a cancellation)."""
ABORT: Final = _Sentinel("ABORT")
"""Script entry: the UI reports that the turn was aborted."""


@dataclass(frozen=True)
class DialogCall:
    """One dialog the UI was asked to show."""

    method: str
    title: str
    options: tuple[str, ...] = ()
    placeholder: str | None = None
    timeout: float | None = None
    descriptions: tuple[str | None, ...] = ()


@dataclass
class ScriptedDialogUI:
    """A :class:`~interactions.DialogUI` that answers from a script, in order.

    Each entry is the value the next dialog returns: a string (select/input/editor), a list of
    strings (multi_select), a bool (confirm), ``None`` (dismissed), :data:`HANG` or
    :data:`ABORT`. Every call is recorded in ``calls``. A dialog past the end of the script
    raises ``AssertionError``. ``multi_select=False`` makes the UI lack the checkbox dialog.
    """

    script: Sequence[Any] = ()
    multi_select_supported: bool = True
    calls: list[DialogCall] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._pending = list(self.script)
        if not self.multi_select_supported:
            # Instances without the method exercise the walk's select fallback.
            self.multi_select = None  # type: ignore[method-assign,assignment]

    async def _answer(self, call: DialogCall) -> Any:
        self.calls.append(call)
        if not self._pending:
            raise AssertionError(f"the script has no answer for {call}")
        answer = self._pending.pop(0)
        if answer is HANG:
            await anyio.sleep_forever()
        if answer is ABORT:
            raise InteractionAborted("the UI reported an abort")
        return answer

    async def select(
        self,
        title: str,
        options: Sequence[str],
        *,
        timeout: float | None = None,
        descriptions: Sequence[str | None] | None = None,
    ) -> str | None:
        call = DialogCall(
            "select", title, tuple(options), timeout=timeout, descriptions=tuple(descriptions or ())
        )
        answer: str | None = await self._answer(call)
        return answer

    async def multi_select(
        self,
        title: str,
        options: Sequence[str],
        *,
        timeout: float | None = None,
        descriptions: Sequence[str | None] | None = None,
    ) -> list[str] | None:
        call = DialogCall(
            "multi_select",
            title,
            tuple(options),
            timeout=timeout,
            descriptions=tuple(descriptions or ()),
        )
        answer: list[str] | None = await self._answer(call)
        return answer

    async def confirm(
        self, title: str, message: str, *, timeout: float | None = None
    ) -> bool | None:
        answer: bool | None = await self._answer(
            DialogCall("confirm", title, placeholder=message, timeout=timeout)
        )
        return answer

    async def input(
        self, title: str, placeholder: str | None = None, *, timeout: float | None = None
    ) -> str | None:
        answer: str | None = await self._answer(
            DialogCall("input", title, placeholder=placeholder, timeout=timeout)
        )
        return answer

    async def editor(
        self, title: str, prefill: str = "", *, timeout: float | None = None
    ) -> str | None:
        answer: str | None = await self._answer(
            DialogCall("editor", title, placeholder=prefill, timeout=timeout)
        )
        return answer

    @property
    def remaining(self) -> int:
        """Script entries not used yet."""
        return len(self._pending)


@dataclass(frozen=True)
class StaticToolContext:
    """A minimal tool context. ``has_ui`` is true when ``ui`` is set, unless ``ui_available``
    says otherwise (a context that has a UI object but cannot show it now).

    ``env`` is the session's environment the flags are read from (empty: every flag off);
    ``can_pause`` says the host can pause the run; ``asks`` is the call's ask ledger, if any;
    ``aborted`` says the turn was aborted; ``clock`` is "now" for its asks (their expiry).
    """

    ui: DialogUI | None = None
    mode: str = "tui"
    ui_available: bool | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    can_pause: bool = False
    asks: AskLedger | None = None
    aborted: bool = False
    clock: Callable[[], datetime] = field(default=utc_now, repr=False)

    @property
    def has_ui(self) -> bool:
        """Whether a human can answer a dialog now."""
        return self.ui is not None if self.ui_available is None else self.ui_available
