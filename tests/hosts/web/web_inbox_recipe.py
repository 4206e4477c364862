"""The recipe of the inbox's page tests: each line of the prompt, ``tool: text``, becomes one
call in the first batch.

- ``gate: T`` an approval only ada and the group release may answer;
- ``open: Q`` a free-text question anyone may answer;
- ``pick: Q`` a single choice anyone may answer (options Alpha, Beta, Gamma: values in lower
  case, so a page that shows the value instead of the label is seen).

Then the model reports every tool result: ``Done: <result> | <result>``.
"""

from __future__ import annotations

from pydantic import BaseModel

from interactions import ask_user_approval, ask_user_question
from recipes import OnUpdate, RecipeAPI, ToolContext
from recipes.messages import AssistantMessage, ToolCall, ToolResultMessage, UserMessage, text_of
from recipes.models import ModelRequest, ScriptedModel

APPROVERS = ["ada", "group:release"]
OPTIONS = [
    {"label": "Alpha", "value": "alpha"},
    {"label": "Beta", "value": "beta", "description": "the second letter"},
    {"label": "Gamma", "value": "gamma"},
]
TOOLS = {"gate", "open", "pick"}


class Ask(BaseModel):
    text: str


def recipe(api: RecipeAPI) -> None:
    @api.tool
    async def gate(tool_call_id: str, params: Ask, ctx: ToolContext, on_update: OnUpdate) -> object:
        """Ask ada or a release manager to approve."""
        return await ask_user_approval(
            title=params.text, approvers=APPROVERS, tool_call_id=tool_call_id, ctx=ctx
        )

    @api.tool
    async def open(tool_call_id: str, params: Ask, ctx: ToolContext, on_update: OnUpdate) -> object:
        """Ask anyone."""
        return await ask_user_question(params.text, tool_call_id=tool_call_id, ctx=ctx)

    @api.tool
    async def pick(tool_call_id: str, params: Ask, ctx: ToolContext, on_update: OnUpdate) -> object:
        """Ask anyone to pick a letter."""
        return await ask_user_question(
            params.text, options=OPTIONS, tool_call_id=tool_call_id, ctx=ctx
        )

    api.register_agent("inbox", "Ask what the prompt lists, then report the answers.")
    api.set_demo_model(ScriptedModel([_ask, _report], label="inbox-test"))


def _ask(request: ModelRequest) -> AssistantMessage:
    prompt = next(text_of(m.content) for m in request.messages if isinstance(m, UserMessage))
    calls = []
    for line in prompt.splitlines():
        tool, _, text = line.partition(":")
        if tool.strip() in TOOLS and text.strip():
            call_id = f"c{len(calls) + 1}"
            calls.append(ToolCall(id=call_id, name=tool.strip(), arguments={"text": text.strip()}))
    return AssistantMessage(text="Let me ask.", tool_calls=calls)


def _report(request: ModelRequest) -> AssistantMessage:
    results = [text_of(m.content) for m in request.messages if isinstance(m, ToolResultMessage)]
    return AssistantMessage(text="Done: " + " | ".join(results))
