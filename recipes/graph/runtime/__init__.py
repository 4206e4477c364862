"""The graph runtime: graph runs in the store, continued by :data:`GRAPH_DRIVER`.

Importing this package registers the driver for runs of kind ``graph``
(``recipes.runs.drivers.register_driver``); the ``pi_recipes.run_drivers`` entry point names the
same object, so any host continues graph runs without importing the engine itself.

:func:`start_graph` starts a run. A node failure ends the run ``failed`` or, when a retry may
cure it (a model's usage window, an outage, a timeout, a command's non-zero exit),
``failed_resumable``: both are returned, not raised. Bad workflows and launch values raise
``GraphError`` (a ``UsageError``) before anything is written. A run another writer cancels (or
``runs recover`` marks) while it runs stops its running nodes within about a second, every
branch of a fan-out with them, and its leg raises ``ConflictError`` (reason ``run_cancelled``
for a cancel) without writing.

An agent node runs on its backend (:mod:`recipes.graph.backends`: in-process, or a ``pi``
subprocess over RPC); an ``interaction: async`` node posts questions while it works and an
``await_answers`` node waits for them (``_asyncq``). An LLM node's fallback routes
(``fallbacks:``) are walked by the runtime when its model fails, it runs past its timeout, or
its reply does not fit its schema (see docs/workflows.md).
"""

from __future__ import annotations

from recipes.graph.runtime._agent import node_tools
from recipes.graph.runtime._credentials import PLAN_REVIEW_BRAKE, credential_vars
from recipes.graph.runtime._driver import GraphDriver, path_lines
from recipes.graph.runtime._engine import DEFAULT_TIMEOUTS
from recipes.graph.runtime._events import GRAPH_EVENTS
from recipes.graph.runtime._state import Cursor, GraphCheckpoint, NodeRun, SessionState
from recipes.graph.runtime._vars import launch_vars, parse_assignments
from recipes.runs.drivers import register_driver

__all__ = [
    "DEFAULT_TIMEOUTS",
    "GRAPH_DRIVER",
    "GRAPH_EVENTS",
    "PLAN_REVIEW_BRAKE",
    "Cursor",
    "GraphCheckpoint",
    "GraphDriver",
    "NodeRun",
    "SessionState",
    "credential_vars",
    "launch_vars",
    "node_tools",
    "parse_assignments",
    "path_lines",
    "start_graph",
]

GRAPH_DRIVER = GraphDriver()
"""The driver of runs of kind ``graph``."""
register_driver("graph", GRAPH_DRIVER)


start_graph = GRAPH_DRIVER.start
"""Start a graph run of a workflow on a runner's store and drive it until it finishes, fails or
pauses: :meth:`GraphDriver.start` of :data:`GRAPH_DRIVER`."""
