"""The recipe the web host's tests serve: each line of the prompt, ``tool: text``, becomes one
call in the first batch, so one run can ask any mix of questions at once.

- ``pick: Q`` a single choice (options with descriptions, "Other" allowed);
- ``many: Q`` a multiple choice; ``strict: Q`` a fixed choice (no "Other");
- ``text: Q`` free text; ``approve: T`` an approval with a markdown body and sections;
- ``twice: Q`` breaks the ask contract (asks again after a pause): the run fails;
- ``tool@ID: text`` gives the call the id ``ID`` (else ``c1``, ``c2``...);
- ``hold: PORT`` connects to 127.0.0.1:PORT and waits (at most 30 s) for a byte: a leg that
  keeps its worker busy until the test lets it go.

Then the model reports every tool result: ``Done: <result> | <result>``.
"""

from __future__ import annotations

import anyio
from pydantic import BaseModel

from interactions import ask_user_approval, ask_user_question
from recipes import OnUpdate, RecipeAPI, ToolContext
from recipes.messages import AssistantMessage, ToolCall, ToolResultMessage, UserMessage, text_of
from recipes.models import ModelRequest, ScriptedModel

OPTIONS = [
    {"label": "Alpha", "value": "alpha", "description": "the first letter"},
    {"label": "Beta", "value": "beta", "description": "the second letter"},
    {"label": "Gamma", "value": "gamma"},
]
TOOLS = {"pick", "many", "strict", "text", "approve", "twice", "hold"}
HOLD_LIMIT = 30.0


class Ask(BaseModel):
    text: str


def recipe(api: RecipeAPI) -> None:
    @api.tool
    async def pick(tool_call_id: str, params: Ask, ctx: ToolContext, on_update: OnUpdate) -> object:
        """Ask for one of three letters."""
        return await ask_user_question(
            params.text, options=OPTIONS, header="Pick one", tool_call_id=tool_call_id, ctx=ctx
        )

    @api.tool
    async def many(tool_call_id: str, params: Ask, ctx: ToolContext, on_update: OnUpdate) -> object:
        """Ask for any of three colours."""
        return await ask_user_question(
            params.text,
            options=["Red", "Green", "Blue"],
            selection="multiple",
            tool_call_id=tool_call_id,
            ctx=ctx,
        )

    @api.tool
    async def strict(
        tool_call_id: str, params: Ask, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Ask for one of three letters, nothing else."""
        return await ask_user_question(
            params.text, options=OPTIONS, allow_other=False, tool_call_id=tool_call_id, ctx=ctx
        )

    @api.tool
    async def text(tool_call_id: str, params: Ask, ctx: ToolContext, on_update: OnUpdate) -> object:
        """Ask for free text."""
        return await ask_user_question(params.text, tool_call_id=tool_call_id, ctx=ctx)

    @api.tool
    async def approve(
        tool_call_id: str, params: Ask, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Ask for an approval."""
        return await ask_user_approval(
            title=params.text,
            body="The **build** passed.\n\n- tests: green\n- lint: green",
            sections=[{"title": "Plan", "body": "1. deploy\n2. watch `errors`"}],
            tool_call_id=tool_call_id,
            ctx=ctx,
        )

    @api.tool
    async def twice(
        tool_call_id: str, params: Ask, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Ask, then ask again without returning the pause (a contract error)."""
        await ask_user_question(params.text, tool_call_id=tool_call_id, ctx=ctx)
        return await ask_user_question(params.text + " (again)", tool_call_id=tool_call_id, ctx=ctx)

    @api.tool
    async def hold(tool_call_id: str, params: Ask, ctx: ToolContext, on_update: OnUpdate) -> object:
        """Wait (bounded) until the test's listener on the port named sends a byte."""
        with anyio.fail_after(HOLD_LIMIT):
            async with await anyio.connect_tcp("127.0.0.1", int(params.text)) as gate:
                await gate.receive()
        return "held"

    api.register_agent("web", "Ask what the prompt lists, then report the answers.")
    api.set_demo_model(ScriptedModel([_ask, _report], label="web-test"))


def _ask(request: ModelRequest) -> AssistantMessage:
    prompt = next(text_of(m.content) for m in request.messages if isinstance(m, UserMessage))
    calls = []
    for line in prompt.splitlines():
        tool, _, text = line.partition(":")
        name, _, given = tool.strip().partition("@")  # ``tool@ID: text`` names the call's id
        if name in TOOLS and text.strip():
            call_id = given or f"c{len(calls) + 1}"
            calls.append(ToolCall(id=call_id, name=name, arguments={"text": text.strip()}))
    return AssistantMessage(text="Let me ask.", tool_calls=calls)


def _report(request: ModelRequest) -> AssistantMessage:
    results = [text_of(m.content) for m in request.messages if isinstance(m, ToolResultMessage)]
    return AssistantMessage(text="Done: " + " | ".join(results))
