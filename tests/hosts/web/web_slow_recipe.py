"""A recipe for the web host's tests whose resumed leg holds: it asks a word, then (once
answered) holds its leg on the port the prompt names until the test's gate sends a byte (at
most 30 s). The calls are sequential, so the first leg pauses on the ask and the hold runs in
the resume's leg; then the model reports every tool result: ``Done: <result> | <result>``."""

from __future__ import annotations

import anyio
from pydantic import BaseModel

from interactions import ask_user_question
from recipes import OnUpdate, RecipeAPI, ToolContext
from recipes.messages import AssistantMessage, ToolCall, ToolResultMessage, UserMessage, text_of
from recipes.models import ModelRequest, ScriptedModel

HOLD_LIMIT = 30.0


class Port(BaseModel):
    port: int


def recipe(api: RecipeAPI) -> None:
    @api.tool(execution_mode="sequential")
    async def ask(tool_call_id: str, params: Port, ctx: ToolContext, on_update: OnUpdate) -> object:
        """Ask for a word."""
        return await ask_user_question("Which word?", tool_call_id=tool_call_id, ctx=ctx)

    @api.tool(execution_mode="sequential")
    async def hold(
        tool_call_id: str, params: Port, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Wait (bounded) for a byte on the port."""
        with anyio.fail_after(HOLD_LIMIT):
            async with await anyio.connect_tcp("127.0.0.1", params.port) as gate:
                await gate.receive()
        return "held"

    api.register_agent("slow", "Ask, hold, report.")
    api.set_demo_model(ScriptedModel([_calls, _report], label="slow-test"))


def _calls(request: ModelRequest) -> AssistantMessage:
    prompt = next(text_of(m.content) for m in request.messages if isinstance(m, UserMessage))
    port = {"port": int(prompt)}
    calls = [ToolCall(id="c1", name="ask", arguments=port),
             ToolCall(id="c2", name="hold", arguments=port)]  # fmt: skip
    return AssistantMessage(text="", tool_calls=calls)


def _report(request: ModelRequest) -> AssistantMessage:
    results = [text_of(m.content) for m in request.messages if isinstance(m, ToolResultMessage)]
    return AssistantMessage(text="Done: " + " | ".join(results))
