"""AG-UI for run drivers and hosts (importing this loads ag-ui-protocol's models).

- :func:`run_started` / :func:`run_closed`: the frame of a leg (one AG-UI run).
- :class:`LegTranslator`: an agent session's events as AG-UI events, live.
- :func:`event_json` / :func:`event_from_json`: an event to and from its wire JSON (the pause
  records' own fields kept both ways).
- :func:`agui_events`: a whole run's events, rebuilt from what the store keeps;
  :func:`leg_agui_events`: the events of the leg a ``leg_ended`` store event (:data:`LEG_ENDED`)
  closed, for a host following the store's feed (the run's driver rebuilds them:
  :meth:`~recipes.runs.drivers.RunDriver.leg_events`).
"""

from recipes.runs._agui import (
    LegTranslator,
    Outcome,
    event_from_json,
    event_json,
    run_closed,
    run_started,
)
from recipes.runs._checkpoint import LEG_ENDED
from recipes.runs._history import agui_events, leg_agui_events

__all__ = [
    "LEG_ENDED",
    "LegTranslator",
    "Outcome",
    "agui_events",
    "event_from_json",
    "event_json",
    "leg_agui_events",
    "run_closed",
    "run_started",
]
