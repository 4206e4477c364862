"""Model providers: the :class:`Model` protocol, the scripted model and the HTTP providers.

Name a model ``provider:model`` (``openai:gpt-4.1-mini``, ``anthropic:claude-sonnet-4-5``,
``scripted:path/to/script.json``) and resolve it with :func:`model_from_name`. Failures are
:class:`ModelError` with an ``error_class``: ``usage_window``, ``auth``, ``unavailable``,
``transient_exhausted`` or ``unclassified``.
"""

from recipes.models._base import (
    Completed,
    Model,
    ModelEvent,
    ModelRequest,
    TextDelta,
    ToolCallDelta,
    ToolSpec,
)
from recipes.models._errors import ErrorClass, ModelError
from recipes.models._registry import model_from_name
from recipes.models._retry import RetryPolicy
from recipes.models.anthropic import AnthropicModel
from recipes.models.openai import OpenAIChatModel
from recipes.models.scripted import ScriptedModel, ScriptExhausted, ScriptFileError, ScriptTurn

__all__ = [
    "AnthropicModel",
    "Completed",
    "ErrorClass",
    "Model",
    "ModelError",
    "ModelEvent",
    "ModelRequest",
    "OpenAIChatModel",
    "RetryPolicy",
    "ScriptExhausted",
    "ScriptFileError",
    "ScriptTurn",
    "ScriptedModel",
    "TextDelta",
    "ToolCallDelta",
    "ToolSpec",
    "model_from_name",
]
