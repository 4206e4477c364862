"""A :class:`Picture` as Mermaid ``flowchart`` text, for docs: each node with its kind's shape
and colour, each edge with its label, edges that go back dotted. The nodes' positions are
Mermaid's own."""

from __future__ import annotations

from typing import assert_never

from recipes.graph.picture._model import NodeKind, Picture, PictureNode

__all__ = ["to_mermaid"]

_CLASSES = {
    "agent": "fill:#e8f0fe,stroke:#1a73e8", "judge": "fill:#f3e8fd,stroke:#8430ce",
    "human": "fill:#fef7e0,stroke:#e37400",
    "await_answers": "fill:#fff8c5,stroke:#b06000,stroke-dasharray:5 3",
    "compute": "fill:#e6f4ea,stroke:#188038", "tool": "fill:#e4f7fb,stroke:#007b83",
    "router": "fill:#f1f3f4,stroke:#5f6368", "fan_out": "fill:#f1f3f4,stroke:#5f6368",
    "done": "fill:#188038,stroke:#0d652d,color:#ffffff",
    "fail": "fill:#c5221f,stroke:#a50e0e,color:#ffffff",
}  # fmt: skip


def _text(text: str) -> str:
    """``text`` inside a Mermaid string: its quotes, angle brackets and ``#`` as entities."""
    for plain, entity in (("#", "#35;"), ('"', "#quot;"), ("<", "#lt;"), (">", "#gt;")):
        text = text.replace(plain, entity)
    return text


def node_id(name: str) -> str:
    """A node's Mermaid id: its name behind ``n_`` (``end``, say, is a Mermaid keyword)."""
    return f"n_{name}"


def _shape(kind: NodeKind, label: str) -> str:
    match kind:
        case "agent":
            return f'("{label}")'
        case "judge":
            return f'{{{{"{label}"}}}}'
        case "human":
            return f'(["{label}"])'
        case "await_answers":
            return f'[/"{label}"\\]'
        case "compute":
            return f'["{label}"]'
        case "tool":
            return f'[["{label}"]]'
        case "router" | "fan_out":
            return f'{{"{label}"}}'
        case "done" | "fail":
            return f'((("{label}")))' if kind == "done" else f'(("{label}"))'
        case _:
            assert_never(kind)


def _label(node: PictureNode) -> str:
    lines = [node.label, node.detail, node.routes]
    return "<br/>".join(_text(line) for line in lines if line)


def to_mermaid(picture: Picture) -> str:
    """``picture`` as a Mermaid ``flowchart TD`` (top down), ending in a newline."""
    out = ["flowchart TD"]
    if picture.workflow:
        out.insert(0, f"%% workflow {picture.workflow}")
    for node in picture.nodes:
        out.append(f"  {node_id(node.id)}{_shape(node.kind, _label(node))}")
    entry = next((n for n in picture.nodes if n.entry), None)
    if entry is not None:
        out.append(f'  start(("start")) --> {node_id(entry.id)}')
    for edge in picture.edges:
        arrow = "-.->" if edge.back else "-->"
        label = f'|"{_text(edge.label)}"|' if edge.label else ""
        out.append(f"  {node_id(edge.source)} {arrow}{label} {node_id(edge.target)}")
    for kind in _CLASSES:
        members = [node_id(n.id) for n in picture.nodes if n.kind == kind]
        if members:
            out.append(f"  classDef {kind} {_CLASSES[kind]}")
            out.append(f"  class {','.join(members)} {kind}")
    return "\n".join(out) + "\n"
