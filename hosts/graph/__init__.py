"""The graph engine: workflows of recipe agents, human pauses, durable and resumable.

A workflow is a ``.iter`` file (a subset of Iterion's language: :mod:`hosts.graph.language`)
or a graph built in Python (:mod:`hosts.graph.builder`); both give the IR of
:mod:`hosts.graph.ir`, which :mod:`hosts.graph.compiler` validates (diagnostics with a code,
a position and a fix line) and plans. :mod:`hosts.graph.runtime` runs it as a run of kind
``graph`` in the store: any host answers, resumes, retries and cancels it like any run.

Errors: a workflow that does not validate is :class:`~hosts.graph.compiler.GraphError` (a
``UsageError`` carrying its diagnostics); run-time failures are the run's status, not
exceptions.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "GRAPH_DRIVER",
    "Compiled",
    "Diagnostic",
    "GraphBuilder",
    "GraphDriver",
    "GraphError",
    "compile_graph",
    "load_graph",
    "parse",
    "start_graph",
    "unparse",
    "validate",
]

_HOME = {
    "GraphBuilder": "hosts.graph.builder",
    "Compiled": "hosts.graph.compiler",
    "GraphError": "hosts.graph.compiler",
    "compile_graph": "hosts.graph.compiler",
    "load_graph": "hosts.graph.compiler",
    "validate": "hosts.graph.compiler",
    "Diagnostic": "hosts.graph.language",
    "parse": "hosts.graph.language",
    "unparse": "hosts.graph.language",
    "GRAPH_DRIVER": "hosts.graph.runtime",
    "GraphDriver": "hosts.graph.runtime",
    "start_graph": "hosts.graph.runtime",
}


def __getattr__(name: str) -> Any:
    """The engine loads on first use (``pi-recipes`` builds its parser without it)."""
    if name not in _HOME:
        raise AttributeError(f"module 'hosts.graph' has no attribute {name!r}")
    return getattr(importlib.import_module(_HOME[name]), name)
