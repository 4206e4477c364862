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

from hosts.graph.builder import GraphBuilder
from hosts.graph.compiler import Compiled, GraphError, compile_graph, load_graph, validate
from hosts.graph.language import Diagnostic, parse, unparse
from hosts.graph.runtime import GRAPH_DRIVER, GraphDriver, start_graph

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
