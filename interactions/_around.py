"""A dialog UI whose every dialog runs inside something the caller gives.

Hosts wrap a UI to do one thing around each dialog (pause a spinner while it is on screen, let
one dialog show at a time); :func:`around` writes that wrapper once. The wrapper forwards each
call as it came, so its signatures are the wrapped UI's own (the :class:`DialogUI` protocol's).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, TypeVar, overload

from interactions._context import DialogUI, MultiSelectUI

__all__ = ["DialogGuard", "around"]

DialogGuard = Callable[[], AbstractAsyncContextManager[object]]
"""Makes the async context manager one dialog runs inside (called once per dialog)."""

_T = TypeVar("_T")


class _Around:
    def __init__(self, ui: DialogUI, guard: DialogGuard) -> None:
        self._ui = ui
        self._guard = guard

    async def _within(self, dialog: Callable[..., Awaitable[_T]], *args: Any, **kw: Any) -> _T:
        async with self._guard():
            return await dialog(*args, **kw)

    async def select(self, *args: Any, **kwargs: Any) -> str | None:
        return await self._within(self._ui.select, *args, **kwargs)

    async def confirm(self, *args: Any, **kwargs: Any) -> bool | None:
        return await self._within(self._ui.confirm, *args, **kwargs)

    async def input(self, *args: Any, **kwargs: Any) -> str | None:
        return await self._within(self._ui.input, *args, **kwargs)

    async def editor(self, *args: Any, **kwargs: Any) -> str | None:
        return await self._within(self._ui.editor, *args, **kwargs)


class _AroundMulti(_Around):
    def __init__(self, ui: MultiSelectUI, guard: DialogGuard) -> None:
        super().__init__(ui, guard)
        self._multi = ui

    async def multi_select(self, *args: Any, **kwargs: Any) -> list[str] | None:
        return await self._within(self._multi.multi_select, *args, **kwargs)


@overload
def around(ui: MultiSelectUI, guard: DialogGuard) -> MultiSelectUI: ...


@overload
def around(ui: DialogUI, guard: DialogGuard) -> DialogUI: ...


def around(ui: DialogUI, guard: DialogGuard) -> DialogUI:
    """``ui`` with each of its dialogs shown inside ``async with guard():``.

    ``guard`` is called once per dialog, before the dialog starts; the dialog's answer, a
    dismissal (``None``) and whatever it raises (:class:`~interactions.InteractionAborted`, a
    cancellation) come back unchanged, after the guard has exited. The result has
    ``multi_select`` exactly when ``ui`` has a callable one, so the dialog walk falls back to
    select on it as it would on ``ui``.
    """
    if isinstance(ui, MultiSelectUI) and callable(ui.multi_select):
        return _AroundMulti(ui, guard)
    return _Around(ui, guard)
