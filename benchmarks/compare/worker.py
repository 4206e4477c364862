"""One long-lived process per side, driven by the orchestrator one operation at a time.

Each side runs in its own process, so one library's imports, threads and garbage never weigh
on another side's timings; the orchestrator (:mod:`run`) takes turns between them. A side
module ends with ``side_main(...)``, which gives it two commands:

- ``serve --dir FOLDER [--store URL]``: read one JSON request per line (``{"op": name, "args":
  {...}}``), call the side's method ``name`` (awaiting it if it is a coroutine), answer one JSON
  line (``{"ok": result}`` or ``{"error": traceback}``). Stray prints go to stderr, never into
  the answers.
  Metric 3 runs in rounds of ``bulk_create(n)`` (more paused runs in the round's store),
  ``bulk_size()`` (the store closed, its bytes), ``bulk_resume(n)`` (the next runs resumed,
  the store reopened), ``bulk_end()``, so the orchestrator can interleave it in chunks.
- ``resume --store STORE --run RUN_ID [--schema NAME] [--preload MODULES]``: the fresh process
  of metric 2. It answers the paused run and resumes it to the end, then prints the seconds it
  took after its imports and the modules first imported inside that window (a library may
  import some on first use). ``--preload`` (comma-separated) imports those before the clock
  starts: the orchestrator passes what the side's warm-up process reported, so "excluding
  imports" leaves out every import, made at the top or on first use, on every side alike. The
  whole-process time includes them all either way.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import inspect
import json
import os
import select
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from measure import report_inner

# ---------------------------------------------------------------- the side's process


def side_main(
    make_side: Callable[[argparse.Namespace], Any],
    resume: Callable[[str, str, str | None], None],
    argv: Sequence[str] | None = None,
) -> None:
    """The command line of a side module (see the module docstring)."""
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve")
    serve.add_argument("--dir", type=Path, required=True)
    serve.add_argument("--store", default=None, help="a PostgreSQL URL (pi-recipes only)")
    child = commands.add_parser("resume")
    child.add_argument("--store", required=True)
    child.add_argument("--run", required=True)
    child.add_argument("--schema", default=None)
    child.add_argument("--preload", default="", help="modules to import before the clock")
    args = parser.parse_args(argv)
    if args.command == "resume":
        for name in filter(None, args.preload.split(",")):
            with contextlib.suppress(ImportError):  # an alias another import made; it will again
                importlib.import_module(name)
        before = set(sys.modules)
        started = time.perf_counter()
        resume(args.store, args.run, args.schema)
        seconds = time.perf_counter() - started
        report_inner(seconds, [name for name in sys.modules if name not in before])
        return
    answers = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # a library's print must not corrupt an answer
    asyncio.run(_serve(make_side(args), answers))


async def _serve(side: Any, answers: Any) -> None:
    loop = asyncio.get_running_loop()
    try:
        while line := await loop.run_in_executor(None, sys.stdin.readline):
            request = json.loads(line)
            try:
                result = getattr(side, request["op"])(**request.get("args", {}))
                if inspect.isawaitable(result):
                    result = await result
                answers.write(json.dumps({"ok": result}) + "\n")
            except Exception:
                answers.write(json.dumps({"error": traceback.format_exc()}) + "\n")
    finally:
        closing = side.close()
        if inspect.isawaitable(closing):
            await closing


H = TypeVar("H")


@dataclass
class BulkRound(Generic[H]):
    """A side's round of metric 3: where its store is, the store while open (``None`` when
    closed), the ids of the runs it paused, and how many of them were resumed."""

    place: Any
    handle: H | None
    ids: list[str] = field(default_factory=list)
    resumed: int = 0

    def next_ids(self, n: int) -> list[str]:
        """The next ``n`` paused runs to resume (counted as resumed)."""
        batch = self.ids[self.resumed : self.resumed + n]
        self.resumed += len(batch)
        return batch

    def check_done(self) -> None:
        if self.resumed != len(self.ids):
            raise AssertionError(f"{len(self.ids) - self.resumed} paused runs not resumed")


# ---------------------------------------------------------------- the orchestrator's end


class WorkerError(RuntimeError):
    """A side failed an operation, died, or did not answer in time."""


class Worker:
    """A side's process (``python SCRIPT serve ...``) and the calls made to it."""

    def __init__(self, name: str, script: Path, folder: Path, store: str | None = None) -> None:
        self.name = name
        self.script = script
        argv = [sys.executable, str(script), "serve", "--dir", str(folder)]
        if store is not None:
            argv += ["--store", store]
        folder.mkdir(parents=True, exist_ok=True)
        self._process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self._buffer = b""

    def call(self, op: str, *, timeout: float = 600.0, **args: Any) -> Any:
        """Run ``op`` in the side's process and return its result (``WorkerError`` if it
        raised, the process died, or ``timeout`` seconds passed)."""
        assert self._process.stdin is not None
        try:
            self._process.stdin.write((json.dumps({"op": op, "args": args}) + "\n").encode())
            self._process.stdin.flush()
        except BrokenPipeError:
            raise WorkerError(f"{self.name} has exited ({self._process.poll()})") from None
        answer = json.loads(self._read_line(op, timeout))
        if "error" in answer:
            raise WorkerError(f"{self.name}.{op} failed:\n{answer['error']}")
        return answer["ok"]

    def _read_line(self, op: str, timeout: float) -> bytes:
        assert self._process.stdout is not None
        fd = self._process.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise WorkerError(f"{self.name}.{op} did not answer within {timeout:.0f} s")
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise WorkerError(f"{self.name} exited ({self._process.wait()}) during {op}")
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def close(self, timeout: float = 60.0) -> None:
        """End the side's process (it closes its stores first); kill it past ``timeout``."""
        if self._process.stdin is not None and not self._process.stdin.closed:
            self._process.stdin.close()
        try:
            self._process.wait(timeout)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
