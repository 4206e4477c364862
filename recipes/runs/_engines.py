"""Which runner drives a store's runs: the :class:`Runner`, or the engine's own.

A store that is also an engine (the Temporal engine's store: its runs are workflows that run on
its workers) makes the runner of its runs; every other store is driven by a :class:`Runner` in
the calling process. Hosts and the command line ask :func:`runner_for` and do not know which.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from interactions.store import Store
from recipes.runs._runner import Runner

__all__ = ["RunEngine", "runner_for"]


@runtime_checkable
class RunEngine(Protocol):
    """A store whose runs an engine drives: it makes the runner of its runs."""

    def make_runner(self, **options: Any) -> Runner:
        """A runner of this engine's runs, with :class:`Runner`'s options (``env``, ``host``,
        ``model``, ``cwd``, ``tool_timeout``, ``mode``)."""
        ...


def runner_for(store: Store, **options: Any) -> Runner:
    """The runner of ``store``'s runs, with :class:`Runner`'s options: the engine's own when
    ``store`` is a :class:`RunEngine`, else ``Runner(store, **options)``."""
    if isinstance(store, RunEngine):
        return store.make_runner(**options)
    return Runner(store, **options)
