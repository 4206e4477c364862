"""The web inbox with many open questions: how long ``GET /api/me/inbox`` takes.

Run on demand: ``.venv/bin/python benchmarks/bench_inbox.py [--open N] [--requests N]``. It
pauses N runs of ``benchmarks/scenario.py`` (each waits on one approval) into a SQLite store,
starts a real ``pi-recipes serve`` on it, and times the inbox (its first page, 50 questions of
the N: every open question is sorted, only the page's are read whole), beside the runs list of
the same store (a page the store itself pages), over real HTTP. Prints the median and the 95th
percentile of each, and the server's CPU per inbox request.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scale import SCENARIO, percentile, serving

from interactions.store import open_sqlite_store
from recipes.runs import Runner


async def paused(db: Path, count: int) -> None:
    async with await open_sqlite_store(db) as store:
        runner = Runner(store, env={})
        for _ in range(count):
            await runner.start(SCENARIO, "Deploy")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--open", type=int, default=2000, help="open questions in the store")
    parser.add_argument("--requests", type=int, default=30, help="requests timed per path")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-inbox-"))
    db = folder / ".pi-recipes" / "state.db"
    anyio.run(paused, db, args.open)
    with (
        serving(folder, str(db)) as server,
        httpx.Client(base_url=server.url, headers=server.headers, timeout=60) as http,
    ):
        for path in ("/api/me/inbox", "/api/runs"):
            http.get(path).raise_for_status()  # warm
            cpu = server.cpu_seconds()
            times = []
            for _ in range(args.requests):
                started = time.perf_counter()
                http.get(path).raise_for_status()
                times.append((time.perf_counter() - started) * 1000)
            per = (server.cpu_seconds() - cpu) / args.requests * 1000
            print(
                f"{path:15} {args.open:,} open   p50 {statistics.median(times):7.1f} ms   "
                f"p95 {percentile(times, 95):7.1f} ms   server CPU {per:6.1f} ms a request"
            )


if __name__ == "__main__":
    main()
