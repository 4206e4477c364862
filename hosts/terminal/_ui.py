"""The terminal dialog UI: arrow-key select, checkbox multi-select, text and a multi-line editor.

Built on questionary (prompt_toolkit), so it needs the asyncio event loop. Ctrl-C inside a
dialog aborts the turn (:class:`~interactions.InteractionAborted`), it never declines. A
``timeout`` closes the dialog and returns ``None`` (the terminal passes none by default).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anyio
import questionary
from prompt_toolkit.input import Input
from prompt_toolkit.output import Output

from interactions import InteractionAborted

__all__ = ["TerminalDialogUI"]

_HINT_SELECT = "(arrow keys, Enter)"
_HINT_CHECKBOX = "(Space to toggle, Enter to confirm)"
_HINT_EDITOR = "(Esc then Enter to submit)"


class TerminalDialogUI:
    """A :class:`~interactions.DialogUI` on the controlling terminal.

    ``input``/``output`` may be given to run the prompts on another prompt_toolkit I/O (tests).
    """

    def __init__(self, *, input: Input | None = None, output: Output | None = None) -> None:
        self._io: dict[str, Any] = {}
        if input is not None:
            self._io["input"] = input
        if output is not None:
            self._io["output"] = output

    async def _ask(self, question: questionary.Question, timeout: float | None) -> Any:
        try:
            with anyio.move_on_after(timeout):
                return await question.unsafe_ask_async()
            return None
        except KeyboardInterrupt:
            raise InteractionAborted("Ctrl-C in a dialog aborted the turn") from None
        except EOFError:
            return None

    async def select(
        self, title: str, options: Sequence[str], *, timeout: float | None = None
    ) -> str | None:
        question = questionary.select(title, list(options), instruction=_HINT_SELECT, **self._io)
        answer = await self._ask(question, timeout)
        return answer if isinstance(answer, str) else None

    async def multi_select(
        self, title: str, options: Sequence[str], *, timeout: float | None = None
    ) -> list[str] | None:
        question = questionary.checkbox(
            title, list(options), instruction=_HINT_CHECKBOX, **self._io
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
            title, instruction=placeholder and f"({placeholder})", **self._io
        )
        answer = await self._ask(question, timeout)
        return answer if isinstance(answer, str) else None

    async def editor(
        self, title: str, prefill: str = "", *, timeout: float | None = None
    ) -> str | None:
        question = questionary.text(
            title, default=prefill, multiline=True, instruction=_HINT_EDITOR, **self._io
        )
        answer = await self._ask(question, timeout)
        return answer if isinstance(answer, str) else None
