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
        self._ui: Any = ui
        self._lock = anyio.Lock()

    async def select(
        self,
        title: str,
        options: Sequence[str],
        *,
        timeout: float | None = None,
        descriptions: Sequence[str | None] | None = None,
    ) -> str | None:
        async with self._lock:
            picked: str | None = await self._ui.select(
                title, options, timeout=timeout, descriptions=descriptions
            )
        return picked

    async def confirm(
        self, title: str, message: str, *, timeout: float | None = None
    ) -> bool | None:
        async with self._lock:
            said: bool | None = await self._ui.confirm(title, message, timeout=timeout)
        return said

    async def input(
        self, title: str, placeholder: str | None = None, *, timeout: float | None = None
    ) -> str | None:
        async with self._lock:
            typed: str | None = await self._ui.input(title, placeholder, timeout=timeout)
        return typed

    async def editor(
        self, title: str, prefill: str = "", *, timeout: float | None = None
    ) -> str | None:
        async with self._lock:
            typed: str | None = await self._ui.editor(title, prefill, timeout=timeout)
        return typed


class _SerialMultiUI(_SerialUI):
    async def multi_select(
        self,
        title: str,
        options: Sequence[str],
        *,
        timeout: float | None = None,
        descriptions: Sequence[str | None] | None = None,
    ) -> list[str] | None:
        async with self._lock:
            picked: list[str] | None = await self._ui.multi_select(
                title, options, timeout=timeout, descriptions=descriptions
            )
        return picked


def serial_surface(surface: Surface) -> Surface:
    """``surface`` with its UI (if any) showing one dialog at a time."""
    if surface.ui is None:
        return surface
    wrapper = _SerialMultiUI if hasattr(surface.ui, "multi_select") else _SerialUI
    return dataclasses.replace(surface, ui=wrapper(surface.ui))
