"""Checks that need the recipes: each ``recipe:`` loads, names an agent it has, and the
node's ``tools:`` are tools of that agent."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from interactions import PiRecipesError
from recipes import Recipe, load_recipe
from recipes.graph import ir
from recipes.graph.language import Diagnostic, diag

__all__ = ["check_recipes", "recipe_ref"]


def recipe_ref(ref: str, base: Path) -> str:
    """A node's ``recipe:`` as a reference any process can load: a ``.py`` file made absolute
    against the workflow file's directory; a module reference as it is."""
    path, sep, func = ref.partition(":")
    if path.endswith(".py") and not Path(path).is_absolute():
        return str((base / path).resolve()) + sep + func
    return ref


def check_recipes(
    graph: ir.Graph, base: Path, loader: Callable[[str], Recipe] = load_recipe
) -> list[Diagnostic]:
    """P001 for a recipe that does not load, P002 for an unknown agent or tool. ``loader``
    loads a recipe by its reference (:func:`recipe_ref`)."""
    out: list[Diagnostic] = []
    loaded: dict[str, Recipe | None] = {}
    for node in graph.nodes:
        if not isinstance(node, ir.LLMNode) or node.recipe is None:
            continue
        ref = recipe_ref(node.recipe, base)
        if ref not in loaded:
            try:
                loaded[ref] = loader(ref)
            except PiRecipesError as exc:
                loaded[ref] = None
                out.append(
                    diag("P001", f"recipe {node.recipe!r} of `{node.name}`: {exc}", node.pos)
                )
        recipe = loaded[ref]
        if recipe is None:
            continue
        if node.agent is not None and node.agent not in recipe.agents:
            out.append(
                diag(
                    "P002",
                    f"recipe {node.recipe!r} has no agent {node.agent!r}; it has "
                    f"{', '.join(recipe.agents)}",
                    node.pos,
                )
            )
            continue
        agent = recipe.agent(node.agent)
        offered = [t.name for t in recipe.tools_for(agent)]
        for tool in node.tools or ():
            if tool not in offered:
                out.append(
                    diag(
                        "P002",
                        f"agent {agent.name!r} of {node.recipe!r} has no tool "
                        f"{tool!r}; it has {', '.join(offered) or 'none'}",
                        node.pos,
                    )
                )
    return out
