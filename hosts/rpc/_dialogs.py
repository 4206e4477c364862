"""Dialog requests and the reading of their responses (pi 1.6 ``docs/rpc-extension-ui.md``).
Pure: no I/O.

A response is read strictly, as a human's decision must be: ``{"cancelled": true}`` dismisses
any dialog; otherwise ``select`` needs a ``value`` that is one of the options it offered,
``confirm`` a boolean ``confirmed``, ``input`` and ``editor`` a string ``value``. Anything else
is :class:`Invalid`: the host tells the client what was expected, and the dialog stays open, so
a client's mistake is never read as the human declining (the dialog's timeout still bounds the
wait).

A ``select`` whose options have descriptions shows each as ``"Label — description"`` (pi's
select takes plain strings); the answer is mapped back to the bare option, and the bare
option is accepted as well.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "DESCRIPTION_SEPARATOR",
    "Answer",
    "Dialog",
    "Dismissed",
    "HostRefused",
    "Invalid",
    "Method",
    "read_response",
    "select_dialog",
]

Method = Literal["select", "confirm", "input", "editor", "ask_user_async", "await_answers"]
"""A dialog's method. ``ask_user_async`` and ``await_answers`` are not dialogs but calls of the
async questions' tools, handed to the client that drives the agent (a graph engine), which
owns the run's store: its ``value`` is what the tool gets, an ``error`` refuses the call."""
HOST_METHODS = frozenset({"ask_user_async", "await_answers"})

DESCRIPTION_SEPARATOR = " — "
"""Between an option and its description in a ``select`` row."""

_EXPECTED: dict[str, str] = {
    "select": '{"value": <one of the options>} or {"cancelled": true}',
    "confirm": '{"confirmed": true | false} or {"cancelled": true}',
    "input": '{"value": <a string>} or {"cancelled": true}',
    "editor": '{"value": <a string>} or {"cancelled": true}',
    "ask_user_async": '{"value": <the interaction id>} or {"error": <why not>}',
    "await_answers": '{"value": <the answers\' text>} or {"error": <why not>}',
}


@dataclass(frozen=True)
class Dialog:
    """One dialog: its ``method``, the request's ``fields`` (``title``, ``options``, ...) and,
    for a ``select``, the ``choices``: each accepted answer → the option it stands for."""

    method: Method
    fields: dict[str, Any]
    choices: Mapping[str, str] = field(default_factory=dict)

    @property
    def expected(self) -> str:
        """The responses this dialog accepts, as told to a client that sent another."""
        return _EXPECTED[self.method]


@dataclass(frozen=True)
class Answer:
    """The human answered: the option picked, the text typed, or the yes/no."""

    value: str | bool


@dataclass(frozen=True)
class Dismissed:
    """The human dismissed the dialog (``cancelled: true``)."""


@dataclass(frozen=True)
class HostRefused:
    """The client refused a host call (``ask_user_async``/``await_answers``): ``error`` says
    why; the tool's call fails with it."""

    error: str


@dataclass(frozen=True)
class Invalid:
    """A response of the wrong shape: ``error`` says what was wrong."""

    error: str


def select_dialog(
    title: str, options: Sequence[str], descriptions: Sequence[str | None] | None = None
) -> Dialog:
    """A ``select`` showing ``options``, each with its description when it has one."""
    notes = list(descriptions or ())
    rows: list[str] = []
    choices: dict[str, str] = {}
    for i, option in enumerate(options):
        note = notes[i] if i < len(notes) else None
        row = f"{option}{DESCRIPTION_SEPARATOR}{note}" if note else option
        rows.append(row)
        choices.setdefault(row, option)
    for option in options:
        choices.setdefault(option, option)
    return Dialog("select", {"title": title, "options": rows}, choices)


def _others(frame: Mapping[str, Any]) -> str:
    names = sorted(str(k) for k in frame if k not in ("type", "id"))
    return ", ".join(names) or "no other field"


def read_response(
    dialog: Dialog, frame: Mapping[str, Any]
) -> Answer | Dismissed | HostRefused | Invalid:
    """What the client's ``extension_ui_response`` ``frame`` says (see the module docstring)."""
    if dialog.method in HOST_METHODS and "error" in frame:
        error = frame["error"]
        if not isinstance(error, str) or not error:
            return Invalid(f"'error' must be a non-empty string, got {type(error).__name__}")
        return HostRefused(error)
    cancelled = frame.get("cancelled", False)
    if cancelled is True:
        return Dismissed()
    if cancelled is not False:
        return Invalid(f"'cancelled' must be true, got {cancelled!r}")
    name = "confirmed" if dialog.method == "confirm" else "value"
    if name not in frame:
        has = _others(frame)
        return Invalid(f"a {dialog.method} dialog needs {name!r}; the response has {has}")
    value = frame[name]
    if dialog.method == "confirm":
        if not isinstance(value, bool):
            return Invalid(f"'confirmed' must be true or false, got {type(value).__name__}")
        return Answer(value)
    if not isinstance(value, str):
        return Invalid(f"'value' must be a string, got {type(value).__name__}")
    if dialog.method == "select":
        if value not in dialog.choices:
            return Invalid(f"'value' {value[:80]!r} is not one of the options")
        return Answer(dialog.choices[value])
    return Answer(value)
