"""What the workflow code is made of besides the workflow: the runner it runs, how a refusal
leaves it, and the surface a host's request brings to a leg."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pydantic import ValidationError
from temporalio.exceptions import ApplicationError

from interactions import UsageError
from recipes import Recipe
from recipes.runs import Runner, Surface
from recipes.temporal._errors import to_failure
from recipes.temporal._run_store import RunStore
from recipes.temporal._wire import LegRequest

__all__ = ["refusals", "surface_of", "workflow_runner"]


def workflow_runner(store: RunStore, recipe: Recipe, **options: Any) -> Runner:
    """The runner on a run's own store, whose recipe (whatever its reference) is the
    workflow's, its tools activity calls."""
    return Runner(store, recipes=lambda ref: recipe, **options)


@contextmanager
def refusals() -> Iterator[None]:
    """Our typed errors leave a handler or a validator as ``ApplicationError`` carrying them."""
    try:
        yield
    except ApplicationError:
        raise
    except ValidationError as exc:
        raise to_failure(UsageError(f"a malformed request reached the run: {exc}")) from None
    except Exception as exc:
        raise to_failure(exc) from None


def surface_of(request: LegRequest) -> Surface:
    return Surface(agui_run_id=request.agui_run_id, mode=request.mode)
