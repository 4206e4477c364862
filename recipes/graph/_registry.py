"""Which backends the engine knows: their names, and whether each carries async questions.

Below both the compiler (which checks a node's backend by name: ``P010``, ``C267``, ``S001``)
and the runtime (which runs it), so that neither imports the other for it; it knows nothing of
how a backend runs. :mod:`recipes.graph.backends` is the public face: it checks what is
registered against :class:`~recipes.graph.backends.AgentBackend` before it is kept here.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = [
    "BUILTIN",
    "DEFAULT_BACKEND",
    "ITERION_ONLY_BACKENDS",
    "AsyncQuestionBackend",
    "backend_names",
    "forget",
    "keep",
    "registered",
    "supports_async_questions",
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
_registered: dict[str, object] = {}


@runtime_checkable
class AsyncQuestionBackend(Protocol):
    """A backend that says whether it carries async questions (one that does not implement
    this protocol cannot)."""

    def supports_async_questions(self) -> bool:
        """Whether an ``interaction: async`` node may run on this backend."""
        ...


def keep(name: str, backend: object) -> None:
    """Keep ``backend`` as the one registered as ``name`` (the caller checked both)."""
    _registered[name] = backend


def forget(name: str) -> None:
    """Forget the backend registered as ``name`` (nothing happens for an unknown name)."""
    _registered.pop(name, None)


def registered(name: str) -> object | None:
    """The backend registered as ``name`` (``None``: none is)."""
    return _registered.get(name)


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
