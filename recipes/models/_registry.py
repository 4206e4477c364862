"""Models from their ``provider:model`` names, as recipes and stored runs spell them."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from interactions.errors import UsageError
from recipes.models._base import Model
from recipes.models._retry import RetryPolicy

if TYPE_CHECKING:
    import httpx

__all__ = [
    "ACCEPTED_FORMS",
    "FAMILY_KEYS",
    "PROVIDERS",
    "credentialed_families",
    "model_from_name",
    "model_name_problem",
]

PROVIDERS = ("openai", "anthropic", "scripted")
"""The providers a ``provider:model`` name may start with."""

ACCEPTED_FORMS = (
    "openai:<model> (e.g. openai:gpt-4.1-mini)",
    "anthropic:<model> (e.g. anthropic:claude-sonnet-4-5)",
    "scripted:<path to a script file> (e.g. scripted:tests/scripts/hello.json)",
)
"""The forms of a model name, one per provider of :data:`PROVIDERS`, as errors list them."""


def model_name_problem(name: str) -> str | None:
    """Why ``name`` is not a model name :func:`model_from_name` accepts (no ``:``, an empty
    model part, a provider not in :data:`PROVIDERS`), or ``None``. Pure: no model is made, no
    credential read."""
    provider, colon, model = name.partition(":")
    if not colon:
        return "expected '<provider>:<model>'"
    if not model.strip():
        return "the model part is empty"
    if provider not in PROVIDERS:
        return f"unknown provider {provider!r}"
    return None


FAMILY_KEYS: Mapping[str, str] = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
"""The model families the HTTP providers serve, each with the variable its key is read from."""


def credentialed_families(env: Mapping[str, str]) -> list[str]:
    """The model families ``env`` holds a usable key for, sorted (``["anthropic", "openai"]``).

    A key is usable when it is set, not blank, and an HTTP header can carry it (visible ASCII
    only). Only the families are returned, never a key: the result may be stored and shown.
    """
    from recipes.models._secrets import header_value_problem

    found = []
    for family, variable in FAMILY_KEYS.items():
        key = (env.get(variable) or "").strip()
        if key and header_value_problem(key) is None:
            found.append(family)
    return sorted(found)


def _refuse(name: str, why: str) -> UsageError:
    forms = "; ".join(ACCEPTED_FORMS)
    return UsageError(f"model name {name!r}: {why}. Accepted forms: {forms}")


def model_from_name(
    name: str,
    *,
    env: Mapping[str, str] | None = None,
    http_client: httpx.AsyncClient | None = None,
    retry: RetryPolicy | None = None,
) -> Model:
    """The model a ``provider:model`` name designates.

    Only the first ``:`` separates the provider, so ``openai:llama3.1:8b`` (Ollama) names the
    model ``llama3.1:8b``. Credentials and base URLs come from ``env`` (default ``os.environ``)
    at construction and are never part of the name; ``http_client`` and ``retry`` are passed to
    the HTTP providers. ``scripted:<path>`` loads ``ScriptedModel.from_file(path)``.

    Raises ``UsageError`` naming the accepted forms for a name without ``:``, an unknown provider
    or an empty model. A missing API key is not raised here but when the model is called
    (``ModelError(error_class="auth")``).
    """
    problem = model_name_problem(name)
    if problem is not None:
        raise _refuse(name, problem)
    provider, _, model = name.partition(":")
    env = os.environ if env is None else env
    if provider == "openai":
        from recipes.models.openai import OpenAIChatModel

        return OpenAIChatModel(model, env=env, http_client=http_client, retry=retry)
    if provider == "anthropic":
        from recipes.models.anthropic import AnthropicModel

        return AnthropicModel(model, env=env, http_client=http_client, retry=retry)
    if provider == "scripted":
        from recipes.models.scripted import ScriptedModel

        return ScriptedModel.from_file(model)
    raise _refuse(name, f"unknown provider {provider!r}")  # a provider PROVIDERS lists unserved
