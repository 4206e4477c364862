"""What one worker serves: its recipe, its environment, its activities' bounds.

A task queue serves one recipe: the worker started with it (``pi-recipes worker RECIPE``).
The workflow code of a run reads this (by its task queue) for the recipe whose tools it calls
and the options of those calls; the activities read it for what they run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from temporalio.common import RetryPolicy

from interactions import UsageError
from recipes import Recipe
from recipes.temporal._failures import MODEL_RETRY
from recipes.temporal._wire import HISTORY_LIMIT

__all__ = ["Served", "same_recipe", "serve", "served_for", "unserve"]


@dataclass(frozen=True)
class Served:
    """One worker's recipe (``ref`` as loaded, made absolute) and how its activities run.

    ``env`` is the worker's environment (the models' keys; the runs' ask flags are added per
    run). ``tool_timeout`` bounds a tool call (``None``: :attr:`tool_activity` only);
    ``heartbeat`` is how soon a lost worker's activity is given to another worker;
    ``model_retry`` how a failed model call is tried again (see :mod:`._failures`);
    ``history_limit`` the history size (bytes) at which the server ends a workflow.
    """

    ref: str
    recipe: Recipe
    env: Mapping[str, str]
    cwd: Path
    tool_timeout: float | None = None
    heartbeat: timedelta = timedelta(seconds=30)
    model_activity: timedelta = timedelta(minutes=10)
    tool_activity: timedelta = timedelta(minutes=30)
    model_retry: RetryPolicy = field(default_factory=lambda: MODEL_RETRY)
    history_limit: int = HISTORY_LIMIT


_SERVED: dict[str, Served] = {}


def serve(task_queue: str, served: Served) -> None:
    """Make ``served`` what this process's worker of ``task_queue`` runs."""
    _SERVED[task_queue] = served


def unserve(task_queue: str) -> None:
    """Forget ``task_queue`` (its worker stopped)."""
    _SERVED.pop(task_queue, None)


def served_for(task_queue: str) -> Served:
    """What this process serves on ``task_queue`` (``UsageError`` when nothing)."""
    try:
        return _SERVED[task_queue]
    except KeyError:
        raise UsageError(f"this process runs no worker for task queue {task_queue!r}") from None


def same_recipe(asked: str, served: str) -> bool:
    """Whether a run naming ``asked`` may run on a worker serving ``served``: the same module
    reference, or files of the same name (and function): a client and a worker name the same
    recipe from different folders or machines."""
    if asked == served:
        return True
    asked_path, _, asked_func = asked.partition(":")
    served_path, _, served_func = served.partition(":")
    if not (asked_path.endswith(".py") and served_path.endswith(".py")):
        return False
    return Path(asked_path).name == Path(served_path).name and asked_func == served_func


def check_same_recipe(asked: str, served: str, task_queue: str) -> None:
    """Refuse a run of another recipe than the one ``task_queue`` serves (``UsageError``)."""
    if not same_recipe(asked, served):
        raise UsageError(
            f"task queue {task_queue!r} serves the recipe {served}, not {asked}; start the run "
            "on the task queue of a worker of its recipe (pi-recipes worker RECIPE "
            "--task-queue NAME, and ?task_queue=NAME in the engine URL)"
        )
