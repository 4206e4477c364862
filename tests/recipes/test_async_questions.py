"""The agent's side of async questions: the inbox read at every turn boundary (and once more
before the agent stops, so a late answer forces one more turn), and the tools an opted-in
agent gets."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from interactions.async_questions import ASYNC_PROMPT_SECTION
from recipes import RecipeAPI, build_recipe, create_agent_session
from recipes.async_questions import ASK_TOOL, AWAIT_TOOL, with_async_questions
from recipes.messages import AssistantMessage, ToolCall, UserMessage, text_of
from recipes.models import ModelRequest, ScriptedModel

pytestmark = pytest.mark.anyio


def _recipe(api: RecipeAPI) -> None:
    @api.tool
    async def note(tool_call_id: str, params: None, ctx: object, on_update: object) -> str:
        """Take a note."""
        return "noted"

    api.register_agent("writer", "Write.")


def _told(request: ModelRequest) -> list[str]:
    return [text_of(m.content) for m in request.messages if isinstance(m, UserMessage)]


async def test_a_late_message_forces_one_more_turn_rather_than_being_lost() -> None:
    deliveries: list[list[str]] = [[], [], ["late answer"], []]
    reads = 0

    async def inbox() -> Sequence[UserMessage]:
        nonlocal reads
        reads += 1
        return [UserMessage.of_text(t) for t in deliveries[min(reads, len(deliveries)) - 1]]

    model = ScriptedModel([
        AssistantMessage(tool_calls=[ToolCall(id="n1", name="note", arguments={})]),
        "I would stop here.",
        lambda request: AssistantMessage(text=f"told: {_told(request)}"),
    ])  # fmt: skip
    session = create_agent_session(
        build_recipe(_recipe), model=model, env={}, inbox=inbox
    )
    await session.prompt("Go.")
    assert session.status == "idle"
    assert len(model.requests) == 3, "the late answer made the agent take one more turn"
    assert _told(model.requests[1]) == ["Go."], "read between tool iterations: nothing yet"
    assert session.messages[-1].text == "told: ['Go.', 'late answer']"  # type: ignore[union-attr]
    assert reads == 5, "before each of the 3 model calls, and before each of 2 stops"


async def test_an_opted_in_agent_gets_the_tools_and_the_prompt_section() -> None:
    class Binder:
        async def post(self, question: str, **kw: object) -> str:
            return "q-1"

        async def await_answers(self, tool_call_id: str, interrupt_id: str) -> str:
            return "All posted questions are answered:"

        async def inbox(self) -> Sequence[UserMessage]:
            return []

    recipe = with_async_questions(build_recipe(_recipe), "writer", Binder())
    agent = recipe.agent("writer")
    assert agent.instructions == "Write.\n\n" + ASYNC_PROMPT_SECTION
    tools = {t.name: t for t in recipe.tools_for(agent)}
    assert list(tools) == ["note", ASK_TOOL, AWAIT_TOOL]
    assert tools[ASK_TOOL].execution_mode == "sequential", "ids numbered in the asking order"
    assert tools[AWAIT_TOOL].resume == "replay", "run again once the answers are in"
    schema = tools[ASK_TOOL].spec().parameters
    assert schema["required"] == ["question"]
    assert set(schema["properties"]) == {"question", "options", "allow_free_text"}
    assert build_recipe(_recipe).agent("writer").instructions == "Write.", "not changed"
