"""Run a worker: one recipe's runs on one task queue (``pi-recipes worker RECIPE``).

A worker polls its task queue for the runs' workflow tasks (the agent loop, on replayed
history) and activities (model calls, tool bodies). Several workers on the same queue share
the load; a worker that dies mid-activity is replaced by another one once its heartbeat stops.
The workflow cache is bounded (``max_cached_workflows``): a run paused for a person is not
held in memory; its next answer replays it from history.
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path

import anyio
from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import (
    AddSearchAttributesRequest,
    ListSearchAttributesRequest,
)
from temporalio.client import Client
from temporalio.common import RetryPolicy
from temporalio.service import RPCError
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from interactions import UsageError
from interactions.errors import StoreUnavailableError
from recipes import load_recipe
from recipes.runs._recipe_driver import durable_ref
from recipes.temporal._activities import CANCEL_NOTICE, RecipeActivities
from recipes.temporal._address import EngineAddress
from recipes.temporal._failures import MODEL_RETRY
from recipes.temporal._run_store import SEARCH_ATTRIBUTES
from recipes.temporal._served import Served, serve, unserve
from recipes.temporal._wire import HISTORY_LIMIT, PAYLOAD_LIMIT
from recipes.temporal._workflow import RunWorkflow

__all__ = ["SHUTDOWN_BOUND", "connect", "register_search_attributes", "running_worker"]

logger = logging.getLogger("recipes.temporal")

SHUTDOWN_BOUND = 15.0
"""Seconds a stopping worker waits for its activities and the server before it gives up."""

_TYPES = {
    "Keyword": IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
    "KeywordList": IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST,
    "Datetime": IndexedValueType.INDEXED_VALUE_TYPE_DATETIME,
}


async def connect(address: EngineAddress) -> Client:
    """A client of the engine's namespace (``StoreUnavailableError`` when it cannot be
    reached)."""
    try:
        return await Client.connect(address.target, namespace=address.namespace)
    except RuntimeError as exc:
        raise StoreUnavailableError(
            f"cannot reach Temporal at {address.target} ({str(exc).splitlines()[0]}); start "
            "it, or point --engine/--temporal at a running one",
            reason="unreachable",
        ) from None


async def register_search_attributes(client: Client, namespace: str) -> None:
    """Register the runs' search attributes on ``namespace`` where they are missing."""
    service = client.operator_service
    try:
        known = await service.list_search_attributes(
            ListSearchAttributesRequest(namespace=namespace)
        )
        missing = {
            name: _TYPES[kind]
            for name, kind in SEARCH_ATTRIBUTES.items()
            if name not in known.custom_attributes
        }
        if missing:
            await service.add_search_attributes(
                AddSearchAttributesRequest(search_attributes=missing, namespace=namespace)
            )
    except RPCError as exc:
        commands = "; ".join(
            f"temporal operator search-attribute create --namespace {namespace} "
            f"--name {name} --type {kind}"
            for name, kind in SEARCH_ATTRIBUTES.items()
        )
        raise UsageError(
            f"could not register the runs' search attributes on namespace {namespace!r} "
            f"({exc.message}); an operator can: {commands}"
        ) from None


@asynccontextmanager
async def running_worker(
    recipe_ref: str,
    address: EngineAddress,
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    tool_timeout: float | None = None,
    heartbeat: float = 30.0,
    max_cached_workflows: int = 100,
    model_retry: RetryPolicy = MODEL_RETRY,
    history_limit: int = HISTORY_LIMIT,
) -> AsyncIterator[Worker]:
    """A worker of ``recipe_ref`` polling ``address``'s task queue while the block lasts.

    ``env`` is what the runs' tools and models see (default: this process's environment, keys
    included; they never leave it); ``model_retry`` how a failed model call is tried again
    (:data:`~recipes.temporal.MODEL_RETRY`); ``history_limit`` is the server's
    ``limit.historySize.error`` in bytes (a run stops, failed and saying why, before its history
    reaches it). Raises ``UsageError`` for a recipe that does not
    load or bad numbers, ``StoreUnavailableError`` when Temporal cannot be reached.
    """
    if tool_timeout is not None and not tool_timeout > 0:
        raise UsageError(f"tool_timeout must be a positive number of seconds, got {tool_timeout}")
    if not 0 < heartbeat <= 3600:
        raise UsageError(f"heartbeat must be in (0, 3600] seconds, got {heartbeat}")
    if max_cached_workflows < 0:
        raise UsageError(f"max_cached_workflows must be >= 0, got {max_cached_workflows}")
    if history_limit <= 2 * PAYLOAD_LIMIT:
        raise UsageError(
            f"history_limit must exceed {2 * PAYLOAD_LIMIT} bytes (room for a model call and its "
            f"answer), got {history_limit}"
        )
    folder = Path.cwd() if cwd is None else Path(cwd)
    ref = durable_ref(recipe_ref, folder)
    recipe = load_recipe(ref)
    client = await connect(address)
    await register_search_attributes(client, address.namespace)
    served = Served(
        ref=ref,
        recipe=recipe,
        env=dict(os.environ if env is None else env),
        cwd=folder,
        tool_timeout=tool_timeout,
        heartbeat=timedelta(seconds=heartbeat),
        model_retry=model_retry,
        history_limit=history_limit,
    )
    serve(address.task_queue, served)
    try:
        worker = Worker(
            client,
            task_queue=address.task_queue,
            workflows=[RunWorkflow],
            activities=RecipeActivities(served, address.task_queue).all(),
            workflow_runner=UnsandboxedWorkflowRunner(),
            max_cached_workflows=max_cached_workflows,
            # a running tool or model call hears of a cancel in the answer to a heartbeat
            max_heartbeat_throttle_interval=timedelta(seconds=CANCEL_NOTICE),
            graceful_shutdown_timeout=timedelta(seconds=5),
        )
        await worker.__aenter__()
        try:
            yield worker
        finally:
            # shielded and bounded: a server that went away must not hold the worker forever
            with anyio.move_on_after(SHUTDOWN_BOUND, shield=True) as bound:
                await worker.__aexit__(None, None, None)
            if bound.cancelled_caught:
                logger.warning("the worker did not shut down within %g s", SHUTDOWN_BOUND)
    finally:
        unserve(address.task_queue)
