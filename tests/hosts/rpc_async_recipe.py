"""A recipe for the RPC host's async-questions tests: the model asks, then waits, then says
what the two tools returned."""

from __future__ import annotations

from recipes import RecipeAPI
from recipes.messages import AssistantMessage, ToolCall, ToolResultMessage, text_of
from recipes.models import ModelRequest, ScriptedModel


def _said(request: ModelRequest) -> AssistantMessage:
    results = [text_of(m.content) for m in request.messages if isinstance(m, ToolResultMessage)]
    return AssistantMessage(text=" | ".join(results))


def recipe(api: RecipeAPI) -> None:
    api.register_agent("asker", "Ask while you work.")
    api.set_demo_model(
        ScriptedModel(
            [
                AssistantMessage(tool_calls=[ToolCall(
                    id="q1", name="ask_user_async",
                    arguments={"question": "Tone?", "options": ["friendly", "formal"]},
                )]),
                AssistantMessage(tool_calls=[ToolCall(id="w1", name="await_answers")]),
                _said,
            ],
            label="rpc-async",
        )
    )
