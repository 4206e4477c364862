"""Answer -> wake: how soon a waiting ``await_answers`` sees an answer given by another process.

Run on demand: ``.venv/bin/python benchmarks/bench_async.py [--samples N] [--postgres DSN]``
(the DSN defaults to ``PI_RECIPES_TEST_POSTGRES``; without one only SQLite is measured).

A waiter process runs the wait the ``await_answers`` node runs
(``recipes.graph.runtime._asyncq.wait_for_answers``: level-triggered on the store, a short poll on
SQLite, LISTEN/NOTIFY on PostgreSQL) on a run with one pending async question. This process
answers it through the runner, as ``pi-recipes runs answer`` does, at a random moment after the
waiter started waiting; the sample is the wall-clock time from just before the answer call to
the waiter waking with every question answered. It prints the median and the 95th percentile
per store; the goals are 50 ms on SQLite and 10 ms on PostgreSQL (Iterion polls every 5 s).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import timedelta
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from interactions.async_questions import async_interaction  # noqa: E402
from interactions.store import NewRun, Store, utc_now  # noqa: E402
from recipes.runs import Runner  # noqa: E402

GOALS = {"sqlite": 0.050, "postgres": 0.010}
WAIT_BOUND = 30.0


async def _open(kind: str, where: str) -> Store:
    if kind == "sqlite":
        from interactions.store import open_sqlite_store

        return await open_sqlite_store(where)
    from interactions.store import open_postgres_store

    dsn, schema = where.rsplit("#", 1)
    return await open_postgres_store(dsn, schema=schema)


async def _wait(kind: str, where: str) -> None:
    """The waiter: for each run id read on stdin, say ``ready``, wait, print the wake time."""
    from recipes.graph.runtime._asyncq import wait_for_answers

    async with await _open(kind, where) as store:
        stdin = anyio.wrap_file(sys.stdin)
        async for line in stdin:
            run_id = line.strip()
            print("ready", flush=True)
            found = await wait_for_answers(store, run_id, timeout=WAIT_BOUND)
            woke = time.time_ns()
            print(woke if found is not None else "timeout", flush=True)


async def _question(store: Store, n: int) -> tuple[str, str]:
    run = await store.create_run(NewRun(id=f"run-bench-{n}", thread_id="t", kind="graph", ref="x"))
    iid = f"{run.id}_draft_async_1"
    asked = async_interaction(iid, "Name?", node_id="draft",
                              expires_at=utc_now() + timedelta(days=1))  # fmt: skip
    await store.update_run(run.id, expected_version=run.version, new_interactions=[asked])
    return run.id, iid


def _waiter(kind: str, where: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, __file__, "--waiter", kind, where],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT,
    )  # fmt: skip


async def _measure(kind: str, where: str, samples: int) -> list[float]:
    waiter = await anyio.to_thread.run_sync(_waiter, kind, where)
    assert waiter.stdin is not None and waiter.stdout is not None
    latencies: list[float] = []
    try:
        async with await _open(kind, where) as store:
            runner = Runner(store, env={}, host="bench")
            for n in range(samples):
                run_id, iid = await _question(store, n)
                waiter.stdin.write(run_id + "\n")
                waiter.stdin.flush()
                assert await anyio.to_thread.run_sync(waiter.stdout.readline) == "ready\n"
                await anyio.sleep(random.uniform(0.02, 0.06))  # well inside the wait
                started = time.time_ns()
                await runner.answer(run_id, iid, {"answer": "Pipette"})
                woke = (await anyio.to_thread.run_sync(waiter.stdout.readline)).strip()
                if woke == "timeout":
                    raise SystemExit(f"the waiter did not wake for {run_id}")
                latencies.append((int(woke) - started) / 1e9)
    finally:
        waiter.stdin.close()
        await anyio.to_thread.run_sync(waiter.wait, 10)
    return latencies


def _report(kind: str, samples: list[float]) -> None:
    ordered = sorted(samples)
    p50 = statistics.median(ordered)
    p95 = ordered[max(0, round(0.95 * len(ordered)) - 1)]
    goal = GOALS[kind]
    verdict = "meets" if p50 <= goal else "misses"
    print(
        f"{kind:<9} answer -> wake   p50 {p50 * 1000:7.2f} ms   p95 {p95 * 1000:7.2f} ms   "
        f"n={len(ordered)}   ({verdict} the {goal * 1000:.0f} ms goal at p50)"
    )


def _drop(dsn: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


async def bench(samples: int, dsn: str | None) -> None:
    with tempfile.TemporaryDirectory() as folder:
        _report("sqlite", await _measure("sqlite", str(Path(folder) / "state.db"), samples))
    if not dsn:
        print("postgres  skipped: give --postgres DSN (or set PI_RECIPES_TEST_POSTGRES)")
        return
    schema = f"pi_bench_{uuid.uuid4().hex[:12]}"
    try:
        _report("postgres", await _measure("postgres", f"{dsn}#{schema}", samples))
    finally:
        _drop(dsn, schema)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument("--postgres", default=os.environ.get("PI_RECIPES_TEST_POSTGRES"))
    parser.add_argument("--waiter", nargs=2, metavar=("KIND", "WHERE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.waiter:
        anyio.run(_wait, *args.waiter)
    else:
        anyio.run(bench, args.samples, args.postgres)


if __name__ == "__main__":
    main()
