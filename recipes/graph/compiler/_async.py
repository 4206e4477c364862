"""Checks of async questions and backends: ``interaction: async``, ``await_answers`` nodes,
and whether each agent's backend exists and carries the async questions it is asked to.

- ``C240``: ``interaction: async`` on a ``human`` node (a human node is the blocking question).
- ``C241``: an ``await_answers`` node without a positive ``timeout:`` (``"0s"`` included).
- ``C242`` (warning): ``from:`` naming a missing or non-async node (the wait could only time
  out: at run time such a gate waits out its timeout, then fails citing C242).
- ``P011``: an ``await_answers`` node that no node posting its questions can run before (its
  ``from:`` node, else any ``interaction: async`` node, has no path to it): it would pass at
  once with no answers while the questions, asked later, stay pending.
- ``C267``: an async agent whose backend (on any route, fallbacks included) cannot carry async
  questions; a backend given as ``{{vars.x}}`` is checked when the node runs.
- ``P010``: a backend this engine does not know; ``S001`` for one of Iterion's it does not run.
"""

from __future__ import annotations

import re
from typing import assert_never

from recipes.graph import ir
from recipes.graph._registry import ITERION_ONLY_BACKENDS, backend_names, supports_async_questions
from recipes.graph.compiler._analysis import Plan, reachable
from recipes.graph.language import Diagnostic, diag, did_you_mean, duration_seconds

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
                hint = did_you_mean(ref.group(1), declared)
                out.append(diag("C033", f"backend of `{node.name}`: no var `{ref.group(1)}`{hint}",
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


def _asked_after(plan: Plan, node: ir.AwaitAnswersNode) -> Diagnostic | None:
    """P011 when no node whose questions ``node`` waits on can run before it."""
    graph = plan.graph
    if node.from_ is not None:
        if not _is_async(graph.node(node.from_)):
            return None  # C242 says so
        askers = [node.from_]
    else:
        askers = [n.name for n in graph.nodes if _is_async(n)]
    if any(node.name in reachable(plan.outgoing, [asker]) for asker in askers):
        return None
    if node.from_ is not None:
        message = (f"await_answers `{node.name}` waits on `{node.from_}`, which never runs "
                   f"before it (no edge path leads from `{node.from_}` to `{node.name}`): "
                   "the gate would pass at once with no answers")
        fix = (f"Put `{node.name}` after `{node.from_}` (`{node.from_} -> … -> {node.name}`), "
               "or name in `from:` the async node that runs before it.")
    else:
        which = ("no `interaction: async` node runs before it" if askers
                 else "the workflow has no `interaction: async` node")
        message = (f"await_answers `{node.name}` waits on the run's async questions, but "
                   f"{which}: the gate would pass at once with no answers")
        fix = (f"Put `{node.name}` after the `interaction: async` agent or judge whose "
               "questions it waits for, or remove the gate.")
    return diag("P011", message, node.pos, fix=fix)


def check_async(plan: Plan) -> list[Diagnostic]:
    """C240, C241, C242, C267, P011, and the backends' names (see the module docstring)."""
    graph = plan.graph
    out: list[Diagnostic] = []
    for node in graph.nodes:
        match node:
            case ir.HumanNode():
                if node.interaction == "async":
                    message = f"`interaction: async` on human node `{node.name}`"
                    out.append(diag("C240", message, node.pos))
            case ir.LLMNode():
                out += _backends(graph, node)
            case ir.AwaitAnswersNode():
                out += _gate(plan, node)
            case ir.ComputeNode() | ir.ToolNode() | ir.RouterNode():
                pass
            case _:
                assert_never(node)
    return out


def _gate(plan: Plan, node: ir.AwaitAnswersNode) -> list[Diagnostic]:
    """C241, C242 and P011 for an ``await_answers`` node."""
    graph = plan.graph
    out: list[Diagnostic] = []
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
                     "not declared" + did_you_mean(node.from_, (n.name for n in graph.nodes)),
                     node.pos)
            )
        elif not _is_async(source):
            out.append(
                diag("C242", f"await_answers `{node.name}` waits on `{node.from_}`, which "
                     "posts no async questions (it is not `interaction: async`)",
                     node.pos)
            )
    if graph.workflows and (late := _asked_after(plan, node)) is not None:
        out.append(late)
    return out
