"""A :class:`Picture` as a standalone SVG file: every node a titled group with its outline and
its texts, every edge a titled group with its line and label, and a legend of the kinds drawn.
Built with ElementTree, so every text is escaped; the styles ride in the file."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping

from recipes.graph.picture._layout import STATE_LINE
from recipes.graph.picture._model import NodeKind, NodeState, Picture, PictureEdge, PictureNode
from recipes.graph.picture._shapes import outline

__all__ = ["KIND_NAMES", "STATE_NAMES", "to_svg"]

SVG = "http://www.w3.org/2000/svg"
KIND_NAMES: dict[NodeKind, str] = {
    "agent": "agent", "judge": "judge", "human": "person (human)",
    "await_answers": "await answers", "compute": "compute", "tool": "tool",
    "router": "router", "fan_out": "fan out", "done": "done", "fail": "fail",
}  # fmt: skip
"""How the legend names each kind."""
STATE_NAMES: dict[NodeState, str] = {
    "not_reached": "not reached", "running": "running", "waiting": "waiting for a person",
    "done": "done", "skipped": "skipped by a route", "failed": "failed", "cancelled": "cancelled",
}  # fmt: skip
"""How each state is said (the page says the same)."""

_STYLE = """
.node path { stroke: #5f6368; stroke-width: 1.4; }
.kind-agent path { fill: #e8f0fe; stroke: #1a73e8; }
.kind-judge path { fill: #f3e8fd; stroke: #8430ce; }
.kind-human path { fill: #fef7e0; stroke: #e37400; }
.kind-await_answers path { fill: #fff8c5; stroke: #b06000; stroke-dasharray: 5 3; }
.kind-compute path { fill: #e6f4ea; stroke: #188038; }
.kind-tool path { fill: #e4f7fb; stroke: #007b83; }
.kind-router path, .kind-fan_out path { fill: #f1f3f4; stroke: #5f6368; }
.kind-done path { fill: #188038; stroke: #0d652d; }
.kind-fail path { fill: #c5221f; stroke: #a50e0e; }
.entry path { stroke-width: 2.6; }
text { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; fill: #202124; }
.name { font-size: 14px; font-weight: 600; }
.detail, .routes { font-size: 11px; fill: #5f6368; }
.kind-done text, .kind-fail text { fill: #ffffff; font-size: 12px; }
.edge polyline { fill: none; stroke: #5f6368; stroke-width: 1.4; }
.edge.back polyline { stroke: #b06000; stroke-dasharray: 6 4; }
.edge rect { fill: #ffffff; stroke: #dadce0; }
.edge text { font-size: 11px; fill: #3c4043; }
.edge.back text { fill: #8a4a00; }
.legend text { font-size: 11px; fill: #3c4043; }
.state-running path { stroke: #1a73e8; stroke-width: 3; }
.state-waiting path { stroke: #e37400; stroke-width: 3; }
.state-done path { stroke: #188038; stroke-width: 3; }
.state-failed path { stroke: #c5221f; stroke-width: 3; }
"""


def _sub(parent: ET.Element, tag: str, **attrs: object) -> ET.Element:
    return ET.SubElement(parent, tag, {k.rstrip("_").replace("_", "-"): str(v)
                                       for k, v in attrs.items()})  # fmt: skip


def _text(parent: ET.Element, x: float, y: float, text: str, cls: str) -> None:
    _sub(parent, "text", x=x, y=y, class_=cls, text_anchor="middle").text = text


def _node(parent: ET.Element, node: PictureNode, state: NodeState | None) -> None:
    classes = f"node kind-{node.kind}" + (" entry" if node.entry else "")
    classes += f" state-{state}" if state else ""
    group = _sub(parent, "g", id=f"node-{node.id}", class_=classes)
    said = f"{node.label} ({KIND_NAMES[node.kind]})" + (", the entry" if node.entry else "")
    said += f": {STATE_NAMES[state]}" if state else ""
    _sub(group, "title").text = said
    _sub(group, "path", d=node.shape)
    cx = node.x + node.width / 2
    lines = [(node.label, "name"), (node.detail, "detail"), (node.routes, "routes")]
    shown = [(t, c) for t, c in lines if t]
    room = node.height - (STATE_LINE if node.state_y is not None else 0.0)
    top = node.y + room / 2 - (len(shown) - 1) * 8 + 4.5
    for n, (text, cls) in enumerate(shown):
        _text(group, cx, round(top + n * 16, 1), text, cls)
    if state and node.state_y is not None:
        _text(group, cx, node.state_y, STATE_NAMES[state].partition(" ")[0]
              if state in ("waiting", "skipped") else STATE_NAMES[state], "state")  # fmt: skip


def _edge(parent: ET.Element, edge: PictureEdge) -> None:
    group = _sub(parent, "g", id=f"edge-{edge.id}", class_="edge back" if edge.back else "edge")
    said = f"{edge.source} → {edge.target}" + (f" ({edge.label})" if edge.label else "")
    _sub(group, "title").text = said + (", back" if edge.back else "")
    points = " ".join(f"{x:g},{y:g}" for x, y in edge.points)
    _sub(group, "polyline", points=points, marker_end="url(#arrow-back)" if edge.back
         else "url(#arrow)")  # fmt: skip
    if edge.label and edge.label_x is not None and edge.label_y is not None:
        width = edge.label_width or len(edge.label) * 6.7 + 14
        _sub(group, "rect", x=round(edge.label_x - width / 2, 1), y=edge.label_y - 10,
             width=width, height=20, rx=4)  # fmt: skip
        _text(group, edge.label_x, edge.label_y + 4, edge.label, "label")


def _markers(svg: ET.Element) -> None:
    defs = _sub(svg, "defs")
    for name, colour in (("arrow", "#5f6368"), ("arrow-back", "#b06000")):
        marker = _sub(defs, "marker", id=name, viewBox="0 0 10 10", refX=9, refY=5,
                      markerWidth=7, markerHeight=7, orient="auto-start-reverse")  # fmt: skip
        _sub(marker, "path", d="M0,0 L10,5 L0,10 Z", fill=colour)


def _legend(svg: ET.Element, picture: Picture, top: float) -> float:
    kinds = [k for k in KIND_NAMES if any(n.kind == k for n in picture.nodes)]
    group = _sub(svg, "g", class_="legend", id="legend")
    _sub(group, "title").text = "Legend"
    x = 16.0
    for kind in kinds:
        item = _sub(group, "g", class_=f"node kind-{kind}")
        _sub(item, "path", d=outline(kind, x, top, 26, 16))
        _sub(item, "text", x=x + 32, y=top + 12).text = KIND_NAMES[kind]
        x += 46 + len(KIND_NAMES[kind]) * 7.0
    if any(e.back for e in picture.edges):
        item = _sub(group, "g", class_="edge back")
        _sub(item, "polyline", points=f"{x},{top + 8} {x + 26},{top + 8}",
             marker_end="url(#arrow-back)")  # fmt: skip
        _sub(item, "text", x=x + 32, y=top + 12).text = "goes back (loop)"
        x += 46 + 16 * 7.0
    return x


def to_svg(picture: Picture, states: Mapping[str, NodeState] | None = None) -> str:
    """``picture`` as an SVG document (UTF-8 text with its XML declaration), a legend of the
    kinds under it; with ``states``, each node's state as its outline and its title say."""
    top = picture.height + 4
    svg = ET.Element("svg", {"xmlns": SVG, "role": "img", "font-size": "12"})
    _sub(svg, "title").text = f"workflow {picture.workflow}" if picture.workflow else "workflow"
    _sub(svg, "style").text = _STYLE
    _markers(svg)
    _sub(svg, "rect", width="100%", height="100%", fill="#ffffff")
    edges = _sub(svg, "g", class_="edges")
    for edge in picture.edges:
        _edge(edges, edge)
    nodes = _sub(svg, "g", class_="nodes")
    for node in picture.nodes:
        _node(nodes, node, (states or {}).get(node.id))
    right = _legend(svg, picture, top)
    width, height = max(picture.width, right + 16), top + 32
    svg.set("width", f"{width:g}")
    svg.set("height", f"{height:g}")
    svg.set("viewBox", f"0 0 {width:g} {height:g}")
    ET.indent(svg)
    return "<?xml version='1.0' encoding='utf-8'?>\n" + ET.tostring(svg, encoding="unicode") + "\n"
