"""The floor's round trips: the six store round trips of a durable cycle, with psycopg alone.

A durable cycle of ``benchmarks/scenario.py`` (start → pause → answer → resume → finish) talks
to the store six times in ``pg_floor.py``'s model: it creates the run, stores the pause, reads
the run and its interactions (two reads), stores the answer and the move to ``running``, and
stores the end. Here each is one round trip with nothing but the driver: one-row statements in
pipelined transactions, the pause and the end durable (they wait for the server's disk), in a
fresh schema of the same server. The in-memory cycle (``pi_side.py`` on ``memory``) plus these
round trips is the least a PostgreSQL cycle can take with this driver on this machine: the
floor of ``run.py``'s "PostgreSQL cycle vs the floor" row, and of ``pg_floor.py``.

Run by the orchestrator as a side (``floor_side.py serve --dir D --store URL``): its only
operation is ``cycles(n)``.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from worker import side_main


class RoundTrips:
    """The cycle's six round trips with psycopg alone (a table of its own, one row per run)."""

    TRIPS = 6

    def __init__(self, url: str) -> None:
        import psycopg

        self.schema = f"pi_floor_{uuid.uuid4().hex[:12]}"
        self.conn: Any = psycopg.connect(url, autocommit=True)
        self.conn.execute(f'CREATE SCHEMA "{self.schema}"')
        self.conn.execute(f'SET search_path = "{self.schema}"')
        self.conn.execute("CREATE TABLE runs (id text PRIMARY KEY, version int, checkpoint json)")
        self.made = 0

    def _write(self, sql: str, params: tuple[object, ...], *, durable: bool) -> None:
        with self.conn.pipeline():
            self.conn.execute("BEGIN")
            if not durable:
                self.conn.execute("SET LOCAL synchronous_commit = off")
            self.conn.execute(sql, params)
            self.conn.execute("COMMIT")

    def cycle(self) -> float:
        self.made += 1
        run = f"run-{self.made}"
        started = time.perf_counter()
        self._write("INSERT INTO runs VALUES (%s, 1, '{}')", (run,), durable=False)
        self._write("UPDATE runs SET version = 2, checkpoint = %s WHERE id = %s",
                    ('{"paused": true}', run), durable=True)  # fmt: skip
        self.conn.execute("SELECT * FROM runs WHERE id = %s", (run,)).fetchone()
        self.conn.execute("SELECT * FROM runs WHERE id = %s", (run,)).fetchall()
        self._write("UPDATE runs SET version = 3 WHERE id = %s", (run,), durable=False)
        self._write("UPDATE runs SET version = 4, checkpoint = %s WHERE id = %s",
                    ('{"done": true}', run), durable=True)  # fmt: skip
        return time.perf_counter() - started

    def cycles(self, n: int) -> list[float]:
        return [self.cycle() for _ in range(n)]

    def close(self) -> None:
        self.conn.execute(f'DROP SCHEMA "{self.schema}" CASCADE')
        self.conn.close()


def _no_fresh_process(store: str, run_id: str, schema: str | None) -> None:
    raise SystemExit("the floor's round trips have no fresh-process metric")


def _side(args: Any) -> RoundTrips:
    if args.store is None:
        raise SystemExit("floor_side.py needs --store URL (a PostgreSQL server)")
    return RoundTrips(args.store)


if __name__ == "__main__":
    side_main(_side, _no_fresh_process)
