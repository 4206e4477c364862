"""The channels of the default chain, in the design's order.

0. :class:`AutoResolveChannel` inside :func:`~interactions.auto_resolve_interactions`;
1. :class:`AutoApproveChannel` when ``PI_ASK_USER_AUTO_APPROVE`` is on;
2. :class:`DialogChannel` when the context has a UI (the dialog walk, driven on that UI);
3. :class:`InterruptChannel` when the run can pause (``awaiting_user``: the run pauses);
4. :class:`UnavailableChannel` otherwise.

A host inserts its own channel by building a new tuple around these (an MCP client's
elicitation before the interrupt, say) and hands it to the tool context.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

import anyio

from interactions._chain import AskCall, ChannelFacts
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
from interactions._people import approvers_of, required_approvals_of

__all__ = [
    "DEFAULT_CHANNELS",
    "AutoApproveChannel",
    "AutoResolveChannel",
    "DialogChannel",
    "InterruptChannel",
    "UnavailableChannel",
]


def _auto_outcome(request: AskUserRequest) -> AskUserOutcome:
    return Approved() if isinstance(request, ApprovalRequest) else Declined(reason="auto")


@dataclass(frozen=True)
class AutoResolveChannel:
    """Inside an auto-resolving scope: approvals approved, questions declined; nothing shown."""

    name: str = "auto_resolve_scope"

    def claims(self, request: AskUserRequest, facts: ChannelFacts) -> bool:
        """Claims every ask inside the scope."""
        return facts.auto_resolving

    async def resolve(self, call: AskCall) -> AskUserOutcome:
        """Approved for an approval, declined for a question."""
        return _auto_outcome(call.request)


@dataclass(frozen=True)
class AutoApproveChannel:
    """``PI_ASK_USER_AUTO_APPROVE`` on: approvals approved, questions declined; nothing shown."""

    name: str = "auto_approve_flag"

    def claims(self, request: AskUserRequest, facts: ChannelFacts) -> bool:
        """Claims every ask while the flag is on."""
        return facts.auto_approve

    async def resolve(self, call: AskCall) -> AskUserOutcome:
        """Approved for an approval, declined for a question."""
        return _auto_outcome(call.request)


@dataclass(frozen=True)
class DialogChannel:
    """The context has a UI: the dialog walk runs on it.

    A dismissed dialog or a timeout is ``declined``; so is a dialog still open when the ask
    expires (reason ``expired``: an answer after that would be refused by a durable run, so
    a dialog does not take it either); an aborted turn raises
    :class:`~interactions.InteractionAborted`; a cancellation that is not the turn's abort (a
    tool's own timeout around the ask) propagates as the cancellation it is.
    """

    name: str = "dialog"

    def claims(self, request: AskUserRequest, facts: ChannelFacts) -> bool:
        """Claims every ask when a human can answer a dialog now, except one that names its
        approvers or needs several approvals: whoever sits at a dialog is no one a host has
        signed in, so such an ask pauses (where the run can) for the people it names."""
        if approvers_of(request.metadata) or required_approvals_of(request.metadata) > 1:
            return False
        return facts.has_ui

    async def resolve(self, call: AskCall) -> AskUserOutcome:
        """The outcome of the dialog walk on ``call.ui``."""
        assert call.ui is not None, "the dialog channel claims only calls with a UI"
        with anyio.move_on_after(_seconds_until(call.expires_at, call.facts.now)):
            return await run_dialog(
                call.request,
                call.ui,
                timeout=call.timeout,
                tool_call_id=call.tool_call_id,
                aborted=call.aborted,
            )
        return Declined(reason="expired")  # the ask expired while its dialog was open


def _seconds_until(expires_at: str | None, now: datetime) -> float:
    """Seconds from ``now`` (the ask's, on the context's clock) to ``expires_at`` (ISO 8601),
    at least 0; no expiry: infinity."""
    if expires_at is None:
        return math.inf
    when = datetime.fromisoformat(expires_at)
    return max(0.0, (when - now).total_seconds())


@dataclass(frozen=True)
class InterruptChannel:
    """The run can pause: the ask resolves ``awaiting_user`` at once and the run pauses."""

    name: str = "interrupt"

    def claims(self, request: AskUserRequest, facts: ChannelFacts) -> bool:
        """Claims every ask when the run can pause."""
        return facts.can_pause

    async def resolve(self, call: AskCall) -> AskUserOutcome:
        """``awaiting_user`` on the call's interrupt id."""
        return AwaitingUser(interrupt_id=call.interrupt_id)


@dataclass(frozen=True)
class UnavailableChannel:
    """No channel can reach a human: ``unavailable`` (the model is told to ask in its reply)."""

    name: str = "unavailable"

    def claims(self, request: AskUserRequest, facts: ChannelFacts) -> bool:
        """Claims every ask: the end of every chain."""
        return True

    async def resolve(self, call: AskCall) -> AskUserOutcome:
        """``unavailable``."""
        return Unavailable()


DEFAULT_CHANNELS = (
    AutoResolveChannel(),
    AutoApproveChannel(),
    DialogChannel(),
    InterruptChannel(),
    UnavailableChannel(),
)
"""The design's chain: auto-resolving scope, auto-approve flag, dialog, interrupt, unavailable.
Insert a host channel by building a new tuple around these."""
