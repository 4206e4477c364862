"""Workers in processes of their own (``pi-recipes worker``), as users run them: started, read
until they say they poll, killed."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from recipes.temporal import EngineAddress

PI_RECIPES = str(Path(sys.executable).parent / "pi-recipes")
READY_BOUND = 60.0


class WorkerProcess:
    """A ``pi-recipes worker`` process; :attr:`output` collects what it printed."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self.output: list[str] = []
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        with self.process.stdout:
            for line in self.process.stdout:
                self.output.append(line)
                self._lines.put(line)
        self._lines.put(None)

    def wait_ready(self) -> None:
        while True:
            try:
                line = self._lines.get(timeout=READY_BOUND)
            except queue.Empty:
                raise AssertionError(f"no worker after {READY_BOUND} s: {self.output}") from None
            if line is None:
                raise AssertionError(f"the worker exited: {''.join(self.output)}")
            if line.startswith("Worker of "):
                return

    @property
    def pid(self) -> int:
        return self.process.pid

    def rss_kib(self) -> int:
        """The worker's resident memory (Linux ``/proc``), in KiB."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise AssertionError("no VmRSS")

    def kill(self) -> None:
        self.process.kill()  # SIGKILL: no goodbye to the server
        self.process.wait(timeout=15)


@contextmanager
def worker_process(
    recipe: str,
    address: EngineAddress,
    *,
    env: Mapping[str, str] | None = None,
    options: tuple[str, ...] = (),
) -> Iterator[WorkerProcess]:
    """A worker of ``recipe`` on ``address``'s queue, ready; stopped (SIGTERM) afterwards."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("PI_")}
    process = subprocess.Popen(
        [
            PI_RECIPES, "worker", recipe, "--temporal", address.target,
            "--namespace", address.namespace, "--task-queue", address.task_queue, *options,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        env=base | dict(env or {}),
    )  # fmt: skip
    worker = WorkerProcess(process)
    try:
        worker.wait_ready()
        yield worker
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=15)
