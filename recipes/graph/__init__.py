"""The graph engine: workflows of recipe agents, human pauses, durable and resumable.

A workflow is a ``.iter`` file (a subset of Iterion's language: :mod:`recipes.graph.language`)
or a graph built in Python (:mod:`recipes.graph.builder`); both give the IR of
:mod:`recipes.graph.ir`, which :mod:`recipes.graph.compiler` validates (diagnostics with a code,
a position and a fix line) and plans. :mod:`recipes.graph.runtime` runs it as a run of kind
``graph`` in the store: any host answers, resumes, retries and cancels it like any run.
:mod:`recipes.graph.picture` draws a workflow (SVG, Mermaid) and a run's node states.

Errors: a workflow that does not validate is :class:`~recipes.graph.compiler.GraphError` (a
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
    "GraphBuilder": "recipes.graph.builder",
    "Compiled": "recipes.graph.compiler",
    "GraphError": "recipes.graph.compiler",
    "compile_graph": "recipes.graph.compiler",
    "load_graph": "recipes.graph.compiler",
    "validate": "recipes.graph.compiler",
    "Diagnostic": "recipes.graph.language",
    "parse": "recipes.graph.language",
    "unparse": "recipes.graph.language",
    "GRAPH_DRIVER": "recipes.graph.runtime",
    "GraphDriver": "recipes.graph.runtime",
    "start_graph": "recipes.graph.runtime",
}


def __getattr__(name: str) -> Any:
    """The engine loads on first use (``pi-recipes`` builds its parser without it)."""
    if name not in _HOME:
        raise AttributeError(f"module 'recipes.graph' has no attribute {name!r}")
    return getattr(importlib.import_module(_HOME[name]), name)
