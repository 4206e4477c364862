"""A new run on the engine: its workflow, started with everything the run carries.

The run's input travels in the workflow's start payload: a recipe reference and a model name
another process in another folder resolves the same way, and the ask flags of the starting
process (:data:`~recipes.temporal._wire.RUN_FLAGS`, never a secret).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError

from interactions import ConflictError, UsageError
from recipes.runs import ExpiryPolicy, new_run_id
from recipes.runs._recipe_driver import durable_model, durable_ref
from recipes.temporal._wire import RUN_FLAGS, StartRequest, oversized
from recipes.temporal._workflow import WORKFLOW

if TYPE_CHECKING:
    from recipes.temporal._store import TemporalStore

__all__ = ["start_run"]


async def start_run(
    engine: TemporalStore,
    recipe_ref: str,
    input: str,
    *,
    agent: str | None,
    model: str | None,
    thread_id: str | None,
    run_id: str | None,
    expiry_policy: ExpiryPolicy,
    cwd: Path,
    flags: Mapping[str, str],
    via: str,
    mode: str,
    agui_run_id: str | None,
) -> str:
    """Start the run's workflow on the engine's task queue and return the run's id, without
    waiting for its first leg. ``flags`` is the starting process's environment (only its ask
    flags are kept). Raises ``UsageError`` for an input over Temporal's payload limit and
    ``ConflictError`` (reason ``duplicate_run``) for a ``run_id`` in use."""
    chosen = durable_model(model, cwd)
    request = StartRequest(
        run_id=run_id or new_run_id(),
        thread_id=thread_id or f"thread-{uuid.uuid4().hex[:16]}",
        ref=durable_ref(recipe_ref, cwd),
        input=input,
        agent=agent,
        model=chosen if isinstance(chosen, str) else None,
        expiry_policy=expiry_policy,
        flags={name: flags[name] for name in RUN_FLAGS if name in flags},
        via=via,
        mode=mode,
        agui_run_id=agui_run_id,
    )
    start = request.model_dump(mode="json")
    converter = engine.client.data_converter.payload_converter
    too_big = oversized(converter, start, "the run's input")
    if too_big:  # Temporal would refuse it with a bare "Blob data size exceeds limit"
        raise UsageError(f"{too_big}; pass less (a file path its tools read, say)")
    try:
        await engine.client.start_workflow(
            WORKFLOW,
            start,
            id=request.run_id,
            task_queue=engine.address.task_queue,
            id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
            id_conflict_policy=WorkflowIDConflictPolicy.FAIL,
        )
    except WorkflowAlreadyStartedError:
        raise ConflictError(
            f"a run with id {request.run_id!r} already exists; choose another id",
            run_id=request.run_id,
            reason="duplicate_run",
        ) from None
    return request.run_id
