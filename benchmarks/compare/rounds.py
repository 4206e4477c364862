"""Interleaved measurements over the sides' processes, shared by ``run.py`` and
``benchmarks/bench_runs.py``.

Every metric takes turns between the sides (round-robin, the order rotated each round), so a
burst of load from another process on this shared machine hits every side alike. Each side
warms up before it is measured (its first cycle, its first fresh process are not counted).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from measure import compile_sources, pi_sources, time_child
from worker import Worker

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class SideSpec:
    """One side: its key, its name in the table, its module, and its PostgreSQL URL if any."""

    key: str
    label: str
    script: str
    store: str | None = None


LANGGRAPH = SideSpec("langgraph", "LangGraph", "langgraph_side.py")
PYDANTIC_AI = SideSpec("pydantic_ai", "Pydantic AI", "pydantic_ai_side.py")
PI = SideSpec("pi", "pi-recipes", "pi_side.py")


PI_MEMORY = SideSpec("pi_mem", "pi-recipes (in-memory store)", "pi_side.py", "memory")
"""The cycle outside any database: the first half of the PostgreSQL floor."""


def pi_postgres(url: str) -> SideSpec:
    return SideSpec("pi_pg", "pi-recipes (PostgreSQL)", "pi_side.py", url)


def langgraph_postgres(url: str) -> SideSpec:
    return SideSpec("langgraph_pg", "LangGraph (PostgresSaver)", "langgraph_side.py", url)


def floor_trips(url: str) -> SideSpec:
    """The cycle's six round trips with psycopg alone: the second half of the floor."""
    return SideSpec("floor_trips", "six round trips, psycopg alone", "floor_side.py", url)


def postgres_specs(url: str) -> list[SideSpec]:
    """The sides of the PostgreSQL rows: pi-recipes and LangGraph on the server, and the
    floor's two halves (the in-memory cycle, the round trips alone)."""
    return [pi_postgres(url), langgraph_postgres(url), PI_MEMORY, floor_trips(url)]


def progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _rotated(keys: Sequence[str], r: int) -> list[str]:
    """The sides in round ``r``'s order: the starting side moves on by one each round."""
    start = r % len(keys)
    return [*keys[start:], *keys[:start]]


def _turns(keys: Sequence[str], rounds: int) -> Iterator[tuple[int, str]]:
    """(round, side) in round-robin order."""
    for r in range(rounds):
        for key in _rotated(keys, r):
            yield r, key


class Bench:
    """The sides' processes of one run (a context manager) and the interleaved metrics."""

    def __init__(
        self, specs: Sequence[SideSpec], folder: Path, say: Callable[[str], None] = progress
    ) -> None:
        self.specs = {spec.key: spec for spec in specs}
        self.folder = folder
        self.say = say
        self.workers: dict[str, Worker] = {}

    def __enter__(self) -> Bench:
        compile_sources(pi_sources())  # before any side's process starts
        for spec in self.specs.values():
            self.workers[spec.key] = Worker(
                spec.key, HERE / spec.script, self.folder / spec.key, spec.store
            )
        return self

    def __exit__(self, *exc: object) -> None:
        for worker in self.workers.values():
            worker.close()

    def call(self, key: str, op: str, **args: Any) -> Any:
        return self.workers[key].call(op, **args)

    def cycles(self, keys: Sequence[str], total: int, batch: int = 10) -> dict[str, list[float]]:
        """Metric 1: ``total`` in-process cycles per side (ms), ``batch`` per turn."""
        samples: dict[str, list[float]] = {key: [] for key in keys}
        for key in keys:
            self.call(key, "cycles", n=3)  # warm-up: opens the store, fills the caches
        rounds = -(-total // batch)
        for r, key in _turns(keys, rounds):
            n = min(batch, total - r * batch)
            samples[key] += [s * 1000 for s in self.call(key, "cycles", n=n)]
            if key == keys[-1] and (r + 1) % 5 == 0:
                self.say(f"  cycles: round {r + 1}/{rounds}")
        return samples

    def fresh(self, keys: Sequence[str], count: int) -> dict[str, dict[str, list[float]]]:
        """Metric 2: ``count`` fresh processes per side that answer a paused run and resume
        it to the end: whole-process wall time and the time after imports (ms)."""
        samples: dict[str, dict[str, list[float]]] = {
            key: {"wall": [], "inner": []} for key in keys
        }
        preload: dict[str, list[str]] = {}
        for r, key in _turns(keys, count + 1):
            paused = self.call(key, "pause_for_child")
            argv = [sys.executable, str(HERE / self.specs[key].script), "resume"]
            argv += ["--store", paused["store"], "--run", paused["run_id"]]
            if paused["schema"]:
                argv += ["--schema", paused["schema"]]
            if key in preload:
                argv += ["--preload", ",".join(preload[key])]
            wall, inner, imported = time_child(argv)
            if r == 0:  # the first one warms the disk cache and tells what it imported late
                preload[key] = imported
                continue
            samples[key]["wall"].append(wall * 1000)
            samples[key]["inner"].append(inner * 1000)
        self.say(
            "  modules first imported after the side's own imports, imported before the clock "
            "from then on: "
            + ", ".join(f"{self.specs[key].label} {len(preload[key])}" for key in keys)
        )
        return samples

    def bulk(
        self, keys: Sequence[str], runs: int, rounds: int, chunk: int = 100
    ) -> dict[str, dict[str, list[float]]]:
        """Metrics 3 and 4, ``rounds`` times in a new store: create ``runs`` paused runs
        (runs/s), close the store (bytes per paused run), resume them all in the reopened store
        (runs/s). The sides take turns every ``chunk`` runs; a rate is ``runs`` over the sum of
        the chunks' times."""
        samples: dict[str, dict[str, list[float]]] = {
            key: {"create": [], "resume": [], "bytes": []} for key in keys
        }
        chunks = -(-runs // chunk)
        for r in range(rounds):
            for phase, op in (("create", "bulk_create"), ("resume", "bulk_resume")):
                seconds = dict.fromkeys(keys, 0.0)
                for c, key in _turns(keys, chunks):
                    seconds[key] += self.call(key, op, n=min(chunk, runs - c * chunk))
                for key in keys:
                    samples[key][phase].append(runs / seconds[key])
                    if phase == "create":
                        samples[key]["bytes"].append(self.call(key, "bulk_size") / runs)
            for key in keys:
                self.call(key, "bulk_end")
            self.say(f"  bulk: round {r + 1}/{rounds}")
        return samples

    def commits(self, keys: Sequence[str], n: int) -> dict[str, list[int]]:
        """Metric 7 (SQLite): commits of each of ``n`` cycles per side."""
        return {key: self.call(key, "commits", n=n) for key in keys}

    def wakes(self, keys: Sequence[str], n: int) -> dict[str, list[float]]:
        """Metric 6: answer → wake of a waiting process, ``n`` times per side (ms)."""
        samples: dict[str, list[float]] = {key: [] for key in keys}
        for r, key in _turns(keys, -(-n // 10)):
            count = min(10, n - r * 10)
            samples[key] += [s * 1000 for s in self.call(key, "wake", n=count)]
        return samples

    def xacts(self, keys: Sequence[str], n: int) -> dict[str, list[float]]:
        """Metric 7 (PostgreSQL): transactions per cycle over ``n`` cycles per side."""
        return {key: [self.call(key, "xacts", n=n)] for key in keys}


Results = dict[str, dict[str, list[float]]]
"""metric -> side key -> samples."""


@dataclass
class Plan:
    """How much of each metric to measure, and on which sides (keys of the run's sides)."""

    cycles: int = 200
    fresh: int = 20
    runs: int = 1000
    bulk_rounds: int = 3
    wakes: int = 50
    commit_cycles: int = 20
    xact_cycles: int = 50
    cycle_keys: Sequence[str] = ()
    fresh_keys: Sequence[str] = ()
    bulk_keys: Sequence[str] = ()
    commit_keys: Sequence[str] = ()
    wake_keys: Sequence[str] = ()
    xact_keys: Sequence[str] = ()


def measure_all(bench: Bench, plan: Plan) -> Results:
    """Every metric of ``plan``, one after the other, each interleaved across its sides."""
    results: Results = {}
    if plan.cycle_keys:
        bench.say(f"in-process cycles ({plan.cycles} per side)")
        results["cycle_ms"] = bench.cycles(plan.cycle_keys, plan.cycles)
    if plan.fresh_keys:
        bench.say(f"fresh processes ({plan.fresh} per side)")
        fresh = bench.fresh(plan.fresh_keys, plan.fresh)
        results["fresh_wall_ms"] = {key: fresh[key]["wall"] for key in fresh}
        results["fresh_inner_ms"] = {key: fresh[key]["inner"] for key in fresh}
    if plan.bulk_keys:
        bench.say(f"{plan.runs} paused runs, created then resumed ({plan.bulk_rounds} rounds)")
        bulk = bench.bulk(plan.bulk_keys, plan.runs, plan.bulk_rounds)
        for metric, part in (("create_rate", "create"), ("resume_rate", "resume")):
            results[metric] = {key: bulk[key][part] for key in bulk}
        results["bytes_per_run"] = {key: bulk[key]["bytes"] for key in bulk}
    if plan.commit_keys:
        bench.say(f"SQLite commits ({plan.commit_cycles} cycles per side)")
        commits = bench.commits(plan.commit_keys, plan.commit_cycles)
        results["commits"] = {key: [float(c) for c in commits[key]] for key in commits}
    if plan.wake_keys:
        bench.say(f"answer -> wake of a waiting process ({plan.wakes} per side)")
        results["wake_ms"] = bench.wakes(plan.wake_keys, plan.wakes)
    if plan.xact_keys:
        bench.say(f"PostgreSQL transactions ({plan.xact_cycles} cycles)")
        results["xacts"] = bench.xacts(plan.xact_keys, plan.xact_cycles)
    return results
