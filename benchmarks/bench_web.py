"""The web host's live updates: how soon an answer shows on another connected page, and what
500 idle WebSocket clients cost.

Run on demand: ``.venv/bin/python benchmarks/bench_web.py [--runs N] [--clients N]
[--postgres URL]`` (PostgreSQL also from ``PI_RECIPES_TEST_POSTGRES``). It starts real
``pi-recipes serve`` processes on free ports and measures with WebSocket clients (the page's own
transport):

1. answer -> update on another page: page A answers an open question over ``/ws``; the time
   until page B (subscribed to every run) gets ``interrupt.resolved``. Both pages on one
   server, and page A on a second server process on the same store (the store-wide feed:
   SQLite's poll, PostgreSQL's ``NOTIFY``). Median and 95th percentile over N answers.
2. N idle clients: the server's resident memory before and after they connect, and the
   fan-out of one answer (until the last of them has ``interrupt.resolved``).

Goals (issue "The web host"): p50 <= 50 ms on PostgreSQL, <= 1 s on SQLite; <= 50 MB for 500
clients.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from urllib.parse import quote

import anyio
import httpx
from websockets.asyncio.client import ClientConnection, connect

RELEASE = str(Path(__file__).resolve().parent.parent / "examples" / "release.py")
PI_RECIPES = str(Path(sys.executable).with_name("pi-recipes"))
PAUSED = '"to":"paused_waiting_human"'


def _answer(frame_id: str, run_id: str) -> dict[str, object]:
    return {
        "type": "answer",
        "id": frame_id,
        "run_id": run_id,
        "interaction_id": "int-call_channel",
        "payload": {"answer": "beta"},
    }


def _report(name: str, samples: list[float]) -> None:
    ordered = sorted(samples)
    p95 = ordered[max(0, round(0.95 * len(ordered)) - 1)]
    print(
        f"{name:<44} p50 {statistics.median(ordered) * 1000:8.2f} ms"
        f"   p95 {p95 * 1000:8.2f} ms   n={len(ordered)}"
    )


class Server:
    def __init__(self, url: str, token: str, pid: int) -> None:
        self.url, self.token, self.pid = url, token, pid
        self.ws = url.replace("http://", "ws://") + "ws"
        self.headers = {"Authorization": f"Bearer {token}"}

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        raise RuntimeError("no VmRSS")


@contextmanager
def serving(cwd: Path, store: str) -> Iterator[Server]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PI_")}
    process = subprocess.Popen(
        [PI_RECIPES, "serve", RELEASE, "--store", store, "--port", "0", "--workers", "8"],
        cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
    )  # fmt: skip
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        for line in process.stdout or ():
            lines.put(line)

    threading.Thread(target=read, daemon=True).start()
    try:
        deadline = time.monotonic() + 30
        url = ""
        while not url and time.monotonic() < deadline:
            line = lines.get(timeout=max(0.01, deadline - time.monotonic()))
            url = line.removeprefix("ready: ").strip() if line.startswith("ready: ") else ""
        assert url, "the server did not start"
        folder = Path(".pi-recipes") if store.startswith("postgresql") else Path(store).parent
        token = (cwd / folder / "web-token").read_text().strip()
        yield Server(url, token, process.pid)
    finally:
        process.terminate()
        process.wait(15)


@asynccontextmanager
async def page(server: Server) -> AsyncIterator[ClientConnection]:
    async with connect(
        server.ws, additional_headers=server.headers, proxy=None, open_timeout=30, max_size=None
    ) as ws:
        await ws.recv()  # hello
        await ws.send(json.dumps({"type": "subscribe", "run_id": None}))
        while json.loads(await ws.recv())["type"] != "subscribed":
            pass
        yield ws


async def paused_runs(server: Server, count: int) -> list[str]:
    """Start ``count`` runs; return once each has paused on its first question."""
    async with (
        page(server) as watcher,
        httpx.AsyncClient(base_url=server.url, headers=server.headers, timeout=60) as http,
    ):
        ids = []
        for _ in range(count):
            reply = await http.post("/api/runs", json={"prompt": "Release v1.0.0"})
            ids.append(reply.json()["run_id"])
        waiting = set(ids)
        with anyio.fail_after(120):
            while waiting:
                raw = await watcher.recv()
                if PAUSED in raw:
                    waiting.discard(json.loads(raw)["run_id"])
        return ids


async def resolved(ws: ClientConnection, run_id: str, *needles: str) -> None:
    """Read until a frame about ``run_id`` holding every needle (default: its
    ``interrupt.resolved``); other frames are skipped unparsed (the clients' cost stays small)."""
    needles = needles or ('"type":"interrupt.resolved"',)
    while True:
        raw = await ws.recv()
        if run_id in raw and all(n in raw for n in needles):
            frame = json.loads(raw)
            if frame.get("run_id") == run_id:
                return


async def answer_latency(answering: Server, watching: Server, runs: list[str]) -> list[float]:
    samples = []
    async with page(answering) as a, page(watching) as b:
        for n, run_id in enumerate(runs):
            frame = _answer(f"a{n}", run_id)
            started = time.perf_counter()
            await a.send(json.dumps(frame))
            with anyio.fail_after(30):
                await resolved(b, run_id)
            samples.append(time.perf_counter() - started)
    return samples


async def fan_out(server: Server, clients: int, answers: int) -> None:
    runs = await paused_runs(server, answers)
    before = server.rss_mb()
    async with anyio.create_task_group() as tg:
        pages: list[ClientConnection] = []
        ready = anyio.Event()
        done = anyio.Event()

        async def hold() -> None:
            async with page(server) as ws:
                pages.append(ws)
                if len(pages) == clients:
                    ready.set()
                await done.wait()

        for _ in range(clients):
            tg.start_soon(hold)
        with anyio.fail_after(120):
            await ready.wait()
        await anyio.sleep(1)  # let the server settle before reading its memory
        after = server.rss_mb()
        print(
            f"{clients} idle clients: server memory {before:.1f} MB -> {after:.1f} MB "
            f"(+{after - before:.1f} MB, {(after - before) * 1024 / clients:.1f} KiB each)"
        )
        times = []
        async with page(server) as a:
            for n, run_id in enumerate(runs):
                frame = _answer(f"f{n}", run_id)
                started = time.perf_counter()
                await a.send(json.dumps(frame))
                with anyio.fail_after(60):
                    async with anyio.create_task_group() as all_pages:
                        for ws in pages:
                            all_pages.start_soon(resolved, ws, run_id)
                times.append(time.perf_counter() - started)
                with anyio.fail_after(60):  # the resumed leg pauses again: quiet before the next
                    async with anyio.create_task_group() as all_pages:
                        for ws in [*pages, a]:
                            all_pages.start_soon(resolved, ws, run_id, PAUSED)
        _report(f"fan-out of one answer to {clients} clients", times)
        done.set()


async def bench(args: argparse.Namespace) -> None:
    stores: list[tuple[str, str]] = []
    folder = Path(tempfile.mkdtemp(prefix="bench-web-"))
    stores.append(("SQLite", str(folder / "state.db")))
    schema = None
    if args.postgres:
        import psycopg

        schema = f"bench_{uuid.uuid4().hex[:10]}"
        with psycopg.connect(args.postgres, autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA "{schema}"')
        sep = "&" if "?" in args.postgres else "?"
        options = quote(f"-csearch_path={schema}")
        stores.append(("PostgreSQL", f"{args.postgres}{sep}options={options}"))
    try:
        for name, store in stores:
            cwd = folder / name
            cwd.mkdir()
            with serving(cwd, store) as one, serving(cwd, store) as two:
                runs = await paused_runs(one, 2 * args.runs)
                same = await answer_latency(one, one, runs[: args.runs])
                _report(f"{name}: answer -> other page, same server", same)
                other = await answer_latency(two, one, runs[args.runs :])
                _report(f"{name}: answer -> other page, other process", other)
                await fan_out(one, args.clients, args.fanouts)
    finally:
        if schema:
            import psycopg

            with psycopg.connect(args.postgres, autocommit=True) as conn:
                conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=50, help="answers timed per case")
    parser.add_argument("--clients", type=int, default=500, help="idle WebSocket clients")
    parser.add_argument("--fanouts", type=int, default=10, help="answers fanned out to them")
    parser.add_argument("--postgres", default=os.environ.get("PI_RECIPES_TEST_POSTGRES"))
    anyio.run(bench, parser.parse_args())


if __name__ == "__main__":
    main()
