"""What runs an agent node: its backend, and whether the backend can carry async questions.

An ``agent``/``judge`` node says ``backend: recipe`` (the default: its recipe's agent runs in
this process) or ``backend: pi`` (the agent runs in a subprocess speaking pi's RPC protocol,
``pi-recipes rpc`` or another pi-compatible agent; async answers reach it as ``steer``
messages). A backend is an :class:`AgentBackend`; one that can carry async questions (the
``ask_user_async``/``await_answers`` tools and answers delivered at turn boundaries) says so
through :class:`AsyncQuestionBackend`. The check is made twice, as Iterion does: statically
(``C267``, over every route of an ``interaction: async`` node), and, for a backend known only
when the node runs (``backend: "{{vars.x}}"``), before the call: such a node fails with
``CAPABILITY_UNSUPPORTED`` and is not retried.

:func:`register_backend` adds a backend of your own (a program registers it before it
validates or runs its workflows). Iterion's other backends (``claw``, ``claude_code``,
``codex``, ``kimi``, ``grok``) are not run by this engine; the capability table keeps
Iterion's answer for them, so an async node naming one is told ``C267`` first.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from interactions import UsageError

if TYPE_CHECKING:
    from recipes.graph import ir
    from recipes.graph.runtime._context import Mode, NodeContext, NodeOutcome
    from recipes.graph.runtime._state import NodeRun

__all__ = [
    "BUILTIN",
    "DEFAULT_BACKEND",
    "ITERION_ONLY_BACKENDS",
    "AgentBackend",
    "AsyncQuestionBackend",
    "backend_names",
    "get_backend",
    "register_backend",
    "supports_async_questions",
    "unregister_backend",
]

DEFAULT_BACKEND = "recipe"
"""The backend of a node that names none: its recipe's agent, in this process."""

BUILTIN: dict[str, str] = {
    "recipe": "recipes.graph.runtime._agent:RECIPE_BACKEND",
    "pi": "recipes.graph.runtime._pi:PI_BACKEND",
}
"""This engine's backends, loaded on first use (``module:attribute``)."""

ITERION_ONLY_BACKENDS: dict[str, bool] = {
    "claw": True,
    "claude_code": True,
    "codex": False,
    "kimi": False,
    "grok": False,
}
"""Iterion's backends this engine does not run, with whether they carry async questions."""

_BUILTIN_ASYNC = {"recipe": True, "pi": True}
_registered: dict[str, AgentBackend] = {}


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


@runtime_checkable
class AsyncQuestionBackend(Protocol):
    """A backend that says whether it carries async questions (one that does not implement
    this protocol cannot)."""

    def supports_async_questions(self) -> bool:
        """Whether an ``interaction: async`` node may run on this backend."""
        ...


def register_backend(name: str, backend: AgentBackend) -> None:
    """Make ``backend: <name>`` run ``backend``. Raises ``UsageError`` for a built-in's name,
    a name that is not an identifier, or an object that is not an :class:`AgentBackend`."""
    if not name.isidentifier():
        raise UsageError(f"a backend's name is an identifier, got {name!r}")
    if name in BUILTIN or name in ITERION_ONLY_BACKENDS:
        raise UsageError(f"backend {name!r} is built in or reserved; choose another name")
    if not isinstance(backend, AgentBackend):
        signature = "async def run(ctx, node, run, mode, route=None)"
        raise UsageError(f"backend {name!r} has no `{signature}`")
    _registered[name] = backend


def unregister_backend(name: str) -> None:
    """Forget the backend registered as ``name`` (nothing happens for an unknown name)."""
    _registered.pop(name, None)


def backend_names() -> list[str]:
    """The backends this engine runs: the built-in ones, then the registered ones."""
    return [*BUILTIN, *_registered]


def supports_async_questions(name: str) -> bool | None:
    """Whether backend ``name`` carries async questions (``None``: no backend of that name)."""
    if name in _BUILTIN_ASYNC:
        return _BUILTIN_ASYNC[name]
    if name in ITERION_ONLY_BACKENDS:
        return ITERION_ONLY_BACKENDS[name]
    backend = _registered.get(name)
    if backend is None:
        return None
    return isinstance(backend, AsyncQuestionBackend) and bool(backend.supports_async_questions())


def get_backend(name: str) -> AgentBackend:
    """The backend ``name`` runs on. Raises ``UsageError`` for one this engine does not run."""
    if name in _registered:
        return _registered[name]
    if name in BUILTIN:
        module, _, attribute = BUILTIN[name].partition(":")
        found: AgentBackend = getattr(importlib.import_module(module), attribute)
        return found
    known = ", ".join(backend_names())
    if name in ITERION_ONLY_BACKENDS:
        raise UsageError(f"backend {name!r} is Iterion's; this engine runs {known}")
    raise UsageError(f"no backend {name!r}; this engine runs {known}")
