"""Dialogs, for host authors: the :class:`DialogUI` protocol and the dialog walk that drives it.

The walk (:func:`dialog_walk`) is written once as a generator of steps; :func:`run_dialog`
drives it on any UI with a time budget. A host plugs its surface in by implementing
:class:`DialogUI` (and :class:`MultiSelectUI` if it has checkboxes); :func:`around` wraps a UI so
that each of its dialogs runs inside something (a lock, a paused spinner).
"""

from interactions._around import DialogGuard, around
from interactions._context import DialogUI, MultiSelectUI
from interactions._dialog import (
    APPROVE,
    DECLINE,
    DONE,
    EDIT,
    REQUEST_CHANGES,
    DialogStep,
    EditorStep,
    InputStep,
    MultiSelectStep,
    SelectStep,
    dialog_title,
    dialog_walk,
    run_dialog,
)

__all__ = [
    "APPROVE",
    "DECLINE",
    "DONE",
    "EDIT",
    "REQUEST_CHANGES",
    "DialogGuard",
    "DialogStep",
    "DialogUI",
    "EditorStep",
    "InputStep",
    "MultiSelectStep",
    "MultiSelectUI",
    "SelectStep",
    "around",
    "dialog_title",
    "dialog_walk",
    "run_dialog",
]
