"""A real ask helper inside a real tool: the ToolContext is enough, and awaiting pauses the run."""

from __future__ import annotations

import pytest

from interactions import AWAITING_TEXT, UNAVAILABLE_TEXT, AskUserResult, ask_user_question
from recipes._api import RecipeAPI
from recipes._context import ToolContext
from recipes._tools import OnUpdate
from recipes.messages import ToolResultMessage, text_of
from tests.recipes.helpers import call, calls, session_for

pytestmark = pytest.mark.anyio


def recipe(api: RecipeAPI) -> None:
    @api.tool(description="Ask the user their favourite colour.", execution_mode="sequential")
    async def colour(
        tool_call_id: str, params: None, ctx: ToolContext, on_update: OnUpdate
    ) -> AskUserResult:
        return await ask_user_question(
            "Favourite colour?",
            options=["red", "blue"],
            tool_call_id=tool_call_id,
            ctx=ctx,
            env=ctx.env,
        )


async def test_interrupt_resume_pauses_the_run_with_the_interrupt() -> None:
    session, model, _ = session_for(
        recipe, [calls(call("c1", "colour")), "Blue it is."], env={"PI_INTERRUPT_RESUME": "1"}
    )
    await session.prompt("ask me")
    assert session.status == "paused" and session.awaiting_call_ids == ["c1"]
    assert session.paused is not None
    [placeholder] = session.paused.awaiting
    assert text_of(placeholder.content) == AWAITING_TEXT
    assert (
        placeholder.details is not None and placeholder.details["interrupt"]["tool_call_id"] == "c1"
    )
    await session.resume({"c1": "Answer: blue"})
    assert session.status == "idle" and model.remaining == 0


async def test_without_a_human_the_tool_says_so_and_the_run_goes_on() -> None:
    session, _, _ = session_for(
        recipe, [calls(call("c1", "colour")), "I'll ask in my reply."], env={}
    )
    await session.prompt("ask me")
    [result] = [m for m in session.messages if isinstance(m, ToolResultMessage)]
    assert text_of(result.content) == UNAVAILABLE_TEXT and not result.is_error
    assert session.status == "idle"
