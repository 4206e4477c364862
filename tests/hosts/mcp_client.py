"""The MCP SDK's own client against ``pi-recipes mcp`` run as a user runs it: a subprocess
speaking stdio, or one serving streamable HTTP on a free port of 127.0.0.1."""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp.types as types
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.session import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client

from tests.hosts.cli_helpers import PI_RECIPES, ROOT, cli_env

RECIPE = str(ROOT / "tests" / "hosts" / "mcp_recipe.py")
START_TIMEOUT = 30.0
WAIT = 10.0
"""The bound on every wait of a test for something the server does."""


class HttpServer:
    """``pi-recipes mcp RECIPE --http ADDRESS`` (default ``127.0.0.1:0``) in a subprocess;
    ``url`` once it listens, ``token`` the one it made (in ``cwd/.pi-recipes/web-token``).
    Its standard error is read all along (``stderr`` keeps it)."""

    def __init__(self, cwd: Path, address: str = "127.0.0.1:0", *args: str, **env: str) -> None:
        self.stderr: list[str] = []
        self._ready = threading.Event()
        self.url = ""
        self.token = ""
        self.process = subprocess.Popen(
            [PI_RECIPES, "mcp", RECIPE, "--http", address, *args],
            cwd=cwd,
            env=cli_env(**env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        if not self._ready.wait(START_TIMEOUT):
            self.stop()
            raise AssertionError(f"the server did not start: {''.join(self.stderr)}")
        made = cwd / ".pi-recipes" / "web-token"
        self.token = made.read_text().strip() if made.exists() else ""

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def said(self, text: str, within: float = START_TIMEOUT) -> str:
        """Its standard error so far, once it holds ``text`` (the lines after the one saying
        where it listens may come a moment later), or as it is after ``within`` seconds."""
        deadline = time.monotonic() + within
        while text not in "".join(self.stderr) and time.monotonic() < deadline:
            time.sleep(0.02)
        return "".join(self.stderr)

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.stderr.append(line)
            if " at http://" in line and not self._ready.is_set():
                self.url = line.rsplit(" at ", 1)[1].strip()
                self._ready.set()
        self._ready.set()

    def stop(self) -> int:
        """Stop it as Ctrl-C would; return its exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(START_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(START_TIMEOUT)
        self._reader.join(START_TIMEOUT)
        assert self.process.stderr is not None
        self.process.stderr.close()
        return self.process.returncode


HANG = object()
"""A scripted elicitation reply: show the form and never answer (until cancelled)."""


@dataclass
class Elicitor:
    """An elicitation handler answering from a script, in order; ``seen`` keeps the requests.
    A :data:`HANG` entry sets ``shown`` and waits until the request is cancelled, which sets
    ``cancelled``."""

    replies: list[Any]
    seen: list[types.ElicitRequestFormParams] = field(default_factory=list)
    shown: anyio.Event = field(default_factory=anyio.Event)
    cancelled: anyio.Event = field(default_factory=anyio.Event)

    async def __call__(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        assert isinstance(params, types.ElicitRequestFormParams)
        self.seen.append(params)
        reply = self.replies.pop(0)
        if reply is HANG:
            self.shown.set()
            try:
                await anyio.sleep_forever()
            finally:
                self.cancelled.set()
        assert isinstance(reply, types.ElicitResult | types.ErrorData)
        return reply


def accept(**content: Any) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content=content)


@asynccontextmanager
async def connect(
    transport: str,
    *,
    cwd: Path,
    http: HttpServer | None = None,
    elicitor: Elicitor | None = None,
    env: dict[str, str] | None = None,
) -> AsyncIterator[ClientSession]:
    """An initialized client session over ``transport`` (``stdio``: a new server process with
    ``env``; ``http``: the running ``http`` server), declaring elicitation when ``elicitor``
    is given."""
    stack = AsyncExitStack()
    if transport == "stdio":
        params = StdioServerParameters(
            command=PI_RECIPES, args=["mcp", RECIPE], env=cli_env(**(env or {})), cwd=cwd
        )
        streams = stdio_client(params)
    else:
        assert http is not None
        web = httpx2.AsyncClient(headers=http.headers, timeout=httpx2.Timeout(WAIT * 3))
        streams = streamable_http_client(http.url, http_client=await stack.enter_async_context(web))
    async with (
        stack,
        streams as (read, write),
        ClientSession(read, write, elicitation_callback=elicitor) as session,
    ):
        with anyio.fail_after(START_TIMEOUT):
            await session.initialize()
        yield session


def text(result: types.CallToolResult) -> str:
    """The one text part of a result."""
    (part,) = result.content
    assert isinstance(part, types.TextContent)
    return part.text
