"""AG-UI for run drivers and hosts (importing this loads ag-ui-protocol's models).

- :func:`run_started` / :func:`run_closed`: the frame of a leg (one AG-UI run).
- :class:`LegTranslator`: an agent session's events as AG-UI events, live.
- :func:`event_json` / :func:`event_from_json`: an event to and from its wire JSON (the pause
  records' own fields kept both ways).

A driver's :meth:`~recipes.runs.RunDriver.leg_events` gives a stored leg's events again; hosts
read them with :func:`recipes.runs.leg_agui_events` and :func:`recipes.runs.agui_events`.
"""

from recipes.runs._agui import (
    LegTranslator,
    Outcome,
    event_from_json,
    event_json,
    run_closed,
    run_started,
)

__all__ = [
    "LegTranslator",
    "Outcome",
    "event_from_json",
    "event_json",
    "run_closed",
    "run_started",
]
