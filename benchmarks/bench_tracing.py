"""What tracing costs the durable cycle: off, on with an in-memory exporter, on with the OTLP
exporter sending to a local receiver.

Run on demand: ``.venv/bin/python benchmarks/bench_tracing.py [--cycles N] [--rounds N]``. The
cycle is ``benchmarks/scenario.py``'s, as ``benchmarks/bench_runs.py`` measures it (start: the
scripted model calls ``deploy``, which asks for an approval, the run pauses and is stored; then
``Runner.answer(..., resume=True)``: the answer is stored, the run resumes and finishes), on a
SQLite file. The three modes take turns, round after round, on the same store. Spans are
batched (the SDK's ``BatchSpanProcessor``, as ``OTEL_*`` configuration sets it up), so the
OTLP figures include the exporter's thread (encoding, HTTP), not a round trip per span; the
receiver (``tests/otlp_receiver.py``) runs in a process of its own. Then the price of one
instrumentation call with tracing off.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from interactions.store import open_sqlite_store  # noqa: E402
from recipes import tracing  # noqa: E402
from recipes.messages import ToolCall  # noqa: E402
from recipes.runs import Runner  # noqa: E402

SCENARIO = str(ROOT / "benchmarks" / "scenario.py")


def _modes(endpoint: str) -> dict[str, tuple[object | None, object | None]]:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    memory = TracerProvider()
    memory.add_span_processor(BatchSpanProcessor(InMemorySpanExporter()))
    otlp = TracerProvider()
    otlp.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(f"{endpoint}/v1/traces")))
    meters = MeterProvider()
    return {"off": (None, None), "in-memory": (memory, meters), "otlp": (otlp, meters)}


async def cycles(runner: Runner, n: int) -> list[float]:
    times = []
    for _ in range(n):
        started = time.perf_counter()
        paused = await runner.start(SCENARIO, "Deploy")
        done = await runner.answer(paused.run_id, "int-call_1", {"approved": True}, resume=True)
        times.append(time.perf_counter() - started)
        assert done.run is not None and done.run.status == "finished", done
    return times


def off_call_ns(n: int = 200_000) -> float:
    """Nanoseconds per ``with tracing.tool_call(call)`` with tracing off."""
    tracing.configure(None)
    call = ToolCall(id="c", name="t")
    started = time.perf_counter_ns()
    for _ in range(n):
        with tracing.tool_call(call):
            pass
    return (time.perf_counter_ns() - started) / n


def serve_receiver() -> None:
    """The receiver's process: print its endpoint, serve until stdin closes, print the count
    of spans it got."""
    from tests.otlp_receiver import otlp_receiver

    with otlp_receiver() as receiver:
        print(receiver.endpoint, flush=True)
        sys.stdin.read()
        print(len(receiver.spans), flush=True)


def main(count: int, rounds: int) -> None:
    receiver = subprocess.Popen(
        [sys.executable, __file__, "--receiver"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert receiver.stdout is not None
    endpoint = receiver.stdout.readline().strip()
    samples = anyio.run(measure, endpoint, count, rounds)
    received, _ = receiver.communicate(timeout=60)
    base = statistics.median(samples["off"])
    print(f"durable cycle on SQLite, {rounds} rounds x {count} cycles per mode")
    for name, times in samples.items():
        ordered = sorted(times)
        median = statistics.median(ordered)
        p95 = ordered[max(0, round(0.95 * len(ordered)) - 1)]
        print(
            f"  tracing {name:<10} median {median * 1000:7.3f} ms   p95 {p95 * 1000:7.3f} ms"
            f"   {(median / base - 1) * 100:+6.1f} %   n={len(ordered)}"
        )
    print(f"  spans the local OTLP receiver got: {received.strip()}")
    print(f"one instrumentation call with tracing off: {off_call_ns():.0f} ns")


async def measure(endpoint: str, count: int, rounds: int) -> dict[str, list[float]]:
    """The cycles' times in seconds, by mode."""
    with tempfile.TemporaryDirectory() as folder:
        modes = _modes(endpoint)
        samples: dict[str, list[float]] = {name: [] for name in modes}
        async with await open_sqlite_store(Path(folder) / "state.db") as store:
            runner = Runner(store, env={})
            for providers in modes.values():  # warm up every mode once
                tracing.configure(*providers)
                await cycles(runner, 5)
            for _ in range(rounds):
                for name, providers in modes.items():
                    tracing.configure(*providers)
                    samples[name] += await cycles(runner, count)
            tracing.configure(None)
        for provider, _ in modes.values():
            if provider is not None:
                provider.shutdown()  # type: ignore[attr-defined]
    return samples


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=50, help="cycles per mode and round")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--receiver", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.receiver:
        serve_receiver()
    else:
        main(args.cycles, args.rounds)
