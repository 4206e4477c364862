"""Model providers: the :class:`Model` protocol, the scripted model and the HTTP providers.

Name a model ``provider:model`` (``openai:gpt-4.1-mini``, ``anthropic:claude-sonnet-4-5``,
``scripted:path/to/script.json``) and resolve it with :func:`model_from_name`
(:func:`model_name_problem` checks a name without making the model: :data:`PROVIDERS`);
:func:`credentialed_families` says which families the environment holds a key for. Failures are
:class:`ModelError` with an ``error_class``: ``usage_window``, ``auth``, ``unavailable``,
``transient_exhausted`` or ``unclassified``. :class:`Secrets` scrubs the credentials a process
holds out of text (every provider applies it to what the provider sends back).
"""

from typing import TYPE_CHECKING, Any

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
from recipes.models._registry import (
    ACCEPTED_FORMS,
    FAMILY_KEYS,
    PROVIDERS,
    credentialed_families,
    model_from_name,
    model_name_problem,
)
from recipes.models._retry import RetryPolicy
from recipes.models._secrets import Secrets
from recipes.models.scripted import ScriptedModel, ScriptExhausted, ScriptFileError, ScriptTurn

if TYPE_CHECKING:
    from recipes.models.anthropic import AnthropicModel
    from recipes.models.openai import OpenAIChatModel

__all__ = [
    "ACCEPTED_FORMS",
    "FAMILY_KEYS",
    "PROVIDERS",
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
    "Secrets",
    "TextDelta",
    "ToolCallDelta",
    "ToolSpec",
    "credentialed_families",
    "model_from_name",
    "model_name_problem",
]


def __getattr__(name: str) -> Any:
    # The HTTP providers (and httpx) load when first named: answering a question needs neither.
    if name == "AnthropicModel":
        from recipes.models.anthropic import AnthropicModel

        return AnthropicModel
    if name == "OpenAIChatModel":
        from recipes.models.openai import OpenAIChatModel

        return OpenAIChatModel
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
