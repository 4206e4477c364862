"""One dialog at a time: branches running at once share the host's single UI."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import anyio

from interactions.dialogs import DialogUI
from recipes.runs import Surface

__all__ = ["serial_surface"]


class _SerialUI:
    """A dialog UI whose dialogs wait for one another."""

    def __init__(self, ui: DialogUI) -> None:
        self._ui = ui
        self._lock = anyio.Lock()

    async def _one(self, method: str, *args: Any, **kwargs: Any) -> Any:
        async with self._lock:
            return await getattr(self._ui, method)(*args, **kwargs)

    async def select(
        self,
        title: str,
        options: Sequence[str],
        *,
        timeout: float | None = None,
        descriptions: Sequence[str | None] | None = None,
    ) -> str | None:
        return await self._one(
            "select",
            title,
            options,
            timeout=timeout,  # type: ignore[no-any-return]
            descriptions=descriptions,
        )

    async def confirm(
        self, title: str, message: str, *, timeout: float | None = None
    ) -> bool | None:
        return await self._one("confirm", title, message, timeout=timeout)  # type: ignore[no-any-return]

    async def input(
        self, title: str, placeholder: str | None = None, *, timeout: float | None = None
    ) -> str | None:
        return await self._one("input", title, placeholder, timeout=timeout)  # type: ignore[no-any-return]

    async def editor(
        self, title: str, prefill: str = "", *, timeout: float | None = None
    ) -> str | None:
        return await self._one("editor", title, prefill, timeout=timeout)  # type: ignore[no-any-return]


class _SerialMultiUI(_SerialUI):
    async def multi_select(
        self,
        title: str,
        options: Sequence[str],
        *,
        timeout: float | None = None,
        descriptions: Sequence[str | None] | None = None,
    ) -> list[str] | None:
        return await self._one(
            "multi_select",
            title,
            options,
            timeout=timeout,  # type: ignore[no-any-return]
            descriptions=descriptions,
        )


def serial_surface(surface: Surface) -> Surface:
    """``surface`` with its UI (if any) showing one dialog at a time."""
    if surface.ui is None:
        return surface
    wrapper = _SerialMultiUI if hasattr(surface.ui, "multi_select") else _SerialUI
    return dataclasses.replace(surface, ui=wrapper(surface.ui))
