"""The channel chain, for host authors: which channel answers an ask, and the default channels.

:func:`select_channel` is pure; the facts it decides on are read once per ask by
:func:`gather_facts` from the tool's context. A host that answers in its own way (an MCP
client's elicitation, say) writes a :class:`Channel` and hands a chain built around
:data:`DEFAULT_CHANNELS` to its tool contexts (``interaction_channels``).
"""

from interactions._chain import (
    AUTO_APPROVE_ENV,
    INTERRUPT_RESUME_ENV,
    AskCall,
    Channel,
    ChannelFacts,
    auto_resolve_interactions,
    flag_on,
    gather_facts,
    select_channel,
)
from interactions._channels import (
    DEFAULT_CHANNELS,
    AutoApproveChannel,
    AutoResolveChannel,
    DialogChannel,
    InterruptChannel,
    UnavailableChannel,
)

__all__ = [
    "AUTO_APPROVE_ENV",
    "DEFAULT_CHANNELS",
    "INTERRUPT_RESUME_ENV",
    "AskCall",
    "AutoApproveChannel",
    "AutoResolveChannel",
    "Channel",
    "ChannelFacts",
    "DialogChannel",
    "InterruptChannel",
    "UnavailableChannel",
    "auto_resolve_interactions",
    "flag_on",
    "gather_facts",
    "select_channel",
]
