"""A node's command as a process: started in a session of its own, tethered to the engine
(it dies with it), stopped with its whole process group. Tool nodes and pi agent nodes run
theirs through :func:`node_process`."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

import anyio
import anyio.abc

from recipes.graph.runtime._context import NodeContext

__all__ = ["node_process"]


_TETHER = (
    '{ read -r _ <&%(fd)d || kill -KILL 0; } </dev/null >/dev/null 2>&1 & exec %(fd)d<&-; exec "$@"'
)
"""Run ``"$@"`` tethered to the engine: a watcher in the command's process group reads the
lifeline's end ``fd``; should the engine die (``kill -9``, a crash), the read meets EOF and
the watcher kills the whole group, so that a ``runs retry`` elsewhere never runs a second copy
beside the first. The engine's line on a clean end lets the watcher go without killing."""


@asynccontextmanager
async def node_process(
    command: list[str], ctx: NodeContext, *, stdin: int, env: Mapping[str, str] | None = None
) -> AsyncIterator[anyio.abc.Process]:
    """Run a node's ``command`` in the run's directory and environment (``env`` when given,
    else the runner's), in a session of its
    own (the terminal's Ctrl-C reaches the engine, which stops the command's whole group), and
    tethered to this process (:data:`_TETHER`): if the engine dies, the command and all it
    started die with it.

    The start is shielded: a cancel landing inside it (Ctrl-C, SIGTERM) left asyncio waiting
    for the pipes to close, which the command's own children held open for as long as they
    ran. The caller stops the process; one still running when the block ends is killed with
    its group."""
    far, near = os.pipe()
    try:
        with anyio.CancelScope(shield=True):
            process = await anyio.open_process(
                ["bash", "-c", _TETHER % {"fd": far}, "bash", *command], cwd=ctx.cwd,
                env=dict(ctx.runner.env if env is None else env), stdin=stdin,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                pass_fds=(far,),
            )  # fmt: skip
    except BaseException:
        os.close(near)
        raise
    finally:
        os.close(far)
    try:
        yield process
    finally:
        if process.returncode is None:
            _kill(process.pid)
            with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                await process.wait()
        else:  # it ended on its own: what it left running in the background is its business
            with contextlib.suppress(OSError):
                os.write(near, b"\n")
        os.close(near)


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
