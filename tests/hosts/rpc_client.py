"""A test front end for ``python -m hosts.rpc``: a real subprocess over pipes.

Every read is bounded (``anyio.fail_after``); records are kept in :attr:`RpcClient.log` with
their raw lines in :attr:`RpcClient.raw`, so a test can look back at what came before.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

ROOT = Path(__file__).resolve().parents[2]
RELEASE = str(ROOT / "examples" / "release.py")
TEST_RECIPE = str(Path(__file__).with_name("rpc_recipe.py"))

Record = dict[str, Any]
READ_TIMEOUT = 10.0


class RpcClient:
    """Drives one server process: send records or raw bytes, read records with a bound."""

    def __init__(self, process: Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self._stdout = BufferedByteReceiveStream(process.stdout)
        self._ids = 0
        self.log: list[Record] = []
        self.raw: list[bytes] = []

    async def send(self, record: Record) -> None:
        """Send one record as a line (non-ASCII characters unescaped, as a client may)."""
        await self.send_raw(json.dumps(record, ensure_ascii=False).encode() + b"\n")

    async def send_raw(self, data: bytes) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send(data)

    async def close_input(self) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.aclose()

    async def read(self, timeout: float = READ_TIMEOUT) -> Record:
        """The next record; fails after ``timeout`` s or at the end of the output."""
        with anyio.fail_after(timeout):
            line = await self._stdout.receive_until(b"\n", 1 << 24)
        self.raw.append(line)
        record: Record = json.loads(line)
        self.log.append(record)
        return record

    async def until(
        self, predicate: Callable[[Record], bool], timeout: float = READ_TIMEOUT
    ) -> list[Record]:
        """The records read up to and including the first one matching ``predicate``."""
        seen: list[Record] = []
        with anyio.fail_after(timeout):
            while True:
                seen.append(await self.read())
                if predicate(seen[-1]):
                    return seen

    async def request(self, command: Record, timeout: float = READ_TIMEOUT) -> Record:
        """Send ``command`` with a fresh id; its response (records before it stay in the log)."""
        self._ids += 1
        ident = f"req-{self._ids}"
        await self.send({**command, "id": ident})
        return (await self.until(lambda r: is_response(r, ident), timeout))[-1]

    async def rest(self, timeout: float = READ_TIMEOUT) -> list[Record]:
        """Every record until the output ends (close the input first)."""
        seen: list[Record] = []
        with anyio.fail_after(timeout):
            while True:
                try:
                    seen.append(await self.read())
                except (anyio.IncompleteRead, anyio.EndOfStream):
                    return seen


def is_response(record: Record, ident: str) -> bool:
    return record.get("type") == "response" and record.get("id") == ident


def of_type(kind: str, **fields: Any) -> Callable[[Record], bool]:
    """A predicate: a record of type ``kind`` whose ``fields`` have these values."""
    return lambda r: r.get("type") == kind and all(r.get(k) == v for k, v in fields.items())


@asynccontextmanager
async def rpc_process(recipe: str, *args: str) -> AsyncIterator[RpcClient]:
    """A server process for ``recipe``, killed on exit if it is still running."""
    process = await anyio.open_process(
        [sys.executable, "-m", "hosts.rpc", recipe, *args],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=None,
    )
    async with process:
        try:
            yield RpcClient(process)
        finally:
            if process.returncode is None:
                process.kill()


@asynccontextmanager
async def rpc_server(recipe: str, *args: str) -> AsyncIterator[RpcClient]:
    """A server process for ``recipe``; on exit its input is closed and it must exit with 0."""
    async with rpc_process(recipe, *args) as client:
        yield client
        await client.close_input()
        await client.rest()
        with anyio.fail_after(READ_TIMEOUT):
            assert await client.process.wait() == 0


def strict_json(line: bytes) -> bool:
    """Whether ``line`` is one record of strict JSON: UTF-8, no NaN/Infinity, no lone
    surrogates, as a strict parser on the client's side reads it."""

    def refuse(name: str) -> object:
        raise ValueError(f"{name} is not JSON")

    try:
        value = json.loads(line.decode("utf-8", errors="strict"), parse_constant=refuse)
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except ValueError:
        return False
    return isinstance(value, dict)
