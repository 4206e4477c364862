"""Recipe authoring: the ``api`` a recipe function receives, and the :class:`Recipe` it builds.

A recipe is a function ``recipe(api: RecipeAPI) -> None`` that registers tools and agents::

    class Greet(BaseModel):
        name: str

    def recipe(api: RecipeAPI) -> None:
        @api.tool(description="Greet someone.")
        async def greet(tool_call_id: str, params: Greet, ctx: ToolContext, on_update: OnUpdate):
            return f"Hello, {params.name}!"

        api.register_agent("greeter", "Greet whoever the user names.")

Registration mistakes raise :class:`RecipeDefinitionError` (a ``UsageError``) at once.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any, TypeVar, overload

from pydantic import BaseModel, ConfigDict

from interactions import UsageError
from recipes._approval import gated
from recipes._recipe import Agent, Recipe
from recipes._tools import ApprovalRule, ExecutionMode, ResumeMode, Tool, ToolExecute
from recipes.models._base import Model

__all__ = [
    "NoParameters",
    "RecipeAPI",
    "RecipeDefinitionError",
    "RecipeFunction",
    "build_recipe",
]

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_F = TypeVar("_F", bound=Callable[..., Any])


class RecipeDefinitionError(UsageError):
    """A tool or agent registration that can never work; ``name`` is the tool/agent concerned."""

    def __init__(self, message: str, *, name: str | None = None) -> None:
        super().__init__(message)
        self.name = name


class NoParameters(BaseModel):
    """The parameters of a tool that takes none."""

    model_config = ConfigDict(extra="forbid")


class RecipeAPI:
    """What a recipe function registers its tools, agents and demo model with."""

    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}
        self._agents: dict[str, Agent] = {}
        self._default: str | None = None
        self._explicit_default = False
        self._demo_model: Model | None = None

    def register_tool(
        self,
        name: str,
        *,
        description: str,
        execute: ToolExecute,
        parameters: type[BaseModel] | None = None,
        label: str | None = None,
        execution_mode: ExecutionMode = "parallel",
        resume: ResumeMode = "answer",
        requires_approval: ApprovalRule = False,
    ) -> Tool:
        """Register a tool and return it.

        ``execute`` must be an ``async`` function ``(tool_call_id, params, ctx, on_update)``;
        ``parameters`` a pydantic model class (``None``: no parameters); ``label`` a human name
        (default: ``name``). ``resume`` says what a durable run does with a call paused on an
        ask once the answer comes: ``"answer"`` (default) makes the answer the call's result,
        the tool is not run again; ``"replay"`` runs the tool again from the top, each ask
        returning its stored answer in order (code before an ask runs again: keep it
        idempotent). Raises :class:`RecipeDefinitionError` when the name is taken or not
        ``[A-Za-z0-9_-]{1,64}``, or any argument is of the wrong kind.

        ``requires_approval`` (``True``, or a function of the parsed arguments and the context
        returning whether to ask) makes the runtime ask a person before the body runs, showing
        the tool's label, description and arguments: approved, the body runs; a revision
        request or a decline, it does not, and the model reads why. The tool need not be
        written around an ask, and works so in every kind of run.
        """
        if not _NAME.match(name):
            raise RecipeDefinitionError(
                f"tool name {name!r} is invalid: use 1-64 letters, digits, '_' or '-'", name=name
            )
        if name in self._tools:
            raise RecipeDefinitionError(f"tool {name!r} is registered twice", name=name)
        if execution_mode not in ("sequential", "parallel"):
            raise RecipeDefinitionError(
                f"tool {name!r}: execution_mode must be 'sequential' or 'parallel', "
                f"got {execution_mode!r}",
                name=name,
            )
        if resume not in ("answer", "replay"):
            raise RecipeDefinitionError(
                f"tool {name!r}: resume must be 'answer' or 'replay', got {resume!r}", name=name
            )
        if not _is_async(execute):
            raise RecipeDefinitionError(
                f"tool {name!r}: execute must be an async function "
                "(tool_call_id, params, ctx, on_update)",
                name=name,
            )
        params = NoParameters if parameters is None else parameters
        if not (isinstance(params, type) and issubclass(params, BaseModel)):
            raise RecipeDefinitionError(
                f"tool {name!r}: parameters must be a pydantic model class, got {params!r}",
                name=name,
            )
        if not (isinstance(requires_approval, bool) or callable(requires_approval)):
            raise RecipeDefinitionError(
                f"tool {name!r}: requires_approval must be True, False or a function of the "
                f"arguments and the context, got {requires_approval!r}",
                name=name,
            )
        tool = Tool(name, label or name, description, params, execute, execution_mode, resume)
        if requires_approval is not False:  # the body behind the gate: see recipes._approval
            tool = dataclasses.replace(
                tool, execute=gated(tool, requires_approval), requires_approval=requires_approval
            )
        tool.spec()  # fail now, not on the first model call, if no schema can be made
        self._tools[name] = tool
        return tool

    @overload
    def tool(self, fn: _F, /) -> _F: ...
    @overload
    def tool(
        self,
        fn: None = None,
        /,
        *,
        name: str | None = None,
        description: str | None = None,
        parameters: type[BaseModel] | None = None,
        label: str | None = None,
        execution_mode: ExecutionMode = "parallel",
        resume: ResumeMode = "answer",
        requires_approval: ApprovalRule = False,
    ) -> Callable[[_F], _F]: ...

    def tool(
        self,
        fn: _F | None = None,
        /,
        *,
        name: str | None = None,
        description: str | None = None,
        parameters: type[BaseModel] | None = None,
        label: str | None = None,
        execution_mode: ExecutionMode = "parallel",
        resume: ResumeMode = "answer",
        requires_approval: ApprovalRule = False,
    ) -> _F | Callable[[_F], _F]:
        """Decorator form of :meth:`register_tool`; returns the function unchanged.

        Defaults: ``name`` the function's name, ``description`` its docstring, ``parameters``
        the annotation of its second argument (unannotated: no parameters).
        """

        def register(func: _F) -> _F:
            tool_name = name or func.__name__
            doc = description if description is not None else inspect.getdoc(func)
            if not doc:
                raise RecipeDefinitionError(
                    f"tool {tool_name!r} needs a description: pass description= or a docstring",
                    name=tool_name,
                )
            params = parameters if parameters is not None else _params_annotation(func, tool_name)
            self.register_tool(
                tool_name,
                description=doc,
                execute=func,
                parameters=params,
                label=label,
                execution_mode=execution_mode,
                resume=resume,
                requires_approval=requires_approval,
            )
            return func

        return register(fn) if fn is not None else register

    def register_agent(
        self,
        name: str,
        instructions: str,
        *,
        model: Model | str | None = None,
        tools: Sequence[str] | None = None,
        default: bool = False,
        async_questions: bool = False,
    ) -> Agent:
        """Register an agent and return it. The first registered (or ``default=True``) is the
        default. ``tools`` names tools registered before or after (checked by :meth:`build`).
        ``async_questions=True`` gives the agent, in durable runs, the ``ask_user_async`` and
        ``await_answers`` tools: it posts questions and keeps working.
        Raises :class:`RecipeDefinitionError` for a taken name or a second ``default=True``.
        """
        if name in self._agents:
            raise RecipeDefinitionError(f"agent {name!r} is registered twice", name=name)
        if isinstance(tools, str):
            raise RecipeDefinitionError(f"agent {name!r}: tools must be a list of names", name=name)
        if default and self._explicit_default:
            raise RecipeDefinitionError(
                f"agents {self._default!r} and {name!r} are both default=True", name=name
            )
        agent = Agent(
            name, instructions, model, None if tools is None else tuple(tools),
            async_questions=bool(async_questions),
        )  # fmt: skip
        self._agents[name] = agent
        if default or self._default is None:
            self._default = name
            self._explicit_default = default
        return agent

    def set_demo_model(self, model: Model) -> None:
        """Ship a model (usually a ``ScriptedModel``) that demos the recipe without a provider."""
        self._demo_model = model

    def build(self, name: str) -> Recipe:
        """Freeze what was registered into a :class:`Recipe` called ``name``.

        With no agent registered, the recipe gets one agent ``default`` with every tool and no
        instructions. Raises :class:`RecipeDefinitionError` when an agent names an unknown tool.
        """
        agents = dict(self._agents) or {"default": Agent("default", "")}
        for agent in agents.values():
            for tool in agent.tools or ():
                if tool not in self._tools:
                    raise RecipeDefinitionError(
                        f"agent {agent.name!r} uses tool {tool!r}, which is not registered; "
                        f"tools: {', '.join(self._tools) or '(none)'}",
                        name=tool,
                    )
        return Recipe(
            name=name,
            tools=MappingProxyType(dict(self._tools)),
            agents=MappingProxyType(agents),
            default_agent=self._default or "default",
            demo_model=self._demo_model,
        )


RecipeFunction = Callable[[RecipeAPI], None]
"""A recipe: a function that registers tools and agents on the ``api`` it is given."""


def build_recipe(fn: RecipeFunction, *, name: str | None = None) -> Recipe:
    """Run a recipe function on a fresh :class:`RecipeAPI` and return what it registered.

    ``name`` defaults to the function's module. Raises :class:`RecipeDefinitionError` for a
    bad registration; anything else the function raises propagates unchanged.
    """
    api = RecipeAPI()
    fn(api)
    return api.build(name or getattr(fn, "__module__", None) or "recipe")


def _is_async(fn: object) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - an async callable object
    )


def _params_annotation(func: Callable[..., Any], tool_name: str) -> type[BaseModel] | None:
    positional = [
        p
        for p in inspect.signature(func).parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    if len(positional) < 2 or positional[1].annotation is inspect.Parameter.empty:
        return None
    hint = positional[1].annotation
    if isinstance(hint, str):  # postponed annotation: resolve this one only
        names = {**func.__globals__, **inspect.getclosurevars(func).nonlocals}
        try:
            hint = eval(hint, names)
        except Exception as exc:
            raise RecipeDefinitionError(
                f"tool {tool_name!r}: cannot resolve the annotation {hint!r} of "
                f"{positional[1].name!r} ({exc}); pass parameters= explicitly",
                name=tool_name,
            ) from exc
    if hint is None or hint is type(None):
        return None
    if isinstance(hint, type) and issubclass(hint, BaseModel):
        return hint
    raise RecipeDefinitionError(
        f"tool {tool_name!r}: the parameters argument must be annotated with a pydantic model "
        f"class, got {hint!r}; or pass parameters=",
        name=tool_name,
    )
