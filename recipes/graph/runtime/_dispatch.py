"""An agent node's call on one route goes to the route's backend: resolved (a ``{{vars.x}}``
backend when the node runs), checked (an ``interaction: async`` node needs a backend that
carries async questions: otherwise ``CAPABILITY_UNSUPPORTED``, before any call, and not
retried), then run.

:class:`AgentBackend` is what the runtime calls; :func:`get_backend` finds one by name (a
registered one, else a built-in one, loaded on first use). Both are public through
:mod:`recipes.graph.backends`.
"""

from __future__ import annotations

import importlib
from typing import Protocol, runtime_checkable

from interactions import UsageError
from recipes.graph import ir
from recipes.graph._registry import (
    BUILTIN,
    DEFAULT_BACKEND,
    ITERION_ONLY_BACKENDS,
    backend_names,
    registered,
    supports_async_questions,
)
from recipes.graph.compiler import VAR_REF
from recipes.graph.language import MISSING
from recipes.graph.runtime._context import Mode, NodeContext, NodeOutcome, failed
from recipes.graph.runtime._state import NodeRun

__all__ = ["AgentBackend", "backend_name", "get_backend", "run_on_backend"]


@runtime_checkable
class AgentBackend(Protocol):
    """Runs (or resumes, or retries) one execution of an agent node."""

    async def run(
        self,
        ctx: NodeContext,
        node: ir.LLMNode,
        run: NodeRun,
        mode: Mode,
        route: ir.Route | None = None,
    ) -> NodeOutcome:
        """Do the node's work on ``route`` (its model: a fallback route's own, else the node's;
        ``None``: the primary route); a failure is a failed :class:`NodeOutcome`, not an
        exception."""
        ...


def get_backend(name: str) -> AgentBackend:
    """The backend ``name`` runs on. Raises ``UsageError`` for one this engine does not run."""
    found = registered(name)
    if isinstance(found, AgentBackend):
        return found
    if name in BUILTIN:
        module, _, attribute = BUILTIN[name].partition(":")
        builtin: AgentBackend = getattr(importlib.import_module(module), attribute)
        return builtin
    known = ", ".join(backend_names())
    if name in ITERION_ONLY_BACKENDS:
        raise UsageError(f"backend {name!r} is Iterion's; this engine runs {known}")
    raise UsageError(f"no backend {name!r}; this engine runs {known}")


def backend_name(ctx: NodeContext, route: ir.Route) -> str | None:
    """The backend ``route`` names, its ``{{vars.x}}`` resolved (``None``: the var has no
    value)."""
    name = route.backend or DEFAULT_BACKEND
    ref = VAR_REF.match(name)
    if ref is None:
        return name
    value = ctx.scope.lookup(("vars", ref.group(1)))
    return None if value is MISSING or value is None else str(value)


async def run_on_backend(
    ctx: NodeContext, node: ir.LLMNode, run: NodeRun, mode: Mode, route: ir.Route
) -> NodeOutcome:
    """Run ``node`` on ``route``'s backend (see the module docstring)."""
    name = backend_name(ctx, route)
    if name is None:
        return failed(f"the backend of `{node.name}` ({route.backend}) has no value",
                      "UNKNOWN_BACKEND")  # fmt: skip
    try:
        backend = get_backend(name)
    except UsageError as exc:
        return failed(f"`{node.name}`: {exc}", "UNKNOWN_BACKEND")
    if node.interaction == "async" and not supports_async_questions(name):
        return failed(
            f"`{node.name}` is `interaction: async`, but its backend `{name}` cannot carry "
            "async questions; it was not called (choose a backend that can: recipe or pi)",
            "CAPABILITY_UNSUPPORTED",
        )
    return await backend.run(ctx, node, run, mode, route)
