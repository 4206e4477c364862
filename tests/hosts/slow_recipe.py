"""A recipe whose scripted model thinks until it is stopped: for tests that stop a run mid-leg.

When its model is first called it creates a file ``started`` in the working directory, so a test
knows the leg is under way, then waits (bounded: 120 s).
"""

from __future__ import annotations

import anyio

from recipes import RecipeAPI
from recipes.messages import AssistantMessage
from recipes.models import ModelRequest, ScriptedModel


async def _think(request: ModelRequest) -> AssistantMessage:
    await anyio.Path("started").write_text("thinking")
    await anyio.sleep(120)
    return AssistantMessage(text="Done thinking.")


def recipe(api: RecipeAPI) -> None:
    api.register_agent("thinker", "Think.")
    api.set_demo_model(ScriptedModel([_think], label="slow"))
