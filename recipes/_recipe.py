"""A loaded recipe: its tools and agents, read-only (built by ``RecipeAPI.build``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from interactions import UsageError
from recipes._tools import Tool
from recipes.models._base import Model

__all__ = ["Agent", "Recipe", "resolve_model"]


@dataclass(frozen=True)
class Agent:
    """A named agent of a recipe: its instructions, optional model and the tools it may use.

    ``model`` is a ``Model`` instance or a ``"provider:name"`` string (or ``None``: the caller
    of ``create_agent_session`` must give one). ``tools`` ``None`` means every recipe tool.
    ``async_questions`` opts the agent into async questions in durable runs: it gets the
    ``ask_user_async`` and ``await_answers`` tools (see :mod:`recipes.async_questions`).
    """

    name: str
    instructions: str
    model: Model | str | None = None
    tools: tuple[str, ...] | None = None
    async_questions: bool = False


@dataclass(frozen=True)
class Recipe:
    """A loaded recipe: its tools and agents, read-only. Build it with ``build_recipe`` or
    ``load_recipe``."""

    name: str
    tools: Mapping[str, Tool]
    agents: Mapping[str, Agent]
    default_agent: str
    demo_model: Model | None = None

    def agent(self, name: str | None = None) -> Agent:
        """The agent called ``name``, or the default one. Raises ``UsageError`` when unknown."""
        key = self.default_agent if name is None else name
        try:
            return self.agents[key]
        except KeyError:
            known = ", ".join(self.agents)
            raise UsageError(
                f"recipe {self.name!r} has no agent {key!r}; agents: {known}"
            ) from None

    def tools_for(self, agent: Agent) -> list[Tool]:
        """The tools ``agent`` may call, in registration order."""
        if agent.tools is None:
            return list(self.tools.values())
        return [self.tools[n] for n in agent.tools]


def resolve_model(
    recipe: Recipe,
    agent: str | None = None,
    requested: Model | str | None = None,
    *,
    env: Mapping[str, str],
) -> Model:
    """The model a run of ``agent`` (default: the recipe's default agent) talks to.

    ``requested`` (a ``Model``, or a ``"provider:name"``) wins; else the agent's model; else
    the recipe's demo model. A name that is the name of the agent's or the demo model object
    (a scripted model, say, as a stored run records it) is that object; any other name is
    resolved with :func:`recipes.models.model_from_name` against ``env``. Raises
    ``UsageError`` when there is no model, or the name is not one.
    """
    chosen = recipe.agent(agent)
    own = [m for m in (chosen.model, recipe.demo_model) if m is not None and not isinstance(m, str)]
    wanted = requested if requested is not None else chosen.model or recipe.demo_model
    if wanted is None:
        raise UsageError(
            f"agent {chosen.name!r} of recipe {recipe.name!r} has no model: pass one "
            "(a Model, or 'provider:name' such as openai:gpt-4.1-mini; --model on the command line)"
        )
    if not isinstance(wanted, str):
        return wanted
    for model in own:
        if model.name == wanted:
            return model
    from recipes.models._registry import model_from_name  # providers load on use

    return model_from_name(wanted, env=env)
