"""A loaded recipe: its tools and agents, read-only (built by ``RecipeAPI.build``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from interactions import UsageError
from recipes._tools import Tool
from recipes.models._base import Model

if TYPE_CHECKING:
    from recipes._api import RecipeAPI

__all__ = ["Agent", "Recipe", "RecipeFunction"]


@dataclass(frozen=True)
class Agent:
    """A named agent of a recipe: its instructions, optional model and the tools it may use.

    ``model`` is a ``Model`` instance or a ``"provider:name"`` string (or ``None``: the caller
    of ``create_agent_session`` must give one). ``tools`` ``None`` means every recipe tool.
    """

    name: str
    instructions: str
    model: Model | str | None = None
    tools: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Recipe:
    """A loaded recipe: its tools and agents, read-only. Build it with :meth:`from_function`
    or ``load_recipe``."""

    name: str
    tools: Mapping[str, Tool]
    agents: Mapping[str, Agent]
    default_agent: str
    demo_model: Model | None = None

    @classmethod
    def from_function(cls, fn: RecipeFunction, *, name: str | None = None) -> Recipe:
        """Run a recipe function on a fresh :class:`RecipeAPI` and return what it registered.

        Raises :class:`RecipeDefinitionError` for a bad registration; anything else the function
        raises propagates unchanged.
        """
        from recipes._api import RecipeAPI  # the API builds recipes: import it on use

        api = RecipeAPI()
        fn(api)
        return api.build(name or getattr(fn, "__module__", None) or "recipe")

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


RecipeFunction = Callable[["RecipeAPI"], None]
