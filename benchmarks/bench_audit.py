"""The audit export of 100,000 interactions: its time and its peak memory, which must not grow
with the number of interactions.

Run on demand: ``.venv/bin/python benchmarks/bench_audit.py [--interactions N] [--per-run K]``.

It fills a SQLite store through the store's own API, in batches: each run is created and then
written once with ``update_run``, which inserts its ``--per-run`` interactions and answers
every other one in the same transaction (a run's questions are asked six seconds apart and a
new run starts every minute, so about ten runs are asking at any moment, as in a busy day),
with a ``tool_call_decided`` event; one interaction per run is an approval that needs two
people, settled by two votes. Then it exports the store with ``pi-recipes audit export`` in a
process of its own, as JSON lines and as CSV, to ``/dev/null``, and prints the time and the
peak resident memory (``wait4``'s ``ru_maxrss``) of that process, for a tenth of the
interactions (``--since``/``--until`` bound them) and for all of them: the peak should be the
same. Last it reads every row in this process with ``tracemalloc`` on and prints the peak of
what the export allocated (the Python heap above what the store holds open).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from interactions.audit import audit_rows  # noqa: E402
from interactions.store import (  # noqa: E402
    InteractionAnswer,
    NewInteraction,
    NewRun,
    NewVote,
    RunStatus,
    SQLiteStore,
    open_sqlite_store,
)

T0 = datetime(2026, 1, 5, 8, 0, tzinfo=UTC)
QUESTION = {
    "reason": "input_required",
    "message": "Which channel should the release go to?",
    "options": [{"label": "Beta", "value": "beta"}, {"label": "Stable", "value": "stable"}],
    "metadata": {"approvers": ["ada", "group:ops"]},
}
APPROVAL = {
    "reason": "tool_call",
    "message": "Deploy to prod?",
    "metadata": {"approvers": ["group:ops"], "required_approvals": 2},
}
DECIDED = {"tool": "deploy", "tool_call_id": "call-0", "decision": "ask", "by": "policy",
           "args": {"env": "prod"}, "rule": {"file": "policy.toml", "line": 3}}  # fmt: skip


def _asked_at(run: int, index: int) -> datetime:
    return T0 + timedelta(minutes=run, seconds=6 * index)


async def fill(store: SQLiteStore, interactions: int, per_run: int) -> None:
    """Write ``interactions`` interactions, ``per_run`` to a run (see the module docstring)."""
    yes = InteractionAnswer(status="resolved", payload={"answer": "beta"}, answered_by="ada",
                            via="web")  # fmt: skip
    for r in range(interactions // per_run):
        run = await store.create_run(NewRun(thread_id=f"thread-{r % 50}", ref="release.py"))
        asked = [
            NewInteraction(
                id=f"int-{i}",
                tool_call_id=f"call-{i}",
                requested_at=_asked_at(r, i),
                expires_at=_asked_at(r, i) + timedelta(days=7),
                descriptor=APPROVAL if i == 0 else QUESTION,
            )
            for i in range(per_run)
        ]
        run = await store.update_run(
            run.id,
            expected_version=run.version,
            status=RunStatus.PAUSED_WAITING_HUMAN,
            new_interactions=asked,
            answers={f"int-{i}": yes for i in range(1, per_run, 2)},
            events=[("tool_call_decided", DECIDED)],
            now=_asked_at(r, per_run),
            durable=False,
        )
        for voter in ("bo", "cy"):
            vote = NewVote(voter=voter, status="resolved", payload={"approved": True}, via="web")
            await store.cast_vote(run.id, "int-0", vote, required=2, now=_asked_at(r, 1))


def export_process(store: Path, form: str, bounds: list[str]) -> tuple[float, float, int]:
    """Run ``pi-recipes audit export`` to a file; its seconds, peak RSS (MiB) and lines."""
    out = store.with_suffix(f".{form}")
    command = [sys.executable, "-m", "hosts.cli", "audit", "export", "--store", str(store),
               "--format", form, *bounds]  # fmt: skip
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    started = time.perf_counter()
    with out.open("w") as sink:
        process = subprocess.Popen(command, stdout=sink, env=env, cwd=store.parent)
        _, status, usage = os.wait4(process.pid, 0)
    took = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"the export failed ({process.returncode})")
    with out.open("rb") as written:
        lines = sum(1 for _ in written)
    return took, usage.ru_maxrss / 1024, lines


async def traced(store: Path) -> tuple[int, float]:
    """Read every row in this process with tracemalloc on: rows read and the peak (MiB)."""
    async with await open_sqlite_store(store) as opened:
        tracemalloc.start()
        count = 0
        async for row in audit_rows(opened):
            row.json_line()
            count += 1
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return count, peak / 2**20


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--interactions", type=int, default=100_000)
    parser.add_argument("--per-run", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "audit.db"
        started = time.perf_counter()
        async with await open_sqlite_store(path) as store:
            await fill(store, args.interactions, args.per_run)
        took = time.perf_counter() - started
        total = args.interactions // args.per_run * args.per_run
        runs = total // args.per_run
        size = path.stat().st_size / 2**20
        print(f"filled {total:,} interactions in {runs:,} runs: {took:.1f} s "
              f"({total / took:,.0f}/s), {size:.0f} MiB on disk")  # fmt: skip
        tenth = [
            "--since", _asked_at(0, 0).isoformat(),
            "--until", _asked_at(runs // 10, 0).isoformat(),
        ]  # fmt: skip
        print("pi-recipes audit export (a process of its own, to a file):")
        for form in ("jsonl", "csv"):
            for label, bounds in (("a tenth", tenth), ("all", [])):
                seconds, rss, lines = export_process(path, form, bounds)
                rows = lines - (form == "csv")
                print(f"  {form:5} {label:7}: {rows:7,} rows in {seconds:6.2f} s "
                      f"({rows / seconds:8,.0f} rows/s), peak RSS {rss:6.1f} MiB")  # fmt: skip
        count, peak = await traced(path)
        print(f"in-process, tracemalloc on: {count:,} rows, peak Python allocations "
              f"{peak:.2f} MiB")  # fmt: skip


if __name__ == "__main__":
    anyio.run(main)
