"""Which driver continues a run: a registry keyed by the run's ``kind``.

The runner answers, resumes, cancels and expires runs of every kind through the store; what it
does after a resume (call a model, run a workflow's next node) belongs to the run's driver. The
recipe driver is built in; another one (the graph engine's) registers itself with
:func:`register_driver`, or is found through the ``pi_recipes.run_drivers`` entry point group
(name: the kind), so a host continues a graph run without importing the engine.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from interactions import UsageError
from interactions.store import EventRecord, InteractionRecord, RunRecord

if TYPE_CHECKING:
    from ag_ui.core import BaseEvent

    from recipes.runs._results import Claim, RunResult, Surface
    from recipes.runs._runner import Runner

__all__ = ["DRIVER_ENTRY_POINTS", "RunDriver", "RunView", "driver_for", "register_driver"]

DRIVER_ENTRY_POINTS = "pi_recipes.run_drivers"
"""The entry point group naming run drivers by kind (the object is a :class:`RunDriver`)."""


@dataclass(frozen=True)
class RunView:
    """What a driver shows of a run: its latest output, its last leg's AG-UI run id,
    ``details``: lines a host prints under the run for people (a workflow's node path), and
    ``warning``: why the latest output may not be whole (see ``RunResult.warning``)."""

    text: str = ""
    agui_run_id: str | None = None
    details: tuple[str, ...] = ()
    warning: str | None = None


class RunDriver(Protocol):
    """How the runner continues the runs of one kind.

    A driver's checkpoint keeps the run's expiry policy (``decline``/``fail``) under the
    top-level key ``expiry_policy``: the runner's expiry sweep reads it for every kind.
    """

    async def prepare(self, runner: Runner, run: RunRecord) -> object:
        """Check, before the run leaves ``paused`` (or ``failed_resumable``), everything a
        continuation needs (its definition loads, its model is known and has its key...) and
        return what was built for it: the runner hands it back in the :class:`Claim`, so the
        continuation builds nothing twice. Raise ``UsageError`` saying what to fix; the run is
        left as it was."""
        ...

    async def proceed(self, runner: Runner, claim: Claim, surface: Surface) -> RunResult:
        """Continue the claimed run (now ``running``; its answers stored) until it finishes or
        pauses."""
        ...

    async def retry(self, runner: Runner, claim: Claim, surface: Surface) -> RunResult:
        """Continue a claimed ``failed_resumable`` run (now ``running``) from its checkpoint."""
        ...

    def view(self, run: RunRecord) -> RunView:
        """What to show of the run: its latest output, its last leg's AG-UI run id."""
        ...

    def leg_events(
        self, run: RunRecord, leg: EventRecord, interactions: Mapping[str, InteractionRecord]
    ) -> list[BaseEvent]:
        """The AG-UI events of the leg the ``leg_ended`` store event ``leg`` closed, as its live
        sink saw them (text may come as one event per message); ``interactions`` are the run's,
        by id. A driver writes one ``leg_ended`` event per leg, with what it needs here."""
        ...


_DRIVERS: dict[str, RunDriver] = {}


def register_driver(kind: str, driver: RunDriver) -> None:
    """Make ``driver`` continue the runs of ``kind`` (replacing any driver of that kind)."""
    if not kind:
        raise UsageError("a run kind is a non-empty string")
    _DRIVERS[kind] = driver


def driver_for(kind: str) -> RunDriver:
    """The driver of ``kind``: registered, else loaded from the entry point of that name.

    Raises ``UsageError`` naming the kind when none is installed.
    """
    found = _DRIVERS.get(kind)
    if found is not None:
        return found
    for entry in importlib.metadata.entry_points(group=DRIVER_ENTRY_POINTS, name=kind):
        driver: RunDriver = entry.load()
        _DRIVERS[kind] = driver
        return driver
    raise UsageError(
        f"no driver for runs of kind {kind!r} is installed; install the package that runs "
        f"them (it registers an entry point in {DRIVER_ENTRY_POINTS!r})"
    )
