"""pi-recipes recipes: write tools and agents, run them in-process or durably.

A recipe is a Python file or module with ``def recipe(api: RecipeAPI) -> None`` that registers
tools and agents. :func:`create_agent_session` runs an agent in-process against a model
(:mod:`recipes.models`: scripted, OpenAI-compatible, Anthropic); :mod:`recipes.runs` runs it
durably, pausing on interrupts and resuming in any process.

Errors follow the families of :mod:`interactions`: :class:`RecipeLoadError` and
:class:`RecipeDefinitionError` are ``UsageError`` (fix the recipe); a model failure is a
``RunError`` (``recipes.models.ModelError`` with its ``error_class``).
"""

from recipes._api import NoParameters, RecipeAPI, RecipeDefinitionError
from recipes._context import AbortSignal, ToolContext
from recipes._loader import ENTRY_POINT_GROUP, RecipeLoadError, load_recipe
from recipes._recipe import Agent, Recipe, RecipeFunction
from recipes._tools import ExecutionMode, OnUpdate, Tool, ToolExecute, ToolResult, to_tool_result
from recipes.session import (
    AgentEnd,
    AgentEvent,
    AgentEventAdapter,
    AgentSession,
    AgentStart,
    EventListener,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    PausedBatch,
    SessionStatus,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    TurnEnd,
    TurnStart,
    create_agent_session,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "AbortSignal",
    "Agent",
    "AgentEnd",
    "AgentEvent",
    "AgentEventAdapter",
    "AgentSession",
    "AgentStart",
    "EventListener",
    "ExecutionMode",
    "MessageEnd",
    "MessageStart",
    "MessageUpdate",
    "NoParameters",
    "OnUpdate",
    "PausedBatch",
    "Recipe",
    "RecipeAPI",
    "RecipeDefinitionError",
    "RecipeFunction",
    "RecipeLoadError",
    "SessionStatus",
    "Tool",
    "ToolContext",
    "ToolExecute",
    "ToolExecutionEnd",
    "ToolExecutionStart",
    "ToolExecutionUpdate",
    "ToolResult",
    "TurnEnd",
    "TurnStart",
    "create_agent_session",
    "load_recipe",
    "to_tool_result",
]
