"""The MCP elicitation channel: an ask shown by the connected MCP client, as a form.

The channel sits in the chain where the design puts a host's channel, after the auto-resolving
scope, the auto-approve flag and the dialog, before the durable interrupt: :func:`mcp_channels`
builds that chain. It claims an ask only when the client declared the elicitation capability
(form mode) and the request it serves can carry a server-to-client request; otherwise the ask
falls through to the interrupt (``PI_INTERRUPT_RESUME``) or ``unavailable``, exactly as the
default chain would decide.

The I/O is injected (:data:`Elicit`): the channel decides what to send, how long to wait and
what the reply means (:mod:`hosts.mcp._forms`); the MCP session only moves the request.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import anyio

from hosts.mcp._forms import elicitation_form, read_elicitation
from interactions import AskUserOutcome, Declined, InteractionAborted
from interactions.asks import AskUserRequest
from interactions.channels import (
    DEFAULT_CHANNELS,
    AskCall,
    Channel,
    ChannelFacts,
    InterruptChannel,
)

__all__ = [
    "Elicit",
    "ElicitationChannel",
    "ElicitationReply",
    "ElicitationTimeout",
    "elicitation_timeout",
    "mcp_channels",
]


@dataclass(frozen=True)
class ElicitationReply:
    """The client's reply to an elicitation: its ``action`` (``accept``, ``decline``,
    ``cancel``) and, for ``accept``, the form ``content``."""

    action: str
    content: Mapping[str, Any] | None = None


class ElicitationTimeout(Exception):
    """The client did not reply before the elicitation's timeout (the ask's expiry)."""


Elicit = Callable[[str, dict[str, Any], float], Awaitable[ElicitationReply]]
"""``await elicit(message, requested_schema, timeout)``: send one ``elicitation/create`` (form
mode) and return the client's reply. Raises :class:`ElicitationTimeout` when ``timeout``
seconds pass without one (the request is then cancelled at the client)."""


def elicitation_timeout(
    timeout: float | None, expires_at: str | None, now: datetime | None = None
) -> float:
    """How long an elicitation may wait: until the ask expires (``expires_at``, ISO 8601), and
    no longer than the caller's ``timeout``; at least a millisecond. An ask without either
    waits for ever (``math.inf``); the ask helpers always give an expiry."""
    bound = math.inf if timeout is None else timeout
    if expires_at is not None:
        when = datetime.fromisoformat(expires_at)
        left = (when - (now or datetime.now(UTC))).total_seconds()
        bound = min(bound, left)
    return max(bound, 0.001)


@dataclass(frozen=True)
class ElicitationChannel:
    """Answers an ask through the MCP client's elicitation (see the module docstring).

    ``available`` says whether the connected client can be sent an elicitation now (read once
    when the tool call starts); ``elicit`` sends it. A reply is read by
    :func:`~hosts.mcp._forms.read_elicitation`: answered, approved, revision requested or
    declined; a timeout (the ask's expiry, or the caller's ``timeout``) is a decline. A
    cancellation while the tool call is aborted (the client cancelled its request) raises
    :class:`~interactions.InteractionAborted`; a malformed reply raises
    :class:`~interactions.InvalidPayloadError`.
    """

    elicit: Elicit
    available: bool
    protocol_version: str | None = None
    """The MCP version the client negotiated: it decides the forms' shapes (``None``: the
    latest; see :mod:`hosts.mcp._forms`)."""
    name: str = "mcp_elicitation"

    def claims(self, request: AskUserRequest, facts: ChannelFacts) -> bool:
        """Claims every ask the chain passes down to it while the client can elicit."""
        return self.available

    async def resolve(self, call: AskCall) -> AskUserOutcome:
        """Send the ask's form to the client and read its reply."""
        form = elicitation_form(call.request, protocol_version=self.protocol_version)
        wait = elicitation_timeout(call.timeout, call.expires_at)
        try:
            reply = await self.elicit(form.message, form.requested_schema, wait)
        except ElicitationTimeout:
            return Declined(reason="timeout")
        except anyio.get_cancelled_exc_class() as exc:
            if not call.aborted():
                raise
            raise InteractionAborted(
                "the MCP client cancelled the tool call while its question was shown",
                tool_call_id=call.tool_call_id,
            ) from exc
        return read_elicitation(
            call.request,
            reply.action,
            reply.content,
            interaction_id=call.interrupt_id,
            protocol_version=self.protocol_version,
        )


def mcp_channels(elicitation: ElicitationChannel) -> tuple[Channel, ...]:
    """The design's chain with ``elicitation`` inserted before the interrupt channel."""
    chain: Sequence[Channel] = DEFAULT_CHANNELS
    at = next(i for i, c in enumerate(chain) if isinstance(c, InterruptChannel))
    return (*chain[:at], elicitation, *chain[at:])
