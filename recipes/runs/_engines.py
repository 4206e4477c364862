"""Which runner drives a store's runs: the :class:`Runner`, or the engine's own.

A store that is also an engine (the Temporal engine's store: its runs are workflows that run on
its workers) makes the runner of its runs; every other store is driven by a :class:`Runner` in
the calling process. Hosts and the command line ask :func:`runner_for` and do not know which.
An engine's store is opened by :func:`interactions.store.open_store`, from the URL scheme the
engine registers (the ``pi_recipes.engines`` entry point group): this package imports none.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from interactions.store import Store
from recipes.runs._protocol import Runs
from recipes.runs._runner import Runner

__all__ = ["ENGINE_ENV", "RunEngine", "runner_for"]

ENGINE_ENV = "PI_RECIPES_ENGINE"
"""The environment variable the command line and the hosts read an engine URL from when no
``--engine`` (nor ``--store``) is given: ``temporal://127.0.0.1:7233/default``."""


@runtime_checkable
class RunEngine(Protocol):
    """A store whose runs an engine drives: it makes the runner of its runs."""

    def make_runner(self, **options: Any) -> Runs:
        """A runner of this engine's runs, with :class:`Runner`'s options (``env``, ``host``,
        ``model``, ``cwd``, ``tool_timeout``, ``mode``)."""
        ...


def runner_for(store: Store, **options: Any) -> Runs:
    """The runner of ``store``'s runs, with :class:`Runner`'s options: the engine's own when
    ``store`` is a :class:`RunEngine`, else ``Runner(store, **options)``."""
    if isinstance(store, RunEngine):
        return store.make_runner(**options)
    return Runner(store, **options)

