"""How fast a durable run pauses and resumes on the embedded SQLite store.

Run on demand: ``.venv/bin/python benchmarks/bench_runs.py [--runs N]``. It prints the time per
start-to-pause, per resume-to-finish, and per ask decision (the channel chain alone), with
the median and the 95th percentile over N runs, and the store's size per run.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import anyio
from ag_ui.core import ResumeEntry

from interactions import ask_user_question
from interactions.store import open_sqlite_store
from interactions.testing.dialogs import StaticToolContext
from recipes.runs import Runner

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


async def bench(runs: int) -> None:
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
                await runner.resume(paused.run_id, [approve])
                resumes.append(time.perf_counter() - started)
        size = _folder_size(Path(folder))
    _report("start -> pause", pauses)
    _report("two resumes -> finished", resumes)
    print(f"{'store size per run':<28} {size / runs / 1024:8.1f} KiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=200)
    anyio.run(bench, parser.parse_args().runs)


if __name__ == "__main__":
    main()
