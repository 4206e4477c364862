"""Lay a workflow out: the IR (:mod:`recipes.graph.ir`) to a :class:`Picture`.

The layered (Sugiyama) layout is grandalf's, a pure-Python library (the ``draw`` extra): it
ranks the nodes from the entry down, orders each rank to cut crossings, and routes long edges
through the ranks they cross. An edge's label is laid out as a small vertex of its own on the
edge, so no label covers a node or another label. Edges that go back to a node already passed
(loops, retries) are found by a walk from the entry, in the order the edges are written, and
laid out reversed, so the picture reads top down.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from interactions import UsageError
from recipes.graph import ir
from recipes.graph.picture._model import NodeKind, Picture, PictureEdge, PictureNode
from recipes.graph.picture._reading import (
    back_edges,
    edge_kind,
    edge_label,
    node_detail,
    node_kind,
    node_routes,
)
from recipes.graph.picture._shapes import outline

__all__ = ["DRAW_EXTRA", "MARGIN", "layout"]

DRAW_EXTRA = "pip install 'pi-recipes[draw]'"
"""What installs the layout library."""
MARGIN = 16.0
"""The space around the picture."""
_NAME_CHAR, _SMALL_CHAR = 8.6, 6.7  # the widths of a character of a name, of a detail line
_COMPONENT_GAP = 40.0
_LOOP_OUT = 28.0  # how far a self-loop reaches right of its node
STATE_LINE = 15.0
"""The height of the line a run's picture keeps at the bottom of a node for its state."""


@dataclass
class _Box:
    """A node's texts and size, before it is placed."""

    id: str
    kind: NodeKind
    detail: str = ""
    routes: str = ""
    state_line: bool = False

    @property
    def width(self) -> float:
        if self.kind in ("done", "fail"):
            return 84.0 if self.state_line else 64.0
        text = max(len(self.id) * _NAME_CHAR, len(self.detail) * _SMALL_CHAR,
                   len(self.routes) * _SMALL_CHAR)  # fmt: skip
        pad = 56.0 if self.kind in ("router", "fan_out", "await_answers", "human") else 28.0
        return max(104.0, round(text + pad))

    @property
    def height(self) -> float:
        base = 32.0 if self.kind in ("done", "fail") else 62.0 if self.routes else 46.0
        return base + (STATE_LINE if self.state_line else 0.0)


def _boxes(graph: ir.Graph, workflow: ir.Workflow, state_line: bool) -> dict[str, _Box]:
    boxes = {n.name: _Box(n.name, node_kind(n), node_detail(n), node_routes(n), state_line)
             for n in graph.nodes}  # fmt: skip
    for edge in workflow.edges:
        for end in (edge.src, edge.dst):
            if end in ir.TERMINALS and end not in boxes:
                boxes[end] = _Box(end, "done" if end == "done" else "fail", state_line=state_line)
    return boxes


class _View:
    """What grandalf places: a box's size, then its centre (``xy``)."""

    def __init__(self, w: float, h: float) -> None:
        self.w, self.h = w, h
        self.xy: tuple[float, float] = (0.0, 0.0)


class _EdgeView:
    def __init__(self) -> None:
        self._pts: list[tuple[float, float]] = []

    def setpath(self, pts: list[tuple[float, float]]) -> None:
        self._pts = [(float(x), float(y)) for x, y in pts]


def _grandalf() -> Any:
    try:
        import grandalf.graphs
        import grandalf.layouts
        import grandalf.routing
    except ModuleNotFoundError as missing:
        if (missing.name or "").partition(".")[0] != "grandalf":
            raise
        raise UsageError(f"drawing a workflow needs grandalf: {DRAW_EXTRA}") from None
    return grandalf


def layout(graph: ir.Graph, *, state_line: bool = False) -> Picture:
    """The picture of ``graph``'s workflow (its first; a graph without one draws its nodes
    alone): every declared node and every terminal an edge reaches, every edge with its label.
    ``state_line``: keep a line at the bottom of each node for a run's node state
    (:attr:`PictureNode.state_y`).

    Raises ``UsageError`` when the layout library is not installed (the message says
    :data:`DRAW_EXTRA`)."""
    grandalf = _grandalf()
    workflow = graph.workflows[0] if graph.workflows else ir.Workflow(name="")
    boxes = _boxes(graph, workflow, state_line)
    back = back_edges(workflow, list(boxes))
    vertices = {name: grandalf.graphs.Vertex(name) for name in boxes}
    for name, vertex in vertices.items():
        vertex.view = _View(boxes[name].width, boxes[name].height)
    pieces: dict[int, list[Any]] = {}  # each edge: its grandalf edges, in order
    labels: dict[int, Any] = {}
    inverted = []
    for index, edge in enumerate(workflow.edges):
        if edge.src == edge.dst or edge.src not in vertices or edge.dst not in vertices:
            continue  # a self-loop is drawn beside its node
        text = edge_label(edge)
        ends = [vertices[edge.src], vertices[edge.dst]]
        if text:
            label = grandalf.graphs.Vertex(f"label:{index}")
            label.view = _View(len(text) * _SMALL_CHAR + 14, 20.0)
            labels[index] = label
            ends.insert(1, label)
        made = []
        for a, b in itertools.pairwise(ends):
            piece = grandalf.graphs.Edge(a, b)
            piece.view = _EdgeView()
            made.append(piece)
        pieces[index] = made
        if index in back:
            inverted.extend(made)
    every = [*vertices.values(), *labels.values()]
    whole = grandalf.graphs.Graph(every, [p for made in pieces.values() for p in made])
    left = MARGIN
    for component in whole.C:
        left = _place(grandalf, component, vertices.get(workflow.entry or ""), inverted, left)
    return _picture(workflow, boxes, vertices, pieces, labels, back)


def _place(grandalf: Any, component: Any, entry: Any, inverted: list[Any], left: float) -> float:
    """Lay one connected component out, its left edge at ``left``; return where the next
    one starts."""
    sugiyama = grandalf.layouts.SugiyamaLayout(component)
    sugiyama.xspace, sugiyama.yspace = 28, 26
    sugiyama.route_edge = grandalf.routing.route_with_lines
    members = list(component.sV)
    flipped = [e for e in inverted if e in component.sE]
    sources = [v for v in members if not [e for e in v.e_in() if e not in flipped]]
    roots = [entry] if entry in members else sources[:1] or members[:1]
    sugiyama.init_all(roots=roots, inverted_edges=flipped)
    sugiyama.draw(3)
    low_x = min(v.view.xy[0] - v.view.w / 2 for v in members)
    low_y = min(v.view.xy[1] - v.view.h / 2 for v in members)
    dx, dy = left - low_x, MARGIN - low_y
    for vertex in members:
        vertex.view.xy = (vertex.view.xy[0] + dx, vertex.view.xy[1] + dy)
    for edge in component.sE:
        edge.view._pts = [(x + dx, y + dy) for x, y in edge.view._pts]
    right = max(v.view.xy[0] + v.view.w / 2 for v in members)
    return float(right) + _LOOP_OUT + _COMPONENT_GAP


def _picture(
    workflow: ir.Workflow,
    boxes: dict[str, _Box],
    vertices: dict[str, Any],
    pieces: dict[int, list[Any]],
    labels: dict[int, Any],
    back: set[int],
) -> Picture:
    nodes = []
    for name, box in boxes.items():
        cx, cy = vertices[name].view.xy
        x, y = round(cx - box.width / 2, 1), round(cy - box.height / 2, 1)
        nodes.append(PictureNode(
            id=name, label=name, kind=box.kind, detail=box.detail, routes=box.routes,
            entry=name == workflow.entry, x=x, y=y, width=box.width, height=box.height,
            shape=outline(box.kind, x, y, box.width, box.height),
            state_y=round(y + box.height - 9, 1) if box.state_line else None,
        ))  # fmt: skip
    edges = []
    for index, edge in enumerate(workflow.edges):
        text = edge_label(edge)
        if index in pieces:
            points: list[tuple[float, float]] = []
            for piece in pieces[index]:
                points.extend(piece.view._pts)
        else:  # a self-loop: out of the node's right side and back in
            view = vertices[edge.src].view
            (cx, cy), half = view.xy, view.w / 2
            points = [(cx + half, cy - 8), (cx + half + _LOOP_OUT, cy - 8),
                      (cx + half + _LOOP_OUT, cy + 8), (cx + half, cy + 8)]  # fmt: skip
        label = labels.get(index)
        if label is not None:
            lx, ly, lw = label.view.xy[0], label.view.xy[1], label.view.w
        elif text:
            lx, ly, lw = points[1][0] + 4 + len(text) * _SMALL_CHAR / 2, points[1][1] + 8, 0.0
        else:
            lx = ly = None
            lw = 0.0
        edges.append(PictureEdge(
            id=f"e{index}", source=edge.src, target=edge.dst, label=text, kind=edge_kind(edge),
            back=index in back, points=[(round(x, 1), round(y, 1)) for x, y in points],
            label_x=None if lx is None else round(lx, 1),
            label_y=None if ly is None else round(ly, 1), label_width=round(lw, 1),
        ))  # fmt: skip
    width = max([n.x + n.width for n in nodes] + [x for e in edges for x, _ in e.points] + [0])
    height = max([n.y + n.height for n in nodes] + [y for e in edges for _, y in e.points] + [0])
    return Picture(workflow=workflow.name, width=round(width + MARGIN, 1),
                   height=round(height + MARGIN, 1), nodes=nodes, edges=edges)  # fmt: skip
