"""pi-recipes beside LangGraph and Pydantic AI: one durable approval round trip, measured alike.

The scenario, the same on every side and with no LLM: a tool asks for approval, the run pauses
and is stored in SQLite, the answer arrives, the run resumes and finishes. Each side runs in its
own process (``langgraph_side.py``, ``pydantic_ai_side.py``, ``pi_side.py``); every metric takes
turns between them in one run; every cycle asserts that the run paused and finished. At the end
it prints the issue's table: each side's median, pi-recipes' ratio to the best anchor, the goal
and whether it holds.

On PostgreSQL the same cycle is measured, interleaved with the others, for pi-recipes and for
LangGraph's ``PostgresSaver`` (the same agent loop as its SQLite side) on the same server, and
for the floor of ``benchmarks/pg_floor.py``: the cycle on the in-memory store plus the cycle's six
round trips with psycopg alone (``floor_side.py``). Two rows compare them: pi-recipes' PostgreSQL
cycle over LangGraph's, and over the floor.

Set up once (the anchors are not dependencies of pi-recipes)::

    python3 -m venv .venv-bench
    .venv-bench/bin/pip install -e . -r benchmarks/compare/requirements.txt

then ``.venv-bench/bin/python benchmarks/compare/run.py [--cycles N]``. PostgreSQL (for the
PostgreSQL rows and the transaction count) is skipped with a message if unreachable.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

import pg
from rounds import LANGGRAPH, PI, PYDANTIC_AI, Bench, Plan, measure_all, postgres_specs, progress
from table import compare_table

NEEDED = {
    "langgraph.checkpoint.sqlite": "langgraph-checkpoint-sqlite",
    "langgraph.checkpoint.postgres": "langgraph-checkpoint-postgres",
    "pydantic_ai": "pydantic-ai-slim",
    "recipes.runs": "pi-recipes",
}
VERSIONS = (
    "langgraph",
    "langgraph-checkpoint-sqlite",
    "langgraph-checkpoint-postgres",
    "pydantic-ai-slim",
    "pi-recipes",
)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cycles", type=int, default=200, help="in-process cycles per side")
    parser.add_argument("--fresh", type=int, default=20, help="fresh processes per side")
    parser.add_argument("--runs", type=int, default=1000, help="paused runs created, resumed")
    parser.add_argument("--bulk-rounds", type=int, default=3, help="rounds of --runs per side")
    parser.add_argument("--wakes", type=int, default=50, help="answer-to-wake samples")
    parser.add_argument("--commit-cycles", type=int, default=20, help="cycles whose commits count")
    parser.add_argument("--xact-cycles", type=int, default=50, help="PostgreSQL cycles counted")
    parser.add_argument("--postgres", default=pg.DEFAULT_URL, help="PostgreSQL URL")
    parser.add_argument("--no-postgres", action="store_true", help="skip the PostgreSQL rows")
    parser.add_argument("--keep", type=Path, help="keep the stores in this folder")
    args = parser.parse_args(argv)
    for name in ("cycles", "fresh", "runs", "bulk_rounds", "wakes", "commit_cycles", "xact_cycles"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    return args


def missing() -> list[str]:
    return [
        package for module, package in NEEDED.items() if importlib.util.find_spec(module) is None
    ]


def load_average() -> str:
    """The 1, 5 and 15-minute load averages, as ``1.2/0.8/0.5``."""
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def conditions(args: argparse.Namespace, load_at_start: str) -> str:
    """One line that says what was measured where."""
    versions = ", ".join(f"{name} {version(name)}" for name in VERSIONS)
    return (
        f"{versions}; Python {platform.python_version()}, {os.cpu_count()} cores, "
        f"load {load_at_start} at the start, {load_average()} at the end; "
        f"{args.cycles} cycles, {args.fresh} fresh processes, {args.runs:,} runs x "
        f"{args.bulk_rounds} per side"
    )


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if absent := missing():
        print(
            f"missing: {', '.join(absent)}. Install the benchmark's own environment:\n"
            "  python3 -m venv .venv-bench && "
            ".venv-bench/bin/pip install -e . -r benchmarks/compare/requirements.txt",
            file=sys.stderr,
        )
        return 2
    specs = [LANGGRAPH, PYDANTIC_AI, PI]
    anchors_and_pi = [spec.key for spec in specs]
    why_not = "--no-postgres" if args.no_postgres else pg.unreachable(args.postgres)
    if why_not:
        progress(f"PostgreSQL rows skipped: {why_not}")
    else:
        specs += postgres_specs(args.postgres)
    plan = Plan(
        cycles=args.cycles,
        fresh=args.fresh,
        runs=args.runs,
        bulk_rounds=args.bulk_rounds,
        wakes=args.wakes,
        commit_cycles=args.commit_cycles,
        xact_cycles=args.xact_cycles,
        cycle_keys=[spec.key for spec in specs],
        fresh_keys=anchors_and_pi,
        bulk_keys=anchors_and_pi,
        commit_keys=anchors_and_pi,
        wake_keys=["pi"],
        xact_keys=[] if why_not else ["pi_pg"],
    )
    started, load_at_start = time.monotonic(), load_average()
    progress(f"load average {load_at_start}")
    with tempfile.TemporaryDirectory(prefix="pi-bench-") as scratch:
        folder = args.keep or Path(scratch)
        with Bench(specs, folder) as bench:
            results = measure_all(bench, plan)
    print(f"\n{conditions(args, load_at_start)}; {time.monotonic() - started:.0f} s\n")
    print(compare_table(results, args.runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
