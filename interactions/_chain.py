"""The channel chain: which channel answers an ask, decided from a frozen snapshot of facts.

The decision (:func:`select_channel`) is pure: a function of the request and the facts. The facts
come from the tool's context (its environment, its UI, what its host can do), read once per ask
by :func:`gather_facts`. This module names no host and drives no dialog: the channels themselves
live in :mod:`interactions._channels`.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar, Token
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol, TypeVar, cast, runtime_checkable

from interactions._context import DialogUI, ToolContextLike
from interactions._errors import ContractError, UsageError
from interactions._models import AskUserOutcome, AskUserRequest

__all__ = [
    "AUTO_APPROVE_ENV",
    "INTERRUPT_RESUME_ENV",
    "AskCall",
    "Channel",
    "ChannelFacts",
    "auto_resolve_interactions",
    "context_now",
    "env_flag",
    "flag_on",
    "gather_facts",
    "select_channel",
]

AUTO_APPROVE_ENV = "PI_ASK_USER_AUTO_APPROVE"
"""On: every ask resolves at once (approvals approved, questions declined). For CI."""
INTERRUPT_RESUME_ENV = "PI_INTERRUPT_RESUME"
"""On: an ask that no dialog answers pauses the run with an interrupt."""

F = TypeVar("F", bound=Callable[..., Any])

_auto_resolving: ContextVar[bool] = ContextVar("pi_recipes_auto_resolving", default=False)


class auto_resolve_interactions:  # lower case: called like the function it replaced
    """Within this block, every ask resolves at once without showing anything.

    Approvals resolve ``approved``; questions resolve ``declined``. Meant for child agents run
    in-process, whose parent already holds the human's attention. The scope follows the
    context: tasks started inside it inherit it. ``with auto_resolve_interactions():``, or as a
    decorator (``@auto_resolve_interactions()``) of a function or a coroutine function, whose
    whole run (every ``await`` of it) is then in the scope.
    """

    def __init__(self) -> None:
        self._tokens: list[Token[bool]] = []

    def __enter__(self) -> None:
        self._tokens.append(_auto_resolving.set(True))

    def __exit__(self, *exc: object) -> None:
        _auto_resolving.reset(self._tokens.pop())

    def __call__(self, fn: F) -> F:
        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def scoped_async(*args: Any, **kwargs: Any) -> Any:
                with auto_resolve_interactions():
                    return await fn(*args, **kwargs)

            return cast("F", scoped_async)

        @functools.wraps(fn)
        def scoped(*args: Any, **kwargs: Any) -> Any:
            with auto_resolve_interactions():
                return fn(*args, **kwargs)

        return cast("F", scoped)


def flag_on(value: str | None) -> bool:
    """An environment flag's truth: off when unset, empty, ``0`` or ``false`` (any case,
    trimmed); on for anything else."""
    return value is not None and value.strip().lower() not in ("", "0", "false")


def env_flag(env: Mapping[str, str], name: str) -> bool:
    """The flag ``name`` of the environment ``env`` (see :func:`flag_on`).

    Raises :class:`~interactions.ContractError` when its value is not a string (``True``,
    ``1``...): an environment holds text, and guessing what another type means could ask a
    human where none was meant to be asked, or skip one.
    """
    value = env.get(name)
    if value is not None and not isinstance(value, str):
        raise ContractError(
            f"{name}={value!r} in the session's environment is a {type(value).__name__}; "
            "environment values are strings: give '1' (on) or '0' (off)"
        )
    return flag_on(value)


@dataclass(frozen=True)
class ChannelFacts:
    """Everything the chain decides on, read once per ask.

    ``can_pause`` is true when ``PI_INTERRUPT_RESUME`` is on in the session's environment or
    the host says it can pause the run; ``mode`` is the host's own word for how the agent runs;
    ``now`` is the ask's now on the context's clock (aware, UTC): a channel that waits for a
    human measures what is left until the ask's ``expires_at`` from it.
    """

    auto_resolving: bool
    auto_approve: bool
    has_ui: bool
    can_pause: bool
    mode: str
    now: datetime


def context_now(ctx: ToolContextLike) -> datetime:
    """Now on the context's clock (its ``clock`` attribute; without one, the wall clock), in
    UTC. Read it once per ask. Raises :class:`~interactions.UsageError` for a clock that gives
    a naive ``datetime`` (a time in no zone cannot be compared with an expiry)."""
    clock = getattr(ctx, "clock", None)
    now = datetime.now(UTC) if clock is None else clock()
    if not isinstance(now, datetime) or now.tzinfo is None:
        raise UsageError(
            f"the tool context's clock gave {now!r}; a clock gives an aware datetime "
            "(datetime.now(UTC))"
        )
    return now.astimezone(UTC)


def gather_facts(
    ctx: ToolContextLike,
    env: Mapping[str, str],
    interactive: bool | None = None,
    *,
    now: datetime | None = None,
) -> ChannelFacts:
    """Read the facts of one ask from the context, the environment and ``interactive``.

    ``env`` is the session's environment (``ctx.env``) or the caller's explicit override.
    ``interactive=False`` keeps the dialog channel out even when a UI is there; ``True`` or
    ``None`` use it when the context has a UI. ``now`` is the ask's now, when its caller read
    it already (:func:`context_now`); otherwise it is read here.
    """
    has_ui = bool(ctx.has_ui) and ctx.ui is not None and interactive is not False
    return ChannelFacts(
        auto_resolving=_auto_resolving.get(),
        auto_approve=env_flag(env, AUTO_APPROVE_ENV),
        has_ui=has_ui,
        can_pause=env_flag(env, INTERRUPT_RESUME_ENV) or bool(getattr(ctx, "can_pause", False)),
        mode=str(ctx.mode),
        now=context_now(ctx) if now is None else now,
    )


def _never() -> bool:
    return False


@dataclass(frozen=True)
class AskCall:
    """One ask as a channel sees it.

    ``timeout`` is the caller's bound on a dialog (``None``: the UI's own default, if any);
    ``aborted`` tells whether the turn was aborted, so a channel can tell an abort from a
    timeout when its wait is cancelled; ``expires_at`` is the ask's expiry (ISO 8601, UTC, as
    its interrupt carries it), so a channel that waits for a human waits no longer than that.
    """

    request: AskUserRequest
    interrupt_id: str
    tool_call_id: str | None
    facts: ChannelFacts
    ui: DialogUI | None
    timeout: float | None
    aborted: Callable[[], bool] = _never
    expires_at: str | None = None


@runtime_checkable
class Channel(Protocol):
    """A way to resolve an ask. ``claims`` is pure; ``resolve`` may do I/O."""

    @property
    def name(self) -> str:
        """A short name for logs and the audit trail (``dialog``, ``interrupt``, ...)."""
        ...

    def claims(self, request: AskUserRequest, facts: ChannelFacts) -> bool:
        """Whether this channel answers the ask (pure: decided from the facts alone)."""
        ...

    async def resolve(self, call: AskCall) -> AskUserOutcome:
        """Answer the ask. ``awaiting_user`` means the run must pause on ``call.interrupt_id``."""
        ...


def select_channel(
    request: AskUserRequest, facts: ChannelFacts, channels: Sequence[Channel]
) -> Channel | None:
    """The first channel of ``channels`` that claims the ask, or ``None`` (pure; no I/O)."""
    for channel in channels:
        if channel.claims(request, facts):
            return channel
    return None
