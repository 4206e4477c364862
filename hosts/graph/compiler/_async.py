"""Checks of async questions and backends: ``interaction: async``, ``await_answers`` nodes,
and whether each agent's backend exists and carries the async questions it is asked to.

- ``C240``: ``interaction: async`` on a ``human`` node (a human node is the blocking question).
- ``C241``: an ``await_answers`` node without a positive ``timeout:`` (``"0s"`` included).
- ``C242`` (warning): ``from:`` naming a missing or non-async node (the wait could only time
  out, or end at once).
- ``C267``: an async agent whose backend (on any route, fallbacks included) cannot carry async
  questions; a backend given as ``{{vars.x}}`` is checked when the node runs.
- ``P010``: a backend this engine does not know; ``S001`` for one of Iterion's it does not run.
"""

from __future__ import annotations

import re

from hosts.graph import ir
from hosts.graph.backends import ITERION_ONLY_BACKENDS, backend_names, supports_async_questions
from hosts.graph.language import Diagnostic, diag, duration_seconds

__all__ = ["VAR_REF", "check_async"]

VAR_REF = re.compile(r"^\{\{\s*vars\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}$")
"""A routing field resolved when the node runs: exactly one ``{{vars.NAME}}``."""


def _is_async(node: ir.Node | None) -> bool:
    return isinstance(node, ir.LLMNode) and node.interaction == "async"


def _backends(graph: ir.Graph, node: ir.LLMNode) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    declared = {v.name for v in graph.all_vars()}
    for route in node.routes:
        name = route.backend
        if name is None:
            continue
        ref = VAR_REF.match(name)
        if ref is not None:
            if ref.group(1) not in declared:
                out.append(diag("C033", f"backend of `{node.name}`: no var `{ref.group(1)}`",
                                node.pos))  # fmt: skip
            continue
        can = supports_async_questions(name)
        route_name = "" if route.name == "primary" else f" (route `{route.name}`)"
        if can is None:
            out.append(
                diag(
                    "P010",
                    f"`{node.name}`{route_name}: no backend `{name}`; this engine runs "
                    f"{', '.join(backend_names())}",
                    node.pos,
                )
            )
            continue
        if _is_async(node) and not can:
            out.append(
                diag(
                    "C267",
                    f"`{node.name}` is `interaction: async`, but its backend `{name}`"
                    f"{route_name} cannot carry async questions",
                    node.pos,
                )
            )
        elif name in ITERION_ONLY_BACKENDS:
            out.append(
                diag("S001", f"backend `{name}` of `{node.name}` is Iterion's; this engine "
                     f"runs {', '.join(backend_names())}", node.pos)
            )
    return out


def check_async(graph: ir.Graph) -> list[Diagnostic]:
    """C240, C241, C242, C267, and the backends' names (see the module docstring)."""
    out: list[Diagnostic] = []
    for node in graph.nodes:
        if isinstance(node, ir.HumanNode) and node.interaction == "async":
            out.append(
                diag("C240", f"`interaction: async` on human node `{node.name}`", node.pos)
            )
        if isinstance(node, ir.LLMNode):
            out += _backends(graph, node)
        if not isinstance(node, ir.AwaitAnswersNode):
            continue
        if duration_seconds(node.timeout) is None:
            given = "no `timeout:`" if node.timeout is None else f"timeout {node.timeout!r}"
            out.append(
                diag("C241", f"await_answers `{node.name}` has {given}; it needs a positive one",
                     node.pos)
            )
        if node.from_ is not None:
            source = graph.node(node.from_)
            if source is None:
                out.append(
                    diag("C242", f"await_answers `{node.name}` waits on `{node.from_}`, which is "
                         "not declared", node.pos)
                )
            elif not _is_async(source):
                out.append(
                    diag("C242", f"await_answers `{node.name}` waits on `{node.from_}`, which "
                         "posts no async questions (it is not `interaction: async`)",
                         node.pos)
                )
    return out
