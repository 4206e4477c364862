"""Calls into the engine from a client, with Temporal's failures read as our typed errors.

A run is a workflow whose id is the run's id. :func:`snapshot` asks its query; :func:`update`
sends an update and waits for its result. A refusal (a validator's, or a handler's) comes back
as the typed error it was; a workflow that has ended raises :class:`Closed` (the caller decides
from the run as it stands); no worker answering within the bound is a
``StoreUnavailableError`` saying what to start.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta
from typing import Any

import anyio
import anyio.lowlevel
from temporalio.client import (
    Client,
    RPCTimeoutOrCancelledError,
    WorkflowQueryFailedError,
    WorkflowUpdateFailedError,
    WorkflowUpdateStage,
)
from temporalio.service import RPCError, RPCStatusCode

from interactions import RunError, UnknownRunError
from interactions.errors import StoreUnavailableError
from recipes.temporal._address import EngineAddress
from recipes.temporal._errors import from_failure
from recipes.temporal._wire import Snapshot

__all__ = ["Closed", "snapshot", "update"]

logger = logging.getLogger("recipes.temporal")

_UNAVAILABLE = (RPCStatusCode.DEADLINE_EXCEEDED, RPCStatusCode.UNAVAILABLE, RPCStatusCode.CANCELLED)
"""What a call past its deadline comes back as (the client's own timeout is ``CANCELLED``)."""


class Closed(Exception):
    """The run's workflow has ended: it takes no more updates."""


def _unknown(run_id: str) -> UnknownRunError:
    return UnknownRunError(f"no run {run_id!r} on this engine", run_id=run_id, reason="unknown_run")


def _no_worker(address: EngineAddress, run_id: str, seconds: float) -> StoreUnavailableError:
    return StoreUnavailableError(
        f"no worker answered for run {run_id} on task queue {address.task_queue!r} within "
        f"{seconds:g} s; start one: pi-recipes worker RECIPE --temporal {address.target} "
        f"--namespace {address.namespace} --task-queue {address.task_queue}",
        run_id=run_id,
        reason="unreachable",
    )


async def _if_cancelled() -> None:
    """Raise the caller's cancellation when that is what failed the RPC: temporalio turns a
    cancelled call into ``RPCTimeoutOrCancelledError`` (or status ``CANCELLED``), which must
    not pass for a missing worker while the caller is being cancelled."""
    await anyio.lowlevel.checkpoint_if_cancelled()  # an anyio cancel scope: raised here
    task = asyncio.current_task()
    if task is not None and task.cancelling():  # a bare task.cancel(), consumed by the RPC
        raise asyncio.CancelledError


async def _refused(
    exc: RPCError, address: EngineAddress, run_id: str, call: str, seconds: float
) -> StoreUnavailableError:
    """What an RPC of ``call`` (a query, an update's name) failing with ``exc`` means, a missing
    workflow aside: no worker answered within ``seconds`` (or the caller was cancelled, which
    is raised here), or Temporal refused it."""
    if exc.status in _UNAVAILABLE:
        await _if_cancelled()
        return _no_worker(address, run_id, seconds)
    return StoreUnavailableError(
        f"Temporal refused the {call}: {exc.message}", run_id=run_id, reason="unreachable"
    )


async def _exists(client: Client, run_id: str) -> bool:
    """Whether the run's workflow exists (an ended one included)."""
    try:
        await client.get_workflow_handle(run_id).describe()
    except RPCError as exc:
        if exc.status == RPCStatusCode.NOT_FOUND:
            return False
        raise
    return True


async def snapshot(
    client: Client, address: EngineAddress, run_id: str, after_seq: int, timeout: float
) -> Snapshot:
    """The run as its workflow holds it (``UnknownRunError`` when there is none)."""
    handle = client.get_workflow_handle(run_id)
    try:
        data = await handle.query("snapshot", after_seq, rpc_timeout=timedelta(seconds=timeout))
    except RPCError as exc:
        if exc.status == RPCStatusCode.NOT_FOUND:
            raise _unknown(run_id) from None
        raise await _refused(exc, address, run_id, "query", timeout) from None
    except WorkflowQueryFailedError as exc:
        raise RunError(f"the run's query failed on the worker: {exc.message}", run_id=run_id,
                       reason="engine") from None  # fmt: skip
    found = Snapshot.model_validate(data)
    if found.omitted:
        logger.warning("run %s: %s", run_id, found.omitted)
    return found


async def update(
    client: Client,
    address: EngineAddress,
    run_id: str,
    name: str,
    request: dict[str, Any],
    *,
    accept_timeout: float,
    leg_timeout: float,
) -> Any:
    """Send the update ``name`` and return its result once the workflow has run it.

    Raises the typed error of a refusal, :class:`Closed` when the workflow has ended,
    ``UnknownRunError``, and ``StoreUnavailableError`` when no worker accepts it within
    ``accept_timeout`` seconds or it runs past ``leg_timeout`` (it goes on in the workflow).
    """
    handle = client.get_workflow_handle(run_id)
    try:
        started = await handle.start_update(
            name,
            request,
            wait_for_stage=WorkflowUpdateStage.ACCEPTED,
            rpc_timeout=timedelta(seconds=accept_timeout),
        )
        with anyio.fail_after(leg_timeout):
            return await started.result()
    except WorkflowUpdateFailedError as exc:
        typed = from_failure(exc.cause)
        if typed is not None:
            raise typed from None
        if getattr(exc.cause, "type", None) == "AcceptedUpdateCompletedWorkflow":
            raise Closed(run_id) from None  # the run ended while the update waited
        raise RunError(f"the run's {name} failed on the worker: {exc.cause}", run_id=run_id,
                       reason="engine") from None  # fmt: skip
    except RPCError as exc:
        if exc.status == RPCStatusCode.NOT_FOUND:
            if await _exists(client, run_id):
                raise Closed(run_id) from None
            raise _unknown(run_id) from None
        raise await _refused(exc, address, run_id, name, accept_timeout) from None
    except RPCTimeoutOrCancelledError:
        await _if_cancelled()
        raise _no_worker(address, run_id, accept_timeout) from None
    except TimeoutError:
        raise StoreUnavailableError(
            f"run {run_id}'s {name} is still going on the workers after {leg_timeout:g} s; it "
            f"goes on there: pi-recipes runs show {run_id}",
            run_id=run_id,
            reason="busy",
        ) from None
