"""A real ``pi-recipes serve`` process on a free port, for the web host's tests.

:func:`serving` starts it (``--port 0``), waits (bounded) for the line saying where it listens,
reads the token it wrote next to the store, and stops it (SIGTERM, then SIGKILL) afterwards.
"""

from __future__ import annotations

import os
import queue
import subprocess
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import httpx

from tests.hosts.cli_helpers import PI_RECIPES, ROOT, cli_env

WEB_RECIPE = str(Path(__file__).with_name("web_recipe.py"))
SLOW_RECIPE = str(Path(__file__).with_name("web_slow_recipe.py"))
FRAGILE_RECIPE = str(Path(__file__).with_name("web_fragile_recipe.py"))
RELEASE = str(ROOT / "examples" / "release.py")
START_TIMEOUT = 30.0
ONE_ANSWER = {"settled": True, "approvals": [], "required_approvals": 1}
"""What an answer's reply (and a WebSocket ack) adds for a question one answer settles."""


@dataclass
class Server:
    """One running server: where it listens, its token, its store."""

    url: str
    token: str
    store: str
    cwd: Path
    process: subprocess.Popen[str]
    log: Path
    banner: list[str]
    """What the server printed before it was ready."""

    @property
    def ws_url(self) -> str:
        return self.url.replace("http://", "ws://") + "ws"

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def client(self, **kwargs: Any) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers=self.headers, timeout=20, **kwargs)

    def async_client(self, **kwargs: Any) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.url, headers=self.headers, timeout=20, **kwargs)

    def start_run(self, prompt: str) -> str:
        """Start a run of the test recipe over REST; wait (bounded) until it pauses or ends."""
        with self.client() as http:
            reply = http.post("/api/runs", json={"prompt": prompt})
            assert reply.status_code == 202, reply.text
            run_id: str = reply.json()["run_id"]
            wait_for_status(http, run_id, {"paused_waiting_human", "finished", "failed"})
        return run_id


def wait_for_status(
    http: httpx.Client, run_id: str, wanted: set[str], timeout: float = 20
) -> dict[str, Any]:
    """Poll the run (bounded) until its status is one of ``wanted``; return it."""
    deadline = time.monotonic() + timeout
    while True:
        run: dict[str, Any] = http.get(f"/api/runs/{run_id}").json()
        if run.get("status") in wanted:
            return run
        if time.monotonic() > deadline:
            raise AssertionError(f"run {run_id} is {run.get('status')}, not in {wanted}")
        time.sleep(0.05)


def _lines(stream: Any, into: queue.Queue[str]) -> None:
    for line in stream:
        into.put(line)


@contextmanager
def serving(
    cwd: Path,
    *,
    store: str | None = None,
    recipe: str = WEB_RECIPE,
    args: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
) -> Iterator[Server]:
    """Run ``pi-recipes serve`` in ``cwd`` until the block ends (``store`` may be an engine's
    ``temporal://`` URL)."""
    store = store or str(cwd / "state.db")
    where = "--engine" if store.startswith("temporal://") else "--store"
    log = cwd / f"server-{os.getpid()}-{time.monotonic_ns()}.log"
    with log.open("w") as errors:
        process = subprocess.Popen(
            [PI_RECIPES, "serve", recipe, where, store, "--port", "0", *args],
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=errors,
            stdin=subprocess.DEVNULL,
            text=True,
            env=env or cli_env(),
        )
        lines: queue.Queue[str] = queue.Queue()
        reader = threading.Thread(target=_lines, args=(process.stdout, lines), daemon=True)
        reader.start()
        try:
            banner = _wait_ready(lines, log)
            url = banner[-1].removeprefix("ready: ").strip()
            on_file = where == "--store" and not store.startswith("postgresql")
            folder = Path(store).parent if on_file else Path(".pi-recipes")
            token = (cwd / folder / "web-token").read_text().strip()
            yield Server(url, token, store, cwd, process, log, banner)
        finally:
            process.terminate()
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(5)
            reader.join(5)
            assert process.stdout is not None
            process.stdout.close()


def _wait_ready(lines: queue.Queue[str], log: Path) -> list[str]:
    deadline = time.monotonic() + START_TIMEOUT
    seen = []
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=max(0.01, deadline - time.monotonic()))
        except queue.Empty:
            break
        seen.append(line)
        if line.startswith("ready: "):
            return seen
    raise AssertionError(f"the server did not start: {''.join(seen)}\n{log.read_text()}")


@asynccontextmanager
async def gate() -> AsyncIterator[tuple[int, anyio.Event, anyio.Event]]:
    """A local port whose connections wait until the event it gives is set (a test recipe's
    ``hold: PORT`` legs), with an event set once a leg holds on it."""
    holding, release = anyio.Event(), anyio.Event()

    async def let_go(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            holding.set()
            await release.wait()
            await stream.send(b"go")

    async with (
        await anyio.create_tcp_listener(local_host="127.0.0.1") as listener,
        anyio.create_task_group() as tg,
    ):
        tg.start_soon(listener.serve, let_go)
        yield listener.extra(anyio.abc.SocketAttribute.local_port), holding, release
        release.set()
        tg.cancel_scope.cancel()
