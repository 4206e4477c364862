"""The outline of each kind of node, as SVG path data: drawn alike in the SVG file and on the
page (which takes the path from the picture's JSON)."""

from __future__ import annotations

from typing import assert_never

from recipes.graph.picture._model import NodeKind

__all__ = ["outline"]


def _n(value: float) -> str:
    return f"{round(value, 1):g}"


def _polygon(points: list[tuple[float, float]]) -> str:
    head, *rest = points
    return f"M{_n(head[0])},{_n(head[1])} " + " ".join(f"L{_n(x)},{_n(y)}" for x, y in rest) + " Z"


def _rounded(x: float, y: float, w: float, h: float, r: float) -> str:
    r = min(r, w / 2, h / 2)
    return (
        f"M{_n(x + r)},{_n(y)} H{_n(x + w - r)} A{_n(r)},{_n(r)} 0 0 1 {_n(x + w)},{_n(y + r)} "
        f"V{_n(y + h - r)} A{_n(r)},{_n(r)} 0 0 1 {_n(x + w - r)},{_n(y + h)} H{_n(x + r)} "
        f"A{_n(r)},{_n(r)} 0 0 1 {_n(x)},{_n(y + h - r)} V{_n(y + r)} "
        f"A{_n(r)},{_n(r)} 0 0 1 {_n(x + r)},{_n(y)} Z"
    )


def outline(kind: NodeKind, x: float, y: float, w: float, h: float) -> str:
    """The outline of a ``kind`` node in the box at ``x``, ``y`` (top left), ``w`` × ``h``:
    an agent a rounded box; a judge a rounder one; a person's gate (``human``) a pill;
    ``await_answers`` an octagon; ``compute`` a plain box; ``tool`` a box with a cut corner;
    a router a diamond-ended box; ``done`` and ``fail`` small pills (filled)."""
    cut = min(14.0, h / 2)
    match kind:
        case "agent":
            return _rounded(x, y, w, h, 10)
        case "judge":
            return _rounded(x, y, w, h, 18)
        case "human":
            return _rounded(x, y, w, h, h / 2)
        case "await_answers":
            c = cut * 0.7
            return _polygon([(x + c, y), (x + w - c, y), (x + w, y + c), (x + w, y + h - c),
                             (x + w - c, y + h), (x + c, y + h), (x, y + h - c),
                             (x, y + c)])  # fmt: skip
        case "compute":
            return _rounded(x, y, w, h, 2)
        case "tool":
            return _polygon([(x, y), (x + w - cut, y), (x + w, y + cut), (x + w, y + h),
                             (x, y + h)])  # fmt: skip
        case "router" | "fan_out":
            return _polygon([(x + h / 2, y), (x + w - h / 2, y), (x + w, y + h / 2),
                             (x + w - h / 2, y + h), (x + h / 2, y + h),
                             (x, y + h / 2)])  # fmt: skip
        case "done" | "fail":
            return _rounded(x, y, w, h, h / 2)
        case _:
            assert_never(kind)
