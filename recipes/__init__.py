"""pi-recipes recipes: write tools and agents, run them in-process or durably.

A recipe is a Python file or module with ``def recipe(api: RecipeAPI) -> None`` that registers
tools and agents. :func:`create_agent_session` runs an agent in-process against a model
(:mod:`recipes.models`: scripted, OpenAI-compatible, Anthropic); :mod:`recipes.runs` runs it
durably, pausing on interrupts and resuming in any process; :mod:`recipes.async_questions`
gives an agent that opts in questions it asks while it keeps working. What a session tells its
listeners is in :mod:`recipes.events`; the transcript's messages in :mod:`recipes.messages`.

Errors follow the families of :mod:`interactions`: :class:`RecipeLoadError` and
:class:`RecipeDefinitionError` are ``UsageError`` (fix the recipe); a model failure is a
``RunError`` (``recipes.models.ModelError`` with its ``error_class``).
"""

from recipes._api import (
    NoParameters,
    RecipeAPI,
    RecipeDefinitionError,
    RecipeFunction,
    build_recipe,
)
from recipes._context import AbortSignal, ToolContext
from recipes._events import AwaitingCall, PausedBatch
from recipes._loader import ENTRY_POINT_GROUP, RecipeLoadError, load_recipe
from recipes._recipe import Agent, Recipe, resolve_model
from recipes._resume import Answer, Answers
from recipes._tools import (
    ExecutionMode,
    OnUpdate,
    ResumeMode,
    Tool,
    ToolExecute,
    ToolResult,
    to_tool_result,
)
from recipes.session import AgentSession, create_agent_session

__all__ = [
    "ENTRY_POINT_GROUP",
    "AbortSignal",
    "Agent",
    "AgentSession",
    "Answer",
    "Answers",
    "AwaitingCall",
    "ExecutionMode",
    "NoParameters",
    "OnUpdate",
    "PausedBatch",
    "Recipe",
    "RecipeAPI",
    "RecipeDefinitionError",
    "RecipeFunction",
    "RecipeLoadError",
    "ResumeMode",
    "Tool",
    "ToolContext",
    "ToolExecute",
    "ToolResult",
    "build_recipe",
    "create_agent_session",
    "load_recipe",
    "resolve_model",
    "to_tool_result",
]
