"""What a graph run writes down: its checkpoint, plain data (never a live coroutine).

The checkpoint holds the workflow's source (so any process resumes the run without the file),
the vars, every node execution with its input and output, and the cursors: the trunk and, while
a ``fan_out_all`` runs, one per branch. An agent node paused on an ask keeps its conversation
here (:class:`SessionState`) — decided over child runs so that one run holds every open
interaction of the graph (hosts see them on the graph run itself) and one write records a pause
with its status. Interaction ids are raised in the execution's scope: ``int-<node>.<visit>…``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from interactions import AskUserInterrupt
from interactions.asks import ROOT_SCOPE, AskScope
from recipes.messages import Message
from recipes.runs.drivers import PausedCalls, RunEnvelope

__all__ = ["AsyncAsked", "Cursor", "FanOutState", "GraphCheckpoint", "NodeRun", "SessionState"]

_MODEL = ConfigDict(extra="forbid", validate_assignment=False)

NodeStatus = Literal["running", "paused", "finished", "failed"]
CursorState = Literal["ready", "active", "parked", "arrived", "failed", "done", "waiting"]
"""``ready``: run node ``at``; ``active``: continue the execution ``current`` (a resume, a
retry, or a restart after the process died); ``parked``: paused on questions; ``arrived``: a
branch reached its join; ``failed``; ``done``: the trunk finished; ``waiting``: the trunk waits
for a fan-out."""


class SessionState(BaseModel):
    """An agent node's conversation between legs: its transcript and paused calls."""

    model_config = _MODEL

    messages: list[Message] = Field(default_factory=list)
    paused: PausedCalls | None = None
    corrective: bool = False
    """The corrective turn (output off its schema) was sent."""


class AsyncAsked(BaseModel):
    """An async question an execution posted: its stored id and what was asked."""

    model_config = _MODEL

    id: str
    question: str
    options: Any = None
    allow_free_text: bool | None = None

    def same(self, other: AsyncAsked) -> bool:
        """Whether ``other`` asks the same (its id aside)."""
        return (self.question, self.options, self.allow_free_text) == (
            other.question, other.options, other.allow_free_text
        )  # fmt: skip


class NodeRun(BaseModel):
    """One execution of one node: its input, output or error, and where it stands."""

    model_config = _MODEL

    node: str
    kind: str
    visit: int
    branch: str = "main"
    status: NodeStatus = "running"
    input: dict[str, Any] = Field(default_factory=dict)
    output: dict[str, Any] | None = None
    error: str | None = None
    code: str | None = None
    resumable: bool = False
    interrupts: list[str] = Field(default_factory=list)
    """The stored interaction ids this execution waits on (or waited on)."""
    asking: list[AskUserInterrupt] | None = None
    """The questions this execution parked on, until a write stores them. The leg's end does,
    but a fan-out sibling's node may end first and write the checkpoint: a process that dies in
    between leaves them here, and the next leg stores them instead of running the node again."""
    asked_async: list[AsyncAsked] = Field(default_factory=list)
    """The async questions this execution posted, recorded with them: run again (a retry, a
    fresh conversation on a fallback route), it gets their ids back for the same questions
    rather than asking them again."""
    answers: dict[str, Any] = Field(default_factory=dict)
    """A human node's answers so far, by field."""
    attempts: dict[str, int] = Field(default_factory=dict)
    """A human node's asks per field (a field asked again after an unreadable answer)."""
    session: SessionState | None = None
    route: str = "primary"
    """The route of an LLM node's chain this execution is on (its conversation's)."""
    retry_after: float | None = None
    """Set with a failure: the seconds the model's provider asked to wait, when it said."""
    started_at: str = ""
    finished_at: str | None = None

    @property
    def scope(self) -> AskScope:
        """Where this execution's asks are raised: every interaction id it stores is in it
        (``int-<node>.<visit>…``)."""
        return ROOT_SCOPE.enter(self.node, self.visit)


class Cursor(BaseModel):
    """A line of execution: the trunk (``main``) or one branch of a fan-out."""

    model_config = _MODEL

    branch: str = "main"
    state: CursorState = "ready"
    at: str | None = None
    input: dict[str, Any] = Field(default_factory=dict)
    current: int | None = None
    """Index in ``GraphCheckpoint.executions`` of the execution in progress."""
    outputs: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """A branch's own outputs (merged into the trunk's at the join)."""
    artifacts: dict[str, Any] = Field(default_factory=dict)
    loops: dict[str, int] = Field(default_factory=dict)
    """Loop crossings so far, by loop name."""
    error: str | None = None
    code: str | None = None
    resumable: bool = False
    """Set with ``state == "failed"``: why, and whether a retry may cure it."""


class FanOutState(BaseModel):
    """A ``fan_out_all`` in progress: its branches, and where they meet."""

    model_config = _MODEL

    router: str
    join: str
    branches: list[Cursor]


class GraphCheckpoint(RunEnvelope):
    """A graph run's checkpoint (the store keeps it as JSON, replaced whole at each write): the
    envelope every run kind keeps (its legs, expiry policy, automatic retries:
    :class:`~recipes.runs.drivers.RunEnvelope`), then the workflow's own state."""

    model_config = _MODEL

    source: str
    file: str
    base: str
    cwd: str
    vars: dict[str, Any] = Field(default_factory=dict)
    trunk: Cursor = Field(default_factory=Cursor)
    fanout: FanOutState | None = None
    outputs: dict[str, dict[str, Any]] = Field(default_factory=dict)
    artifacts: dict[str, Any] = Field(default_factory=dict)
    executions: list[NodeRun] = Field(default_factory=list)
    visits: dict[str, int] = Field(default_factory=dict)
    iterations: int = 0
    elapsed: float = 0.0
    """Active seconds spent so far, over every leg (paused time does not count)."""

    def dump(self) -> dict[str, Any]:
        """JSON data for ``Store.update_run(checkpoint=...)`` (no retries in a row: left out)."""
        data = self.model_dump(mode="json", exclude_none=True)
        if not data.get("retries"):
            data.pop("retries", None)
        return data

    def cursors(self) -> list[Cursor]:
        """The trunk, then the branches of the fan-out in progress."""
        return [self.trunk, *(self.fanout.branches if self.fanout else [])]
