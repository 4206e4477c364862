"""What an agent session tells its listeners (``session.on_event`` / ``session.subscribe``).

Every event is a pydantic model with a literal ``type``; :data:`AgentEventAdapter` reads and
writes them as JSON. See :mod:`recipes._events` for the order of one run's events.
"""

from recipes._events import (
    AgentEnd,
    AgentEvent,
    AgentEventAdapter,
    AgentStart,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    SessionStatus,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    TurnEnd,
    TurnStart,
)
from recipes.session import EventListener

__all__ = [
    "AgentEnd",
    "AgentEvent",
    "AgentEventAdapter",
    "AgentStart",
    "EventListener",
    "MessageEnd",
    "MessageStart",
    "MessageUpdate",
    "SessionStatus",
    "ToolExecutionEnd",
    "ToolExecutionStart",
    "ToolExecutionUpdate",
    "TurnEnd",
    "TurnStart",
]
