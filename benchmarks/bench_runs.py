"""How fast pi-recipes' durable runs pause and resume, on SQLite and on PostgreSQL.

Run on demand: ``.venv/bin/python benchmarks/bench_runs.py [--cycles N] [--runs N]``. It prints
the pieces of the hot path (an ask decision alone; start-to-pause and resumes of
``examples/release.py``), then the table of issue 10 for pi-recipes alone, SQLite beside
PostgreSQL: the in-process durable cycle of ``benchmarks/scenario.py``, a fresh process that
answers and resumes, creating and resuming many paused runs, bytes per paused run, answer →
wake of a waiting process, SQLite commits and PostgreSQL transactions per cycle. Those are
measured by the pi-recipes side of ``benchmarks/compare`` (same code, same method; see
``benchmarks/compare/measure.py``), interleaved between the two stores. PostgreSQL
(``--postgres URL``, default the local ``test`` database, a fresh schema) is skipped with a
message if unreachable. ``benchmarks/compare/run.py`` puts the same numbers beside LangGraph's
and Pydantic AI's.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
from ag_ui.core import ResumeEntry

from interactions import ask_user_question
from interactions.store import open_sqlite_store
from interactions.testing.dialogs import StaticToolContext
from recipes.runs import Runner

sys.path.insert(0, str(Path(__file__).resolve().parent / "compare"))
import pg
from rounds import PI, Bench, Plan, measure_all, pi_postgres, progress
from table import pi_table

RELEASE = str(Path(__file__).resolve().parent.parent / "examples" / "release.py")


def _report(name: str, samples: list[float]) -> None:
    ordered = sorted(samples)
    p95 = ordered[max(0, round(0.95 * len(ordered)) - 1)]
    print(
        f"{name:<28} median {statistics.median(ordered) * 1000:8.3f} ms"
        f"   p95 {p95 * 1000:8.3f} ms   n={len(ordered)}"
    )


def _folder_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.iterdir())


async def pieces(runs: int) -> None:
    """The hot path's pieces: one ask decision, and the release example's legs on SQLite."""
    ctx = StaticToolContext()
    env = {"PI_INTERRUPT_RESUME": "1"}
    asks = []
    for n in range(runs * 10):
        started = time.perf_counter()
        await ask_user_question(
            "Which?", options=["a", "b"], tool_call_id=f"c{n}", ctx=ctx, env=env
        )
        asks.append(time.perf_counter() - started)
    _report("ask decision (interrupt)", asks)

    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "state.db"
        async with await open_sqlite_store(db) as store:
            runner = Runner(store, env={})
            pauses, resumes = [], []
            for _ in range(runs):
                started = time.perf_counter()
                paused = await runner.start(RELEASE, "Release v1.0.0")
                pauses.append(time.perf_counter() - started)
                started = time.perf_counter()
                entry = ResumeEntry(
                    interrupt_id="int-call_channel", status="resolved", payload={"answer": "beta"}
                )
                await runner.resume(paused.run_id, [entry])
                approve = ResumeEntry(
                    interrupt_id="int-call_publish", status="resolved", payload={"approved": True}
                )
                finished = await runner.resume(paused.run_id, [approve])
                assert finished.status == "finished", finished
                resumes.append(time.perf_counter() - started)
        size = _folder_size(Path(folder))
    _report("start -> pause", pauses)
    _report("two resumes -> finished", resumes)
    print(f"{'store size per run':<28} {size / runs / 1024:8.1f} KiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cycles", type=int, default=200, help="cycles (and pieces) per store")
    parser.add_argument("--fresh", type=int, default=20, help="fresh processes per store")
    parser.add_argument("--runs", type=int, default=1000, help="paused runs created, resumed")
    parser.add_argument("--bulk-rounds", type=int, default=3)
    parser.add_argument("--wakes", type=int, default=50)
    parser.add_argument("--postgres", default=pg.DEFAULT_URL, help="PostgreSQL URL")
    parser.add_argument("--no-postgres", action="store_true")
    args = parser.parse_args()
    anyio.run(pieces, args.cycles)

    specs = [PI]
    why_not = "--no-postgres" if args.no_postgres else pg.unreachable(args.postgres)
    if why_not:
        progress(f"PostgreSQL skipped: {why_not}")
    else:
        specs.append(pi_postgres(args.postgres))
    keys = [spec.key for spec in specs]
    plan = Plan(
        cycles=args.cycles,
        fresh=args.fresh,
        runs=args.runs,
        bulk_rounds=args.bulk_rounds,
        wakes=args.wakes,
        cycle_keys=keys,
        fresh_keys=keys,
        bulk_keys=keys,
        commit_keys=["pi"],
        wake_keys=keys,
        xact_keys=keys[1:],
    )
    with (
        tempfile.TemporaryDirectory(prefix="pi-bench-") as folder,
        Bench(specs, Path(folder)) as bench,
    ):
        results = measure_all(bench, plan)
    print(f"\n{args.runs:,} paused runs x {args.bulk_rounds} rounds; medians unless p95\n")
    print(pi_table(results))


if __name__ == "__main__":
    main()
