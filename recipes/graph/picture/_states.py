"""A graph run's node states and path, read from its stored checkpoint.

A node's state is its latest execution's: running; paused (on a person's answer, an agent's
question, an ``await_answers`` gate) is ``waiting``; finished is ``done``, or ``skipped`` when a
fallback route (``action: skip``) completed it; failed. An execution still running or waiting
when the run ended is ``cancelled`` (the run was cancelled) or ``failed``. The terminal ``done``
is done once the run finished; ``fail`` is ``failed`` once an edge routed to it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from interactions.store import RunStatus
from recipes.graph.picture._model import NodeState, PathStep, Picture
from recipes.graph.runtime import GraphCheckpoint, NodeRun

__all__ = ["node_states"]

_ENDED = frozenset({RunStatus.FINISHED, RunStatus.FAILED, RunStatus.FAILED_RESUMABLE,
                    RunStatus.CANCELLED})  # fmt: skip
"""The statuses in which no execution goes on (until a retry starts a new leg)."""

_FAIL_NODE = "FAIL_NODE"
"""The code of a run routed to ``fail`` (the runtime's)."""


def _state(run: NodeRun, status: RunStatus) -> NodeState:
    if run.status == "finished":
        return "skipped" if (run.output or {}).get("_skipped") else "done"
    if run.status == "failed":
        return "failed"
    if status in _ENDED:
        return "cancelled" if status is RunStatus.CANCELLED else "failed"
    return "waiting" if run.status == "paused" else "running"


def _route(run: NodeRun) -> str | None:
    output: Mapping[str, Any] = run.output or {}
    if output.get("_skipped") or output.get("_fallback_used"):
        return str(output.get("_served_by") or run.route)
    return None


def node_states(
    picture: Picture, checkpoint: GraphCheckpoint, status: RunStatus
) -> tuple[dict[str, NodeState], list[PathStep]]:
    """Each of ``picture``'s nodes' state in a run at ``status`` whose checkpoint is
    ``checkpoint``, and the run's path: each execution in the order they began."""
    states: dict[str, NodeState] = {node.id: "not_reached" for node in picture.nodes}
    path = []
    for run in checkpoint.executions:
        state = _state(run, status)
        states[run.node] = state
        path.append(PathStep(node=run.node, visit=run.visit, branch=run.branch, state=state,
                             route=_route(run)))  # fmt: skip
    if "done" in states and status is RunStatus.FINISHED:
        states["done"] = "done"
    if "fail" in states and _FAIL_NODE in (c.code for c in checkpoint.cursors()):
        states["fail"] = "failed"
    return states, path
