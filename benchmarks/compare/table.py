"""The tables printed at the end of a run (Markdown, so they paste into the README as they are).

Every number is a median over its samples unless the row says p95. "pi-recipes / best anchor"
divides pi-recipes' median by the best of LangGraph's and Pydantic AI's medians in the same
run (the lower time or size, the higher rate); the goal is the issue's (issue 38), on that
ratio. The PostgreSQL rows divide pi-recipes' PostgreSQL cycle by LangGraph's ``PostgresSaver``
cycle, and by the floor: the in-memory cycle plus the six round trips alone (``floor_side.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from measure import median, percentile
from rounds import Results

ANCHORS = ("langgraph", "pydantic_ai")
SIDES = (*ANCHORS, "pi")


@dataclass(frozen=True)
class Row:
    """A metric compared with the anchors: its label, results key, unit, and goal ratio."""

    label: str
    metric: str
    unit: str
    higher_is_better: bool
    goal: float


def compare_rows(runs: int) -> list[Row]:
    return [
        Row("in-process durable cycle (SQLite)", "cycle_ms", "ms", False, 0.25),
        Row("fresh process: answer + resume, whole process", "fresh_wall_ms", "ms", False, 0.3),
        Row("same, excluding imports", "fresh_inner_ms", "ms", False, 0.35),
        Row(f"create {runs:,} paused runs", "create_rate", "runs/s", True, 4.0),
        Row(f"resume {runs:,} paused runs", "resume_rate", "runs/s", True, 4.0),
        Row(f"bytes on disk per paused run ({runs:,} paused)", "bytes_per_run", "B", False, 0.7),
    ]


def number(value: float, unit: str) -> str:
    if unit == "ms":
        return f"{value:.1f} ms" if value < 100 else f"{value:,.0f} ms"
    if unit == "runs/s":
        return f"{value:,.0f}/s"
    if unit == "B":
        return f"{value:,.0f} B"
    return f"{value:.2f}".rstrip("0").rstrip(".")


def _markdown(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _cell(results: Results, metric: str, key: str, show: Callable[[list[float]], str]) -> str:
    samples = results.get(metric, {}).get(key)
    return show(samples) if samples else "–"


HEADER = ["metric", "LangGraph", "Pydantic AI", "pi-recipes", "pi / best anchor", "goal", "holds"]

WAKE_GOAL_MS = 3.0
"""Answer → wake of a waiting process on SQLite, p50 (issue 38)."""
PG_VS_LANGGRAPH = 0.3
"""pi-recipes' PostgreSQL cycle over LangGraph's ``PostgresSaver`` cycle (issue 38)."""
PG_VS_FLOOR = 1.25
"""pi-recipes' PostgreSQL cycle over the floor (issue 38)."""


def _verdict(holds: bool) -> str:
    return "yes" if holds else "no"


def compare_table(results: Results, runs: int) -> str:
    """The issue's table: each side's median, pi-recipes' ratio to the best anchor, the goal."""
    rows = []
    for row in compare_rows(runs):
        sides = results.get(row.metric, {})
        medians = {key: median(samples) for key, samples in sides.items() if samples}
        cells = [number(medians[key], row.unit) if key in medians else "–" for key in SIDES]
        anchors = [medians[key] for key in ANCHORS if key in medians]
        if not anchors or "pi" not in medians:
            rows.append([row.label, *cells, "–", "", ""])
            continue
        best = max(anchors) if row.higher_is_better else min(anchors)
        ratio = medians["pi"] / best
        holds = ratio >= row.goal if row.higher_is_better else ratio <= row.goal
        goal = f"{'≥' if row.higher_is_better else '≤'} {row.goal:g}×"
        rows.append([row.label, *cells, f"{ratio:.2f}×", goal, _verdict(holds)])
    return _markdown(HEADER, rows + _pi_rows(results))


def _pi_rows(results: Results) -> list[list[str]]:
    """The PostgreSQL rows, the rows only pi-recipes has (a waiting process), and the commit
    counts."""
    rows: list[list[str]] = []
    sides = results.get("cycle_ms", {})
    cycles = {key: median(samples) for key, samples in sides.items() if samples}
    if "pi_pg" in cycles and "langgraph_pg" in cycles:
        lg, ours = cycles["langgraph_pg"], cycles["pi_pg"]
        ratio = ours / lg
        rows.append([
            "in-process durable cycle (PostgreSQL; LangGraph: PostgresSaver)",
            number(lg, "ms"), "–", number(ours, "ms"), f"{ratio:.2f}×",
            f"≤ {PG_VS_LANGGRAPH:g}×", _verdict(ratio <= PG_VS_LANGGRAPH),
        ])  # fmt: skip
    if "pi_pg" in cycles and "pi_mem" in cycles and "floor_trips" in cycles:
        floor = cycles["pi_mem"] + cycles["floor_trips"]
        ratio = cycles["pi_pg"] / floor
        label = (
            f"PostgreSQL cycle vs the floor: {number(floor, 'ms')} ("
            f"{number(cycles['pi_mem'], 'ms')} in memory + {number(cycles['floor_trips'], 'ms')} "
            "for six round trips)"
        )
        rows.append([
            label, "–", "–", number(cycles["pi_pg"], "ms"), f"{ratio:.2f}× floor",
            f"≤ {PG_VS_FLOOR:g}×", _verdict(ratio <= PG_VS_FLOOR),
        ])  # fmt: skip
    if "pi_pg" in cycles and "pi" in cycles:
        ratio = cycles["pi_pg"] / cycles["pi"]
        label = "PostgreSQL cycle vs our SQLite cycle"
        rows.append([label, "–", "–", f"{ratio:.2f}×", "", "", ""])
    wake = results.get("wake_ms", {}).get("pi")
    if wake:
        p50, p95 = percentile(wake, 50), percentile(wake, 95)
        label = "answer → wake of a waiting process, SQLite"
        goal = f"≤ {WAKE_GOAL_MS:g} ms"
        rows.append(
            [f"{label} p50", "–", "–", number(p50, "ms"), "", goal, _verdict(p50 <= WAKE_GOAL_MS)]
        )
        rows.append([f"{label} p95", "–", "–", number(p95, "ms"), "", "", ""])
    if results.get("commits"):
        counts = [_cell(results, "commits", key, lambda s: f"{median(s):g}") for key in SIDES]
        rows.append(["SQLite commits (fsyncs) per cycle", *counts, "", "", ""])
    xacts = results.get("xacts", {}).get("pi_pg")
    if xacts:
        label = "PostgreSQL transactions per cycle"
        rows.append([label, "–", "–", f"{median(xacts):.1f}", "", "", ""])
    return rows


def pi_table(results: Results) -> str:
    """pi-recipes alone, SQLite beside PostgreSQL (``benchmarks/bench_runs.py``)."""
    header = ["metric (pi-recipes)", "SQLite", "PostgreSQL"]
    stores = ("pi", "pi_pg")

    def med(unit: str) -> Callable[[list[float]], str]:
        return lambda samples: number(median(samples), unit)

    def pct(q: float) -> Callable[[list[float]], str]:
        return lambda samples: number(percentile(samples, q), "ms")

    lines: list[tuple[str, str, Callable[[list[float]], str]]] = [
        ("in-process durable cycle", "cycle_ms", med("ms")),
        ("in-process durable cycle, p95", "cycle_ms", pct(95)),
        ("fresh process: answer + resume, whole process", "fresh_wall_ms", med("ms")),
        ("same, excluding imports", "fresh_inner_ms", med("ms")),
        ("create paused runs", "create_rate", med("runs/s")),
        ("resume paused runs", "resume_rate", med("runs/s")),
        ("bytes per paused run (SQLite: files; PostgreSQL: tables)", "bytes_per_run", med("B")),
        ("answer → wake of a waiting process, p50", "wake_ms", pct(50)),
        ("answer → wake of a waiting process, p95", "wake_ms", pct(95)),
        ("SQLite commits (fsyncs) per cycle", "commits", lambda s: f"{median(s):g}"),
        ("PostgreSQL transactions per cycle", "xacts", lambda s: f"{median(s):.1f}"),
    ]
    rows = [
        [label, *(_cell(results, metric, key, show) for key in stores)]
        for label, metric, show in lines
    ]
    cycles = results.get("cycle_ms", {})
    if cycles.get("pi") and cycles.get("pi_pg"):
        ratio = median(cycles["pi_pg"]) / median(cycles["pi"])
        rows.append(["PostgreSQL cycle vs SQLite cycle", "", f"{ratio:.2f}×"])
    return _markdown(header, rows)
