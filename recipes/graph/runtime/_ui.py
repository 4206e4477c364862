"""One dialog at a time: branches running at once share the host's single UI."""

from __future__ import annotations

import dataclasses

import anyio

from interactions.dialogs import around
from recipes.runs import Surface

__all__ = ["serial_surface"]


def serial_surface(surface: Surface) -> Surface:
    """``surface`` with its UI (if any) showing one dialog at a time."""
    if surface.ui is None:
        return surface
    lock = anyio.Lock()
    return dataclasses.replace(surface, ui=around(surface.ui, lambda: lock))
