"""Recipe authoring: registering tools and agents, and the mistakes it refuses."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, Field

from interactions import UsageError
from recipes import build_recipe
from recipes._api import NoParameters, RecipeAPI, RecipeDefinitionError
from recipes._context import ToolContext
from recipes._tools import OnUpdate
from recipes.models.scripted import ScriptedModel


class Greet(BaseModel):
    name: str = Field(description="Who to greet.")


async def greet(tool_call_id: str, params: Greet, ctx: ToolContext, on_update: OnUpdate) -> str:
    """Greet someone by name."""
    return f"Hello {params.name}"


def test_register_tool_and_decorator_make_the_same_tool() -> None:
    api = RecipeAPI()
    explicit = api.register_tool(
        "hello", description="Greet someone by name.", parameters=Greet, execute=greet
    )
    decorated = api.tool(greet)
    assert decorated is greet  # the decorator hands the function back
    recipe = api.build("r")
    assert list(recipe.tools) == ["hello", "greet"]
    tool = recipe.tools["greet"]
    assert (tool.name, tool.label, tool.description) == ("greet", "greet", "Greet someone by name.")
    assert tool.parameters is Greet and tool.execution_mode == "parallel"
    assert tool.spec() == explicit.spec().model_copy(update={"name": "greet"})


def test_decorator_options_and_a_tool_without_parameters() -> None:
    api = RecipeAPI()

    @api.tool(name="now", label="Clock", description="The time.", execution_mode="sequential")
    async def clock(tool_call_id: str, params: None, ctx: ToolContext, on_update: OnUpdate) -> str:
        return "noon"

    tool = api.build("r").tools["now"]
    assert (tool.label, tool.execution_mode, tool.parameters) == (
        "Clock",
        "sequential",
        NoParameters,
    )
    assert tool.spec().parameters == {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }


async def not_async(tool_call_id: str, params: Any, ctx: Any, on_update: Any) -> str:
    return ""


def sync_execute(tool_call_id: str, params: Any, ctx: Any, on_update: Any) -> str:
    return ""


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"name": "bad name"}, "tool name 'bad name' is invalid"),
        ({"name": "x" * 65}, "is invalid"),
        ({"execute": sync_execute}, "execute must be an async function"),
        ({"parameters": dict}, "parameters must be a pydantic model class"),
        ({"execution_mode": "serial"}, "execution_mode must be 'sequential' or 'parallel'"),
    ],
)
def test_register_tool_refuses_what_can_never_work(kwargs: dict[str, Any], message: str) -> None:
    arguments: dict[str, Any] = {"name": "ok", "description": "d", "execute": not_async} | kwargs
    with pytest.raises(RecipeDefinitionError, match=message) as caught:
        RecipeAPI().register_tool(**arguments)
    assert caught.value.name == arguments["name"]
    assert isinstance(caught.value, UsageError)


def test_two_tools_with_one_name_is_an_error_naming_the_tool() -> None:
    api = RecipeAPI()
    api.tool(greet)
    with pytest.raises(RecipeDefinitionError, match="tool 'greet' is registered twice"):
        api.tool(greet)


def test_the_decorator_needs_a_description_and_a_model_annotation() -> None:
    api = RecipeAPI()

    async def bare(tool_call_id: str, params: Greet, ctx: ToolContext, on_update: OnUpdate) -> str:
        return ""

    with pytest.raises(RecipeDefinitionError, match="needs a description"):
        api.tool(bare)

    async def wrong(tool_call_id: str, params: int, ctx: ToolContext, on_update: OnUpdate) -> str:
        return ""

    with pytest.raises(RecipeDefinitionError, match="annotated with a pydantic model"):
        api.tool(description="d")(wrong)

    async def unknown(tool_call_id: str, params: Missing, ctx: Any, on_update: Any) -> str:  # type: ignore[name-defined]  # noqa: F821
        return ""

    with pytest.raises(RecipeDefinitionError, match="pass parameters= explicitly"):
        api.tool(description="d")(unknown)


def test_agents_the_default_and_their_tools() -> None:
    def recipe(api: RecipeAPI) -> None:
        api.tool(greet)
        api.register_agent("first", "One.")
        api.register_agent("chosen", "Two.", tools=["greet"], default=True, model="openai:gpt")

    built = build_recipe(recipe, name="demo")
    assert built.default_agent == "chosen"
    assert built.agent().name == "chosen" and built.agent("first").instructions == "One."
    assert built.agent().model == "openai:gpt"
    assert [t.name for t in built.tools_for(built.agent("first"))] == ["greet"]
    with pytest.raises(UsageError, match="has no agent 'nope'; agents: first, chosen"):
        built.agent("nope")


def test_without_agents_a_recipe_has_one_default_agent_with_every_tool() -> None:
    demo = ScriptedModel(["hi"])

    def recipe(api: RecipeAPI) -> None:
        api.tool(greet)
        api.set_demo_model(demo)

    built = build_recipe(recipe)
    assert built.default_agent == "default" and built.agent().tools is None
    assert built.demo_model is demo


@pytest.mark.parametrize(
    ("register", "message"),
    [
        (
            lambda api: (api.register_agent("a", ""), api.register_agent("a", "")),
            "agent 'a' is registered twice",
        ),
        (
            lambda api: (
                api.register_agent("a", "", default=True),
                api.register_agent("b", "", default=True),
            ),
            "both default=True",
        ),
        (
            lambda api: api.register_agent("a", "", tools=["nope"]),
            "uses tool 'nope', which is not registered",
        ),
        (lambda api: api.register_agent("a", "", tools="greet"), "tools must be a list of names"),
    ],
)
def test_bad_agent_registrations(register: Any, message: str) -> None:
    with pytest.raises(RecipeDefinitionError, match=message):
        build_recipe(register)
