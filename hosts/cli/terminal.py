"""The terminal dialog UI: arrow-key select, checkbox multi-select, text and a multi-line editor.

Built on questionary (prompt_toolkit), so it needs the asyncio event loop. As in pi, Escape or
Ctrl-D in a dialog dismisses it (the ask is declined); Ctrl-C aborts the turn
(:class:`~interactions.InteractionAborted`), it never declines. Option descriptions show under
the list for the highlighted option. A ``timeout`` closes the dialog and returns ``None`` (the
terminal passes none by default). On a terminal a dialog reads only the keys pressed while it is
on screen: keys typed before (an Enter while the agent was working, a second Enter on the dialog
before) are dropped, so they never pick an option or approve a dialog no one has read.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

import anyio
import questionary
from prompt_toolkit.application import Application
from prompt_toolkit.input import Input
from prompt_toolkit.input.typeahead import clear_typeahead
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent, merge_key_bindings
from prompt_toolkit.output import Output

from interactions import InteractionAborted

__all__ = ["TerminalDialogUI"]

_HINT_SELECT = "(arrow keys, Enter; Esc to decline)"
_HINT_CHECKBOX = "(Space to toggle, Enter to confirm; Esc to decline)"
_HINT_EDITOR = "(Esc then Enter to submit)"
_DISMISSED = object()


def _dismissal_keys(*, escape: bool) -> KeyBindings:
    bindings = KeyBindings()

    def dismiss(event: KeyPressEvent) -> None:
        event.app.exit(result=_DISMISSED)

    bindings.add("c-d", eager=True)(dismiss)
    if escape:
        bindings.add("escape", eager=True)(dismiss)
    return bindings


def _drop_typeahead(app: Application[Any]) -> None:
    """Forget the keys pressed before ``app`` is shown, when its input is a terminal.

    Both where they wait: prompt_toolkit's typeahead (read by the previous dialog, not used)
    and the terminal's input queue (typed while no dialog was reading). Scripted input (a pipe)
    keeps its keys: it was written for the dialogs it drives.
    """
    try:
        fd = app.input.fileno()
    except NotImplementedError:  # an input without a file (DummyInput)
        return
    if sys.platform == "win32" or not os.isatty(fd):
        return
    import termios

    clear_typeahead(app.input)
    termios.tcflush(fd, termios.TCIFLUSH)


def _choices(
    options: Sequence[str], descriptions: Sequence[str | None] | None
) -> list[questionary.Choice]:
    texts = list(descriptions or ()) + [None] * len(options)
    return [
        questionary.Choice(title=option, value=option, description=texts[i] or None)
        for i, option in enumerate(options)
    ]


class TerminalDialogUI:
    """A :class:`~interactions.dialogs.DialogUI` on the controlling terminal.

    ``input``/``output`` may be given to run the prompts on another prompt_toolkit I/O (tests).
    """

    def __init__(self, *, input: Input | None = None, output: Output | None = None) -> None:
        self._io: dict[str, Any] = {}
        if input is not None:
            self._io["input"] = input
        if output is not None:
            self._io["output"] = output

    async def _ask(
        self, question: questionary.Question, timeout: float | None, *, escape: bool = True
    ) -> Any:
        app = question.application
        app.key_bindings = merge_key_bindings(
            [app.key_bindings or KeyBindings(), _dismissal_keys(escape=escape)]
        )
        _drop_typeahead(app)
        try:
            with anyio.move_on_after(timeout):
                answer = await question.unsafe_ask_async()
                return None if answer is _DISMISSED else answer
            return None
        except KeyboardInterrupt:
            raise InteractionAborted("Ctrl-C in a dialog aborted the turn") from None
        except EOFError:
            return None

    async def select(
        self,
        title: str,
        options: Sequence[str],
        *,
        timeout: float | None = None,
        descriptions: Sequence[str | None] | None = None,
    ) -> str | None:
        question = questionary.select(
            title, _choices(options, descriptions), instruction=_HINT_SELECT, **self._io
        )
        answer = await self._ask(question, timeout)
        return answer if isinstance(answer, str) else None

    async def multi_select(
        self,
        title: str,
        options: Sequence[str],
        *,
        timeout: float | None = None,
        descriptions: Sequence[str | None] | None = None,
    ) -> list[str] | None:
        question = questionary.checkbox(
            title, _choices(options, descriptions), instruction=_HINT_CHECKBOX, **self._io
        )
        answer = await self._ask(question, timeout)
        return [str(a) for a in answer] if isinstance(answer, list) else None

    async def confirm(
        self, title: str, message: str, *, timeout: float | None = None
    ) -> bool | None:
        text = f"{title}\n{message}" if message else title
        answer = await self._ask(questionary.confirm(text, **self._io), timeout)
        return answer if isinstance(answer, bool) else None

    async def input(
        self, title: str, placeholder: str | None = None, *, timeout: float | None = None
    ) -> str | None:
        question = questionary.text(
            title, instruction=placeholder and f"({placeholder}; Esc to decline)", **self._io
        )
        answer = await self._ask(question, timeout)
        return answer if isinstance(answer, str) else None

    async def editor(
        self, title: str, prefill: str = "", *, timeout: float | None = None
    ) -> str | None:
        question = questionary.text(
            title, default=prefill, multiline=True, instruction=_HINT_EDITOR, **self._io
        )
        answer = await self._ask(question, timeout, escape=False)  # Esc starts Esc-Enter
        return answer if isinstance(answer, str) else None
