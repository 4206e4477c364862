"""``pi-recipes worker RECIPE --temporal HOST:PORT``: a Temporal worker of one recipe's runs.

The worker runs the runs' workflows and their activities (model calls, tool bodies) until it is
stopped (Ctrl-C, SIGTERM). Start as many as the load needs, on as many machines: they share
the task queue. Keys for the models come from the worker's environment, never from the runs.
"""

from __future__ import annotations

import argparse

import anyio

from interactions import UsageError

__all__ = ["add_worker_command", "worker_command"]


def add_worker_command(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("recipe", help="the recipe whose runs it runs (path.py[:function])")
    parser.add_argument(
        "--temporal", required=True, metavar="HOST:PORT", help="the Temporal frontend"
    )
    parser.add_argument("--namespace", help="the namespace (default: default)")
    parser.add_argument("--task-queue", help="the task queue (default: pi-recipes)")
    parser.add_argument(
        "--tool-timeout", type=float, metavar="SECONDS", help="bound each tool call"
    )
    parser.add_argument(
        "--heartbeat",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="a lost worker's activity moves to another worker after this long (default 30)",
    )
    parser.add_argument(
        "--max-cached-workflows",
        type=int,
        default=100,
        metavar="N",
        help="runs kept in memory between their steps (default 100; paused runs replay)",
    )
    parser.add_argument(
        "--history-limit",
        type=int,
        metavar="BYTES",
        help="the server's limit.historySize.error, if not the default 52428800: a run stops, "
        "saying why, before its history reaches it",
    )


async def worker_command(args: argparse.Namespace) -> int:
    """Run the worker until stopped; return the exit code."""
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
