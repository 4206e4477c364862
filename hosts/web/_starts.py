"""What this server can start: ``GET /api/startable``, the page's "New run" form.

Its recipe (``pi-recipes serve RECIPE``: a run on a prompt) and each of its workflows
(``--workflow FILE``: a graph run on its vars, each with its type, allowed values and default;
the vars derived from the credentials at launch are listed as such, never asked for).
``POST /api/runs`` starts either (:mod:`hosts.web._rest`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from fastapi import APIRouter
from pydantic import BaseModel, Field

from hosts.web._errors import ErrorBody, refusal
from hosts.web._host import Authorized
from interactions import PiRecipesError
from recipes.graph import ir
from recipes.graph.compiler import load_graph

__all__ = ["Startable", "StartableList", "VarView", "router", "startable_of"]

router = APIRouter(
    prefix="/api", tags=["runs"], responses={code: {"model": ErrorBody} for code in (401, 400)}
)

DERIVED = frozenset({"llm_families"})
"""Vars a graph run derives from the credentials at launch: never given."""


class VarView(BaseModel):
    """One var of a workflow, as a form asks for it."""

    name: str
    type: Literal["string", "bool", "int", "float", "json", "string[]"]
    enum: list[str] = []
    default: str | int | float | bool | None = None
    required: bool = Field(description="no default: a value must be given")
    derived: bool = Field(default=False, description="set from the credentials; not asked for")


class Startable(BaseModel):
    """A recipe (``kind`` ``recipe``: started on a ``prompt``) or a workflow (``graph``:
    started on its ``vars``). ``ref`` is what ``POST /api/runs`` names (``workflow``) and what
    its runs list as their ``ref``."""

    kind: Literal["recipe", "graph"]
    name: str
    ref: str
    agent: str | None = None
    vars: list[VarView] = []


class StartableList(BaseModel):
    startable: list[Startable]


def _var(var: ir.Var) -> VarView:
    return VarView(
        name=var.name,
        type=var.type,
        enum=list(var.enum),
        default=var.default,
        required=var.default is None and var.name not in DERIVED,
        derived=var.name in DERIVED,
    )


def startable_of(recipe: str, agent: str | None, workflows: tuple[str, ...]) -> StartableList:
    """The recipe, then each workflow with its vars (read from its file now: an edited
    workflow shows its new vars); raises what :func:`load_graph` raises for one that no
    longer validates."""
    found: list[Startable] = [
        Startable(kind="recipe", name=_name(recipe), ref=recipe, agent=agent)
    ]
    for path in workflows:
        graph = load_graph(path).graph
        found.append(
            Startable(
                kind="graph",
                name=graph.workflow.name,
                ref=path,
                vars=[_var(v) for v in graph.all_vars()],
            )
        )
    return StartableList(startable=found)


def _name(ref: str) -> str:
    path, _, function = ref.partition(":")
    return function or Path(path).stem or ref


@router.get("/startable", response_model=StartableList)
async def startable(host: Authorized) -> StartableList:
    """What this server can start: its recipe, then its workflows with their vars."""
    try:
        return startable_of(host.config.recipe, host.config.agent, host.config.workflows)
    except PiRecipesError as exc:
        raise refusal(exc) from None
