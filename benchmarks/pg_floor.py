"""How low the PostgreSQL cycle can go: the floor under issue 10's "PostgreSQL ≤ 1.5× SQLite".

Run on demand: ``.venv/bin/python benchmarks/pg_floor.py [--cycles N] [--postgres URL]``
(``psycopg`` installed, the server reachable; default the local ``test`` database).

A durable cycle of ``benchmarks/scenario.py`` (start → pause → answer → resume → finish) talks
to the store six times: it creates the run, stores the pause, reads the run and its
interactions, stores the answer and the move to ``running``, and stores the end. On PostgreSQL
each is at least one round trip to the server, and the pause and the end wait for its disk.
This prints, interleaved in rounds so all four share the machine's conditions:

- the cycle on SQLite and on PostgreSQL (pi-recipes, as ``benchmarks/compare`` measures it);
- the cycle on the in-memory store: what the cycle costs outside any database;
- the six round trips alone, with psycopg and nothing else: one-row statements in pipelined
  transactions, the same two durable, in a fresh schema of the same server
  (``compare/floor_side.py``, which ``compare/run.py`` runs as a side for its floor row).

The in-memory cycle plus the round trips alone is the least a PostgreSQL cycle can take with
this driver on this machine; divided by the SQLite cycle it is the lowest ratio reachable.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio

from interactions.store import Store, open_postgres_store, open_sqlite_store
from interactions.store.memory import MemoryStore
from recipes.runs import Runner

sys.path.insert(0, str(Path(__file__).resolve().parent / "compare"))
import pg
from floor_side import RoundTrips
from pi_side import APPROVE, INTERACTION, SCENARIO, check_finished, check_paused


def _cycle_of(store: Store) -> Callable[[], Awaitable[float]]:
    runner = Runner(store, env={})

    async def cycle() -> float:
        started = time.perf_counter()
        run_id = check_paused(await runner.start(SCENARIO, "Deploy"))
        check_finished(await runner.answer(run_id, INTERACTION, APPROVE, resume=True))
        return time.perf_counter() - started

    return cycle


def _ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=400, help="cycles per measurement")
    parser.add_argument("--rounds", type=int, default=8, help="interleaved rounds")
    parser.add_argument("--postgres", default=pg.DEFAULT_URL, help="PostgreSQL URL")
    args = parser.parse_args()
    if (why := pg.unreachable(args.postgres)) is not None:
        sys.exit(f"PostgreSQL: {why}")
    per_round = max(1, args.cycles // args.rounds)
    schema = pg.new_schema_name()
    samples: dict[str, list[float]] = {"sqlite": [], "postgres": [], "memory": [], "trips": []}
    with tempfile.TemporaryDirectory() as folder:
        sqlite = await open_sqlite_store(Path(folder) / "state.db")
        postgres = await open_postgres_store(args.postgres, schema=schema)
        memory = MemoryStore()
        trips = RoundTrips(args.postgres)
        cycles = {"sqlite": _cycle_of(sqlite), "postgres": _cycle_of(postgres),
                  "memory": _cycle_of(memory)}  # fmt: skip
        try:
            for cycle in cycles.values():  # warm up: imports, caches, prepared statements
                for _ in range(20):
                    await cycle()
            for _ in range(20):
                trips.cycle()
            for done in range(1, args.rounds + 1):
                for name, cycle in cycles.items():
                    samples[name] += [await cycle() for _ in range(per_round)]
                samples["trips"] += [trips.cycle() for _ in range(per_round)]
                print(f"  round {done}/{args.rounds}", file=sys.stderr)
        finally:
            trips.close()
            await sqlite.close()
            await postgres.close()
            pg.drop_schema(args.postgres, schema)
    sqlite_ms, postgres_ms = _ms(samples["sqlite"]), _ms(samples["postgres"])
    memory_ms, trips_ms = _ms(samples["memory"]), _ms(samples["trips"])
    floor_ms = memory_ms + trips_ms
    print(f"durable cycle, medians over {per_round * args.rounds} cycles each:")
    print(f"  SQLite                                      {sqlite_ms:6.2f} ms")
    print(f"  PostgreSQL                                  {postgres_ms:6.2f} ms"
          f"   {postgres_ms / sqlite_ms:.2f}× SQLite")  # fmt: skip
    print(f"  in-memory store (the cycle outside any db)  {memory_ms:6.2f} ms")
    print(f"  the six round trips alone, psycopg only     {trips_ms:6.2f} ms")
    print(f"  floor: in-memory + round trips              {floor_ms:6.2f} ms"
          f"   {floor_ms / sqlite_ms:.2f}× SQLite")  # fmt: skip
    print(f"  PostgreSQL / floor                          {postgres_ms / floor_ms:6.2f}×"
          "   (issue 38's goal: ≤ 1.25×)")  # fmt: skip


if __name__ == "__main__":
    anyio.run(main)
