"""The channel chain: which channel answers an ask, decided from a frozen snapshot of facts.

The decision (:func:`select_channel`) is pure: a function of the facts. Each channel's
``resolve`` does the I/O, if any. Hosts may insert their own channels; the default chain is the
design's order, exactly.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from interactions._context import DialogUI, ToolContextLike
from interactions._dialog import run_dialog
from interactions._models import (
    ApprovalRequest,
    Approved,
    AskUserOutcome,
    AskUserRequest,
    AwaitingUser,
    Declined,
    Unavailable,
)

__all__ = [
    "AUTO_APPROVE_ENV",
    "DEFAULT_CHANNELS",
    "INTERRUPT_RESUME_ENV",
    "RPC_DIALOG_TIMEOUT",
    "AskCall",
    "Channel",
    "ChannelFacts",
    "auto_resolve_interactions",
    "flag_on",
    "gather_facts",
    "select_channel",
]

AUTO_APPROVE_ENV = "PI_ASK_USER_AUTO_APPROVE"
INTERRUPT_RESUME_ENV = "PI_INTERRUPT_RESUME"
RPC_DIALOG_TIMEOUT = 120.0
"""Seconds an RPC-mode dialog waits when the caller gives no ``timeout``."""

_auto_resolving: ContextVar[bool] = ContextVar("pi_recipes_auto_resolving", default=False)


@contextlib.contextmanager
def auto_resolve_interactions() -> Iterator[None]:
    """Within this block, every ask resolves at once without showing anything.

    Approvals resolve ``approved``; questions resolve ``declined``. Meant for child agents run
    in-process, whose parent already holds the human's attention. The scope follows the
    context: tasks started inside it inherit it.
    """
    token = _auto_resolving.set(True)
    try:
        yield
    finally:
        _auto_resolving.reset(token)


def flag_on(value: str | None) -> bool:
    """An environment flag's truth: off when unset, empty, ``0`` or ``false`` (any case,
    trimmed); on for anything else."""
    return value is not None and value.strip().lower() not in ("", "0", "false")


@dataclass(frozen=True)
class ChannelFacts:
    """Everything the chain decides on, read once per ask."""

    auto_resolving: bool
    auto_approve: bool
    has_ui: bool
    interrupt_resume: bool
    mode: str


def gather_facts(
    ctx: ToolContextLike, env: Mapping[str, str] | None = None, interactive: bool | None = None
) -> ChannelFacts:
    """Read the facts of one ask from the context, the environment and ``interactive``.

    ``interactive=False`` keeps the dialog channel out even when a UI is there; ``True`` or
    ``None`` use it when the context has a UI.
    """
    env = os.environ if env is None else env
    has_ui = bool(ctx.has_ui) and ctx.ui is not None and interactive is not False
    return ChannelFacts(
        auto_resolving=_auto_resolving.get(),
        auto_approve=flag_on(env.get(AUTO_APPROVE_ENV)),
        has_ui=has_ui,
        interrupt_resume=flag_on(env.get(INTERRUPT_RESUME_ENV)),
        mode=str(ctx.mode),
    )


@dataclass(frozen=True)
class AskCall:
    """One ask as a channel sees it."""

    request: AskUserRequest
    interrupt_id: str
    tool_call_id: str
    facts: ChannelFacts
    ui: DialogUI | None
    timeout: float | None


@runtime_checkable
class Channel(Protocol):
    """A way to resolve an ask. ``claims`` is pure; ``resolve`` may do I/O."""

    @property
    def name(self) -> str:
        """A short name for logs and the audit trail (``dialog``, ``interrupt``, ...)."""
        ...

    def claims(self, request: AskUserRequest, facts: ChannelFacts) -> bool: ...

    async def resolve(self, call: AskCall) -> AskUserOutcome: ...


def _auto_outcome(request: AskUserRequest) -> AskUserOutcome:
    return Approved() if isinstance(request, ApprovalRequest) else Declined(reason="auto")


@dataclass(frozen=True)
class _AutoResolveScope:
    name: str = "auto_resolve_scope"

    def claims(self, request: AskUserRequest, facts: ChannelFacts) -> bool:
        return facts.auto_resolving

    async def resolve(self, call: AskCall) -> AskUserOutcome:
        return _auto_outcome(call.request)


@dataclass(frozen=True)
class _AutoApproveFlag:
    name: str = "auto_approve_flag"

    def claims(self, request: AskUserRequest, facts: ChannelFacts) -> bool:
        return facts.auto_approve

    async def resolve(self, call: AskCall) -> AskUserOutcome:
        return _auto_outcome(call.request)


@dataclass(frozen=True)
class _Dialog:
    name: str = "dialog"

    def claims(self, request: AskUserRequest, facts: ChannelFacts) -> bool:
        return facts.has_ui

    async def resolve(self, call: AskCall) -> AskUserOutcome:
        assert call.ui is not None, "the dialog channel claims only calls with a UI"
        timeout = call.timeout
        if timeout is None and call.facts.mode == "rpc":
            timeout = RPC_DIALOG_TIMEOUT
        return await run_dialog(
            call.request, call.ui, timeout=timeout, tool_call_id=call.tool_call_id
        )


@dataclass(frozen=True)
class _Interrupt:
    name: str = "interrupt"

    def claims(self, request: AskUserRequest, facts: ChannelFacts) -> bool:
        return facts.interrupt_resume

    async def resolve(self, call: AskCall) -> AskUserOutcome:
        return AwaitingUser(interrupt_id=call.interrupt_id)


@dataclass(frozen=True)
class _Unavailable:
    name: str = "unavailable"

    def claims(self, request: AskUserRequest, facts: ChannelFacts) -> bool:
        return True

    async def resolve(self, call: AskCall) -> AskUserOutcome:
        return Unavailable()


DEFAULT_CHANNELS: tuple[Channel, ...] = (
    _AutoResolveScope(),
    _AutoApproveFlag(),
    _Dialog(),
    _Interrupt(),
    _Unavailable(),
)
"""The design's chain: auto-resolving scope, auto-approve flag, dialog, interrupt, unavailable.
Insert a host channel by building a new tuple around these."""


def select_channel(
    request: AskUserRequest, facts: ChannelFacts, channels: Sequence[Channel] = DEFAULT_CHANNELS
) -> Channel:
    """The first channel of ``channels`` that claims the ask (pure; no I/O)."""
    for channel in channels:
        if channel.claims(request, facts):
            return channel
    return _Unavailable()
