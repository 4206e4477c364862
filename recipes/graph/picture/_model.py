"""The picture of a workflow as data: laid-out nodes and edges, and a run's node states.

One model serves every output: the SVG of ``pi-recipes graph draw``, its Mermaid text, and the
JSON the web page draws a run's picture from (``GET /api/runs/{id}/picture``). Coordinates are
SVG user units, the origin top left, ``y`` growing downwards.
"""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

__all__ = [
    "EDGE_KINDS",
    "NODE_KINDS",
    "NODE_STATES",
    "EdgeKind",
    "NodeKind",
    "NodeState",
    "PathStep",
    "Picture",
    "PictureEdge",
    "PictureNode",
    "RunPicture",
]

NodeKind = Literal[
    "agent", "judge", "human", "await_answers", "compute", "tool", "router", "fan_out",
    "done", "fail",
]  # fmt: skip
NODE_KINDS: tuple[NodeKind, ...] = (
    "agent", "judge", "human", "await_answers", "compute", "tool", "router", "fan_out",
    "done", "fail",
)  # fmt: skip
"""What a node of the picture is: a node kind of the language (a ``router`` of mode
``fan_out_all`` is ``fan_out``; an ``agent`` written ``judge`` is ``judge``), or one of the two
reserved edge targets, ``done`` and ``fail``."""

NodeState = Literal["not_reached", "running", "waiting", "done", "skipped", "failed", "cancelled"]
NODE_STATES: tuple[NodeState, ...] = (
    "not_reached", "running", "waiting", "done", "skipped", "failed", "cancelled",
)  # fmt: skip
"""Where a node of a run stands: not reached yet; running; waiting for a person (a ``human``
node, an agent's question, an ``await_answers`` gate); done; skipped by a fallback route
(``action: skip``); failed; cancelled (it was running or waiting when the run was cancelled)."""

EdgeKind = Literal["always", "when", "else", "loop"]
EDGE_KINDS: tuple[EdgeKind, ...] = ("always", "when", "else", "loop")
"""An edge taken whenever its node is done (``always``), under a condition (``when``), when no
condition of its node holds (``else``), or a bounded loop (``as name(N)``)."""

_FROZEN = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class PictureNode(BaseModel):
    """A node as drawn: its box (``x``, ``y`` its top left corner) and the outline of its shape
    within it (``shape``: SVG path data, in the picture's coordinates)."""

    model_config = _FROZEN

    id: str = Field(description="the node's name in the workflow (or `done`, `fail`)")
    label: str = Field(description="the text drawn in it: its name")
    kind: NodeKind
    detail: str = Field(default="", description="a second line: its kind, model or command")
    routes: str = Field(default="", description="its fallback routes, in order, when it has any")
    entry: bool = Field(default=False, description="the workflow's entry node")
    x: float
    y: float
    width: float
    height: float
    shape: str = Field(description="SVG path data of its outline")
    state_y: float | None = Field(
        default=None,
        description="the baseline of the line kept for its state, in a run's picture (the "
        "texts above it are centred in the rest of the box); none in a workflow's",
    )


class PictureEdge(BaseModel):
    """An edge as drawn: the polyline from its source's outline to its target's (``points``),
    its label (the condition or the loop) centred at ``label_x``, ``label_y``."""

    model_config = _FROZEN

    id: str = Field(description="`e<N>`: the edge's position among the workflow's edges")
    source: str = Field(validation_alias=AliasChoices("from", "source"),
                        serialization_alias="from")  # fmt: skip
    target: str = Field(validation_alias=AliasChoices("to", "target"), serialization_alias="to")
    label: str = ""
    kind: EdgeKind = "always"
    back: bool = Field(default=False, description="it goes back to a node already passed")
    points: list[tuple[float, float]]
    label_x: float | None = None
    label_y: float | None = None
    label_width: float = 0.0


class Picture(BaseModel):
    """A workflow laid out: every node (declared, and the terminals its edges reach) and every
    edge, in a ``width`` × ``height`` box."""

    model_config = _FROZEN

    workflow: str
    width: float
    height: float
    nodes: list[PictureNode]
    edges: list[PictureEdge]

    def node(self, node_id: str) -> PictureNode | None:
        """The node ``node_id``, if drawn."""
        return next((n for n in self.nodes if n.id == node_id), None)


class PathStep(BaseModel):
    """One execution of a node, in the order the run took them."""

    model_config = _FROZEN

    node: str
    visit: int
    branch: str = "main"
    state: NodeState
    route: str | None = Field(
        default=None, description="the fallback route that served or skipped it, if one did"
    )


class RunPicture(BaseModel):
    """A graph run's picture: its workflow laid out, each node's state, and its path so far."""

    model_config = _FROZEN

    run_id: str
    status: str
    picture: Picture
    states: dict[str, NodeState] = Field(description="every drawn node's state, by id")
    path: list[PathStep]
