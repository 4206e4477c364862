"""A recipe whose scripted model thinks until it is stopped: for tests that stop a run mid-leg.

When its model is first called it creates a file ``started`` in the working directory, so a test
knows the leg is under way, then waits (bounded: 120 s).
"""

from __future__ import annotations

import anyio
from pydantic import BaseModel

from interactions import ask_user_question
from recipes import OnUpdate, RecipeAPI, ToolContext
from recipes.messages import AssistantMessage, ToolCall
from recipes.models import ModelRequest, ScriptedModel


async def _think(request: ModelRequest) -> AssistantMessage:
    await anyio.Path("started").write_text("thinking")
    await anyio.sleep(120)
    return AssistantMessage(text="Done thinking.")


def recipe(api: RecipeAPI) -> None:
    api.register_agent("thinker", "Think.")
    api.set_demo_model(ScriptedModel([_think], label="slow"))


class Topic(BaseModel):
    topic: str


def asks_then_thinks(api: RecipeAPI) -> None:
    """Asks first (``int-a1``); once answered, the resumed leg's model thinks until stopped,
    creating ``started`` as the recipe above does: for tests that stop a resume mid-leg."""

    @api.tool
    async def ask(
        tool_call_id: str, params: Topic, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Ask whether to go on."""
        return await ask_user_question(
            f"Go on with {params.topic}?", tool_call_id=tool_call_id, ctx=ctx
        )

    first = AssistantMessage(tool_calls=[ToolCall(id="a1", name="ask", arguments={"topic": "v2"})])
    api.register_agent("asker", "Ask, then think.")
    api.set_demo_model(ScriptedModel([first, _think], label="slow-ask"))


async def _hold(request: ModelRequest) -> AssistantMessage:
    await anyio.Path("started").write_text("holding")
    with anyio.fail_after(60):
        while not await anyio.Path("go").exists():  # noqa: ASYNC110 - made by another process
            await anyio.sleep(0.05)
    return AssistantMessage(text="Done holding.")


def holds(api: RecipeAPI) -> None:
    """A leg whose model creates ``started``, then holds until a file ``go`` appears (at most
    60 s): for tests that break something under a running leg, then let it end."""
    api.register_agent("holder", "Hold.")
    api.set_demo_model(ScriptedModel([_hold], label="hold"))
