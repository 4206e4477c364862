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

This module is the face of two pieces: the names and capabilities the compiler checks a
workflow against (``recipes.graph._registry``, below the compiler) and the protocol the runtime
calls (``recipes.graph.runtime``): it sits above both, so neither imports the other for it.
"""

from __future__ import annotations

from interactions import UsageError
from recipes.graph import _registry
from recipes.graph._registry import (
    BUILTIN,
    DEFAULT_BACKEND,
    ITERION_ONLY_BACKENDS,
    AsyncQuestionBackend,
    backend_names,
    supports_async_questions,
)
from recipes.graph.runtime._dispatch import AgentBackend, get_backend

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
    _registry.keep(name, backend)


def unregister_backend(name: str) -> None:
    """Forget the backend registered as ``name`` (nothing happens for an unknown name)."""
    _registry.forget(name)
