"""Scale-out on Temporal: the same runs as workflows, paused for days, answered anywhere.

Needs the ``temporal`` extra (``pip install 'pi-recipes[temporal]'``: the official
``temporalio`` SDK). A run is a workflow whose id is the run's id; the unchanged runner runs
inside it on the run's own store, with model calls and tool bodies as activities on the
workers of its recipe (:func:`running_worker`, ``pi-recipes worker RECIPE``). A pause is a
durable wait with a timer at the earliest ``expires_at``; answers, resumes, retries and cancels
are Workflow Updates whose validators refuse what the other engines refuse, with the same typed
errors; reads are the workflow's query and its search attributes (:data:`SEARCH_ATTRIBUTES`).

- :func:`open_temporal_engine`: the engine at ``temporal://HOST:PORT/NAMESPACE`` as a
  :class:`TemporalStore` (a :class:`~interactions.store.Store` hosts read);
  :func:`recipes.runs.runner_for` gives its :class:`TemporalRunner`.
- :func:`running_worker`: a worker of one recipe on one task queue.
- :data:`MODEL_FAILURES`, :data:`MODEL_RETRY`, :data:`TOOL_RETRY`: how failed activities are
  retried.

Errors are those of the other engines: refusals are ``RunError`` subclasses (a conflict, an
unknown id, an expired interrupt, a payload off its schema), misuse is ``UsageError``, a model
failure a ``ModelError`` with its class; an engine that cannot be reached, or a task queue no
worker polls, is a ``StoreUnavailableError`` (reason ``unreachable``) naming what to start.
"""

from __future__ import annotations

from typing import Any

from recipes.temporal._address import (
    DEFAULT_NAMESPACE,
    DEFAULT_TASK_QUEUE,
    ENGINE_ENV,
    EngineAddress,
)
from recipes.temporal._failures import MODEL_FAILURES, MODEL_RETRY, TOOL_RETRY, FailurePolicy
from recipes.temporal._run_store import SEARCH_ATTRIBUTES
from recipes.temporal._runner import TemporalRunner
from recipes.temporal._store import TemporalStore
from recipes.temporal._worker import connect, register_search_attributes, running_worker
from recipes.temporal._workflow import WORKFLOW

__all__ = [
    "DEFAULT_NAMESPACE",
    "DEFAULT_TASK_QUEUE",
    "ENGINE_ENV",
    "MODEL_FAILURES",
    "MODEL_RETRY",
    "SEARCH_ATTRIBUTES",
    "TOOL_RETRY",
    "WORKFLOW",
    "EngineAddress",
    "FailurePolicy",
    "TemporalRunner",
    "TemporalStore",
    "connect",
    "open_temporal_engine",
    "register_search_attributes",
    "running_worker",
]


async def open_temporal_engine(url: str, **options: Any) -> TemporalStore:
    """The engine ``url`` names (``temporal://HOST:PORT[/NAMESPACE][?task_queue=QUEUE]``), as
    its store; ``options`` are :class:`TemporalStore`'s (timeouts, the feed's poll). Raises
    ``UsageError`` for a malformed URL, ``StoreUnavailableError`` when it cannot be reached."""
    address = EngineAddress.parse(url)
    return TemporalStore(await connect(address), address, **options)
