"""``pi-recipes worker RECIPE --temporal HOST:PORT``: a Temporal worker of one recipe's runs.

The worker runs the runs' workflows and their activities (model calls, tool bodies) until it is
stopped (Ctrl-C, SIGTERM). Start as many as the load needs, on as many machines: they share
the task queue. Keys for the models come from the worker's environment, never from the runs.
"""

from __future__ import annotations

import argparse

import anyio

from interactions import UsageError

__all__ = ["worker_command"]


async def worker_command(args: argparse.Namespace) -> int:
    """Run the worker until stopped; return the exit code."""
    from hosts._command import apply_policy

    apply_policy(args.policy)  # its activities run the tools: they read it from the env
    try:
        from recipes.temporal import EngineAddress, running_worker
    except ModuleNotFoundError as missing:
        if (missing.name or "").startswith("recipes."):
            raise
        raise UsageError(
            f"pi-recipes worker needs {missing.name}: pip install 'pi-recipes[temporal]'"
        ) from None
    address = EngineAddress.of(args.temporal, args.namespace, args.task_queue)
    async with running_worker(
        args.recipe,
        address,
        tool_timeout=args.tool_timeout,
        heartbeat=args.heartbeat,
        max_cached_workflows=args.max_cached_workflows,
        **({"history_limit": args.history_limit} if args.history_limit is not None else {}),
    ):
        print(
            f"Worker of {args.recipe} on {address.url()} (task queue {address.task_queue}); "
            "Ctrl-C stops it.",
            flush=True,
        )
        await anyio.sleep_forever()
    return 0  # pragma: no cover - the worker runs until it is cancelled
