"""What a node executor is given (:class:`NodeContext`) and what it returns
(:class:`NodeOutcome`): executors do the node's work; the engine writes it down."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from interactions import AskUserInterrupt
from interactions.store import InteractionRecord
from recipes.graph import ir
from recipes.graph.runtime._events import LegEvents
from recipes.graph.runtime._flow import Scope
from recipes.graph.runtime._state import SessionState
from recipes.policy import Policy
from recipes.runs import Surface

if TYPE_CHECKING:
    import anyio

    from recipes.graph.runtime._agent import Agents
    from recipes.runs import Runner
    from recipes.runs.drivers import RunAsyncQuestions

__all__ = ["Mode", "Moved", "NodeContext", "NodeOutcome", "failed", "finished"]

Mode = Literal["start", "resume", "retry"]
"""``start``: a fresh execution; ``resume``: its questions were answered; ``retry``: it failed
on something that may pass (or its process died) and runs again."""


class Moved(Exception):
    """The run was changed by someone else (cancelled, recovered): this leg stops."""


@dataclass
class NodeOutcome:
    """How an execution ended: finished with ``output``, paused on ``interrupts`` (new ones,
    to store), or failed (``resumable``: a retry may cure it). A model's failure carries its
    ``error_class``, the wait its provider asked for (``retry_after``, seconds) and how many
    calls it made (``attempts``)."""

    status: Literal["finished", "paused", "failed"]
    output: dict[str, Any] | None = None
    interrupts: list[AskUserInterrupt] = field(default_factory=list)
    session: SessionState | None = None
    error: str | None = None
    code: str | None = None
    resumable: bool = False
    error_class: str | None = None
    retry_after: float | None = None
    attempts: int = 0


def finished(output: dict[str, Any]) -> NodeOutcome:
    return NodeOutcome("finished", output=output)


def failed(error: str, code: str, *, resumable: bool = False, **kw: Any) -> NodeOutcome:
    return NodeOutcome("failed", error=error, code=code, resumable=resumable, **kw)


@dataclass
class NodeContext:
    """One execution's world: the runner, the run, the graph, the scope it reads, the leg's
    events, the host's surface, its time bound and (on resume) the run's interactions; for an
    ``interaction: async`` node its async questions' binder; in a fan-out branch the
    branches' limiter (a node that parks, such as ``await_answers``, frees its slot);
    ``continuing``: the leg resumes or retries the run (an auth failure met there leaves it
    resumable: the run holds what came before, and a key set cures it); ``expiry_policy``:
    the run's (what an expired question does: ``decline``, or ``fail`` the run); ``policy``: the
    approval policy the run kept, when this process names none; ``bound`` and
    ``spent``: the engine's clock, for a node that makes several calls in turn."""

    runner: Runner
    agents: Agents
    """The workflow's agents, each resolved once per leg (its recipe, its model)."""
    run_id: str
    thread_id: str
    agui_run_id: str
    graph: ir.Graph
    base: Path
    cwd: Path
    scope: Scope
    events: LegEvents
    surface: Surface
    deadline: float | None
    interactions: list[InteractionRecord] = field(default_factory=list)
    asyncq: RunAsyncQuestions | None = None
    limiter: anyio.CapacityLimiter | None = None
    continuing: bool = False
    expiry_policy: str = "decline"
    policy: Policy | None = None
    bound: Callable[[], float | None] | None = None
    """The time bound of a call started now (the node's ``timeout:``, capped by what is left
    of the run's ``max_duration``): a later route of an LLM node's chain gets its own."""
    spent: Callable[[], bool] = lambda: False
    """Whether the run's ``max_duration`` is spent (a timeout was the run's, not the node's)."""
