"""Asks, for host authors: requests, the tool context they read, and where interrupt ids come from.

A host that builds its own tool contexts gives them the session's ``env``, its ``ui`` and, per
tool call, an :class:`AskLedger` (``asks``), which numbers the interrupt ids of the call, returns
stored answers to a replayed call and refuses to skip a human.
"""

from interactions._ask import OptionLike, interrupt_ttl, normalize_options
from interactions._asks import (
    ROOT_SCOPE,
    AskLedger,
    AskScope,
    ask_position,
    call_key,
    interrupt_id_for,
)
from interactions._context import Mode, ToolContextLike
from interactions._models import (
    ApprovalRequest,
    AskUserDetails,
    AskUserRequest,
    QuestionRequest,
    Selection,
    TextContent,
)
from interactions._schemas import ARGS_SCHEMA

__all__ = [
    "ARGS_SCHEMA",
    "ROOT_SCOPE",
    "ApprovalRequest",
    "AskLedger",
    "AskScope",
    "AskUserDetails",
    "AskUserRequest",
    "Mode",
    "OptionLike",
    "QuestionRequest",
    "Selection",
    "TextContent",
    "ToolContextLike",
    "ask_position",
    "call_key",
    "interrupt_id_for",
    "interrupt_ttl",
    "normalize_options",
]
