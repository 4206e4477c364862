"""Scale-out on PostgreSQL: N paused runs answered through 1, 2 and 4 web servers on one store.

Run on demand: ``.venv/bin/python benchmarks/bench_scale.py [--runs N] [--servers 1,2,4]
[--clients C] [--postgres URL]`` (psycopg installed, the server reachable; PostgreSQL also from
``PI_RECIPES_TEST_POSTGRES``, default the local ``test`` database).

For each number of servers, in a fresh schema of the same PostgreSQL:

1. ``--runs`` runs of ``benchmarks/scenario.py`` (a tool asks for approval) are started in this
   process, through the public ``Runner``, until each has paused: they are in the store, not in
   any server's memory.
2. That many real ``pi-recipes serve`` processes start on the store (each with its default
   workers) and their resident memory is read once they are idle.
3. Every run's approval is answered over HTTP (``POST /api/runs/{id}/interactions/{iid}/answer``,
   the REST call a user's client makes), spread round-robin across the servers, ``--clients``
   requests in flight per server; the server that took the answer continues the run on its
   workers. A busy server (503) is asked again shortly after, as is an answer whose connection
   broke before its reply (the same answer is stored once); both are counted.
4. Once every run has finished: answers per second (runs over the time from the first answer
   sent to the last run finished), the p50 and p99 of answer sent → run finished (the run's
   ``updated_at`` as the store stamped its end, on this machine's clock), the CPU time the
   servers used per answer (what bounds answers/s on a machine with few cores), and each
   server's resident memory again, against its idle size (goal: within 1.2×).

Checked on the store's rows and events, and asserted (the benchmark fails otherwise): every run
finished (none stranded paused or running), each was answered once and moved from paused to
``running`` exactly once (no run continued twice), with its two legs ended, and exactly one
answer per run said ``resumed: true``.

Goals (issue 38): two servers at least 1.7× one's answers/s; memory after ≤ 1.2× idle. The
machine's load average is printed with every figure: on a shared machine they are noisy.
"""

from __future__ import annotations

import argparse
import math
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import AsyncExitStack, ExitStack, contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from urllib.parse import quote

import anyio
import httpx

from interactions.store import open_postgres_store
from recipes.runs import Runner

HERE = Path(__file__).resolve().parent
SCENARIO = str(HERE / "scenario.py")
INTERACTION = "int-call_1"
PI_RECIPES = str(Path(sys.executable).with_name("pi-recipes"))
DEFAULT_POSTGRES = "postgresql://postgres@127.0.0.1:5432/test"
MEMORY_GOAL = 1.2
TWO_SERVERS_GOAL = 1.7


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def percentile(samples: Sequence[float], q: float) -> float:
    """The nearest-rank ``q``-th percentile."""
    ordered = sorted(samples)
    return ordered[min(max(1, math.ceil(q / 100 * len(ordered))), len(ordered)) - 1]


# ---------------------------------------------------------------- the store


def sql(url: str, statement: str, *params: object) -> list[tuple[object, ...]]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        cursor = conn.execute(statement, params)
        return cursor.fetchall() if cursor.description else []


@contextmanager
def fresh_schema(url: str) -> Iterator[tuple[str, str]]:
    """A new schema: (its name, the URL whose connections use it). Dropped afterwards."""
    schema = f"pi_scale_{uuid.uuid4().hex[:12]}"
    sql(url, f'CREATE SCHEMA "{schema}"')
    sep = "&" if "?" in url else "?"
    try:
        yield schema, f"{url}{sep}options={quote(f'-csearch_path={schema}')}"
    finally:
        sql(url, f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


async def paused_runs(store_url: str, count: int, parallel: int = 4) -> list[str]:
    """Start ``count`` runs of the scenario (``parallel`` stores at once) until each pauses."""
    ids: list[str] = []

    async def start(n: int) -> None:
        async with await open_postgres_store(store_url) as store:
            runner = Runner(store, env={})
            for _ in range(n):
                result = await runner.start(SCENARIO, "Deploy")
                if result.status != "paused_waiting_human":
                    raise AssertionError(f"the run did not pause: {result!r}")
                ids.append(result.run_id)

    async with anyio.create_task_group() as tg:
        for i in range(parallel):
            tg.start_soon(start, count // parallel + (1 if i < count % parallel else 0))
    return ids


@dataclass(frozen=True)
class Checked:
    """What the store says of the runs once they are all done."""

    finished_at: dict[str, datetime]


def check_exactly_once(store_url: str, run_ids: Sequence[str]) -> Checked:
    """Assert on the store's rows and events: every run finished, answered once, continued
    once (one move from paused to ``running``), two legs ended. Returns when each finished."""
    rows = sql(
        store_url,
        """SELECT r.id, r.status, r.updated_at,
                  count(*) FILTER (WHERE e.type = 'interaction_answered'),
                  count(*) FILTER (WHERE e.type = 'run_status_changed'
                                   AND e.data->>'from' = 'paused_waiting_human'
                                   AND e.data->>'to' = 'running'),
                  count(*) FILTER (WHERE e.type = 'leg_ended')
           FROM runs r JOIN events e ON e.run_id = r.id
           WHERE r.id = ANY(%s) GROUP BY r.id, r.status, r.updated_at""",
        list(run_ids),
    )
    seen = {str(row[0]): row for row in rows}
    missing = set(run_ids) - set(seen)
    assert not missing, f"{len(missing)} runs are not in the store"
    stranded = [rid for rid, row in seen.items() if row[1] != "finished"]
    assert not stranded, f"{len(stranded)} runs stranded, e.g. {seen[stranded[0]][:2]}"
    twice = [rid for rid, row in seen.items() if row[3:] != (1, 1, 2)]
    assert not twice, (
        f"{len(twice)} runs not answered and continued exactly once: "
        f"e.g. {twice[0]} (answers, continuations, legs) = {seen[twice[0]][3:]}"
    )
    return Checked({rid: _aware(row[2]) for rid, row in seen.items()})


def _aware(value: object) -> datetime:
    if not isinstance(value, datetime) or value.tzinfo is None:
        raise AssertionError(f"updated_at is not an aware timestamp: {value!r}")
    return value


# ---------------------------------------------------------------- the servers


class Server:
    """A ``pi-recipes serve`` process: its URL, bearer token and pid."""

    def __init__(self, url: str, token: str, process: subprocess.Popen[str]) -> None:
        self.url, self.process, self.pid = url, process, process.pid
        self.headers = {"Authorization": f"Bearer {token}"}

    def cpu_seconds(self) -> float:
        """The CPU time (user and system) the server's process has used so far."""
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def check_alive(self) -> None:
        if self.process.poll() is not None:
            raise AssertionError(f"the server at {self.url} exited ({self.process.returncode})")

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        raise RuntimeError("no VmRSS")


@contextmanager
def serving(cwd: Path, store_url: str) -> Iterator[Server]:
    """Start ``pi-recipes serve`` on ``store_url`` (any free port); stop it afterwards."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PI_")}
    argv = [PI_RECIPES, "serve", SCENARIO, "--store", store_url, "--port", "0"]
    process = subprocess.Popen(
        argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env
    )
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        for line in process.stdout or ():
            lines.put(line)

    threading.Thread(target=read, daemon=True).start()
    try:
        deadline = time.monotonic() + 60
        url = ""
        while not url:
            left = deadline - time.monotonic()
            if left <= 0 or process.poll() is not None:
                raise RuntimeError(f"the server did not start (exit {process.poll()})")
            try:
                line = lines.get(timeout=min(left, 1.0))
            except queue.Empty:
                continue
            url = line.removeprefix("ready: ").strip() if line.startswith("ready: ") else ""
        token = (cwd / ".pi-recipes" / "web-token").read_text().strip()
        yield Server(url, token, process)
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


# ---------------------------------------------------------------- the answers


@dataclass
class Answered:
    sent: dict[str, float]  # run id -> wall-clock time its answer was sent
    resumed: dict[str, int]  # run id -> answers that said resumed: true
    retries: int  # answers asked again: the server was busy (503)
    lost: set[str]  # runs an answer's reply was lost for (the connection broke): asked again


async def answer_all(servers: Sequence[Server], run_ids: Sequence[str], clients: int) -> Answered:
    """Answer every run's approval, round-robin across ``servers``, ``clients`` requests in
    flight per server; a 503 (busy) is asked again shortly after, and so is an answer whose
    connection broke before its reply (the same answer again is safe: it is stored once, and
    says ``resumed`` only where it continued the run, so such a run's replies are not counted)."""
    done = Answered({}, dict.fromkeys(run_ids, 0), 0, set())
    queues = [list(run_ids[i :: len(servers)]) for i in range(len(servers))]

    async def client(server: Server, http: httpx.AsyncClient, todo: list[str]) -> None:
        while todo:
            run_id = todo.pop()
            path = f"/api/runs/{run_id}/interactions/{INTERACTION}/answer"
            done.sent[run_id] = time.time()
            for _ in range(1000):
                try:
                    reply = await http.post(path, json={"approved": True})
                except httpx.TransportError:
                    done.lost.add(run_id)
                    await anyio.sleep(0.01)
                    continue
                if reply.status_code != 503:
                    break
                done.retries += 1
                await anyio.sleep(0.01)
            if reply.status_code != 200:
                raise AssertionError(f"{server.url}{path}: {reply.status_code} {reply.text}")
            done.resumed[run_id] += bool(reply.json()["resumed"])

    async with AsyncExitStack() as stack, anyio.create_task_group() as tg:
        for server, todo in zip(servers, queues, strict=True):
            http = await stack.enter_async_context(
                httpx.AsyncClient(
                    base_url=server.url,
                    headers=server.headers,
                    timeout=120,
                    limits=httpx.Limits(max_connections=clients),
                )
            )
            for _ in range(clients):
                tg.start_soon(client, server, http, todo)
    return done


async def until_finished(store_url: str, run_ids: Sequence[str], timeout: float) -> None:
    """Wait (bounded) until no run of ``run_ids`` is left unfinished."""
    deadline = time.monotonic() + timeout
    while True:
        left = sql(
            store_url,
            "SELECT count(*) FROM runs WHERE id = ANY(%s) AND status <> 'finished'",
            list(run_ids),
        )[0][0]
        if not left:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"{left} runs still not finished after {timeout:.0f} s")
        await anyio.sleep(0.2)


@dataclass(frozen=True)
class Figures:
    servers: int
    runs: int
    rate: float
    p50_ms: float
    p99_ms: float
    retries: int
    lost: int
    cpu_ms: float  # the servers' CPU time per answer
    rss_idle: list[float]
    rss_after: list[float]
    load: str


async def scale(url: str, count: int, runs: int, clients: int, folder: Path) -> Figures:
    """One configuration: ``count`` servers (see the module docstring)."""
    with fresh_schema(url) as (_, store_url):
        async with await open_postgres_store(store_url):
            pass  # the tables, before the servers race to create them
        started = time.monotonic()
        run_ids = await paused_runs(store_url, runs)
        say(
            f"  {len(run_ids):,} paused runs created in {time.monotonic() - started:.0f} s "
            f"(load {load()})"
        )
        cwd = folder / f"servers-{count}-{uuid.uuid4().hex[:6]}"
        cwd.mkdir()
        with ExitStack() as stack:
            servers = [stack.enter_context(serving(cwd, store_url)) for _ in range(count)]
            await anyio.sleep(1)  # let them settle before reading their memory
            idle = [server.rss_mb() for server in servers]
            cpu_before = sum(server.cpu_seconds() for server in servers)
            answered = await answer_all(servers, run_ids, clients)
            await until_finished(store_url, run_ids, timeout=max(120, len(run_ids) / 10))
            for server in servers:
                server.check_alive()
            after = [server.rss_mb() for server in servers]
            cpu = sum(server.cpu_seconds() for server in servers) - cpu_before
        figures_load = load()
        checked = check_exactly_once(store_url, run_ids)
    twice = [
        rid for rid, n in answered.resumed.items() if n > 1 or (n == 0 and rid not in answered.lost)
    ]
    assert not twice, f"{len(twice)} runs were not resumed by exactly one answer"
    latencies = [checked.finished_at[rid].timestamp() - answered.sent[rid] for rid in run_ids]
    first, last = (
        min(answered.sent.values()),
        max(at.timestamp() for at in checked.finished_at.values()),
    )
    return Figures(
        servers=count,
        runs=len(run_ids),
        rate=len(run_ids) / (last - first),
        p50_ms=percentile(latencies, 50) * 1000,
        p99_ms=percentile(latencies, 99) * 1000,
        retries=answered.retries,
        lost=len(answered.lost),
        cpu_ms=cpu / len(run_ids) * 1000,
        rss_idle=idle,
        rss_after=after,
        load=figures_load,
    )


def table(rows: Sequence[Figures]) -> str:
    lines = [
        "| web servers | answers/s | vs one | p50 answer → finished | p99 | servers' CPU "
        "per answer | busy retries, lost replies | memory idle → after (MB) | ≤ 1.2× idle "
        "| load |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    one = next((f.rate for f in rows if f.servers == 1), None)
    for f in rows:
        vs = "–" if one is None else f"{f.rate / one:.2f}×"
        if f.servers == 2 and one is not None:
            vs += f" ({'holds' if f.rate / one >= TWO_SERVERS_GOAL else 'misses'} ≥ 1.7×)"
        memory = ", ".join(
            f"{a:.0f} → {b:.0f}" for a, b in zip(f.rss_idle, f.rss_after, strict=True)
        )
        holds = all(b <= MEMORY_GOAL * a for a, b in zip(f.rss_idle, f.rss_after, strict=True))
        lines.append(
            f"| {f.servers} | {f.rate:,.0f}/s | {vs} | {f.p50_ms:,.0f} ms | {f.p99_ms:,.0f} ms "
            f"| {f.cpu_ms:.1f} ms | {f.retries}, {f.lost} | {memory} "
            f"| {'yes' if holds else 'no'} | {f.load} |"
        )
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10_000, help="paused runs answered per case")
    parser.add_argument(
        "--servers", default="1,2,4", help="numbers of web servers, comma-separated"
    )
    parser.add_argument("--clients", type=int, default=8, help="requests in flight per server")
    parser.add_argument(
        "--postgres", default=os.environ.get("PI_RECIPES_TEST_POSTGRES", DEFAULT_POSTGRES)
    )
    args = parser.parse_args(argv)
    args.server_counts = [int(n) for n in args.servers.split(",")]
    if args.runs < 1 or args.clients < 1 or min(args.server_counts) < 1:
        parser.error("--runs, --clients and every --servers count must be at least 1")
    return args


async def main() -> None:
    args = parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="pi-scale-") as folder:
        for count in args.server_counts:
            say(f"{count} web server(s), {args.runs:,} runs (load {load()})")
            figures = await scale(args.postgres, count, args.runs, args.clients, Path(folder))
            say(
                f"  {figures.rate:,.0f} answers/s, p50 {figures.p50_ms:,.0f} ms "
                f"(load {figures.load})"
            )
            rows.append(figures)
    print(
        f"\n{args.runs:,} paused runs per case, {args.clients} requests in flight per server, "
        f"{os.cpu_count()} cores, load at the end {load()}; every run finished, answered and "
        "continued exactly once (checked on the store's events)\n"
    )
    print(table(rows))


if __name__ == "__main__":
    anyio.run(main)
