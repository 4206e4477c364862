"""Recipes with scripted demo models for the host kit's tests.

``asker`` says something, posts an async question and keeps working, then waits for the
answer with the await tool (the run pauses on its own ``await`` wait), then says what it got.
``asks`` asks one blocking question, then says what it got. ``cut_short`` answers at once, cut
at the model's output limit.
"""

from __future__ import annotations

from pydantic import BaseModel

from interactions import ask_user_question
from recipes import OnUpdate, RecipeAPI, ToolContext
from recipes.messages import AssistantMessage, ToolCall, ToolResultMessage, text_of
from recipes.models import ModelRequest, ScriptedModel


class Nothing(BaseModel):
    pass


def _reply(request: ModelRequest) -> AssistantMessage:
    results = [m for m in request.messages if isinstance(m, ToolResultMessage)]
    return AssistantMessage(text=f"The tool said: {text_of(results[-1].content)}")


def asker(api: RecipeAPI) -> None:
    api.register_agent("asker", "Ask, keep working, then wait.", async_questions=True)
    api.set_demo_model(
        ScriptedModel(
            [
                AssistantMessage(text="Asking while I work.", tool_calls=[ToolCall(
                    id="q1", name="ask_user_async",
                    arguments={"question": "Which name?", "options": ["Bolt", "Comet"]},
                )]),
                AssistantMessage(tool_calls=[ToolCall(id="w1", name="await_answers")]),
                _reply,
            ],
            label="asker",
        )
    )  # fmt: skip


def asks(api: RecipeAPI) -> None:
    @api.tool(execution_mode="sequential")
    async def ask_it(
        tool_call_id: str, params: Nothing, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Ask the user which day."""
        return await ask_user_question(
            "Which day?", options=["Mon", "Tue"], tool_call_id=tool_call_id, ctx=ctx
        )

    api.register_agent("asks", "Ask, then report.")
    api.set_demo_model(
        ScriptedModel(
            [
                AssistantMessage(
                    text="One question.", tool_calls=[ToolCall(id="c1", name="ask_it")]
                ),
                _reply,
            ],
            label="asks",
        )
    )


def cut_short(api: RecipeAPI) -> None:
    api.register_agent("cut", "Answer at length.")
    api.set_demo_model(
        ScriptedModel(
            [AssistantMessage(text="The first half of the report", stop_reason="max_tokens")],
            label="cut",
        )
    )
