"""The recipe of the email host's tests: each line of the prompt, ``tool: text``, becomes one
call in the first batch.

- ``gate: T`` an approval only ada and the group release may answer;
- ``urgent: T`` the same, reminded every hour and escalated to cy after four;
- ``two: T`` an approval two of them must give;
- ``pick: Q`` a question with the options Mon and Tue for ada and the group release;
- ``open: Q`` a free-text question naming no approvers;
- ``many: Q`` a question of several of Mon, Tue and Wed, for ada and the group release.

Then the model reports every tool result: ``Done: <result> | <result>``.
"""

from __future__ import annotations

from datetime import timedelta

from pydantic import BaseModel

from interactions import ask_user_approval, ask_user_question
from recipes import OnUpdate, RecipeAPI, ToolContext
from recipes.messages import AssistantMessage, ToolCall, ToolResultMessage, UserMessage, text_of
from recipes.models import ModelRequest, ScriptedModel

APPROVERS = ["ada", "group:release"]
TOOLS = {"gate", "urgent", "two", "pick", "open", "many"}


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
    async def urgent(
        tool_call_id: str, params: Ask, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Ask ada or a release manager to approve; remind them hourly, then ask cy too."""
        return await ask_user_approval(
            title=params.text, approvers=APPROVERS, remind_after=timedelta(hours=1),
            escalate_after=timedelta(hours=4), escalate_to=["cy"],
            tool_call_id=tool_call_id, ctx=ctx,
        )  # fmt: skip

    @api.tool
    async def two(tool_call_id: str, params: Ask, ctx: ToolContext, on_update: OnUpdate) -> object:
        """Ask two of ada and the release managers to approve."""
        return await ask_user_approval(
            title=params.text, approvers=APPROVERS, required_approvals=2,
            tool_call_id=tool_call_id, ctx=ctx,
        )  # fmt: skip

    @api.tool
    async def pick(tool_call_id: str, params: Ask, ctx: ToolContext, on_update: OnUpdate) -> object:
        """Ask ada or a release manager to pick a day."""
        return await ask_user_question(
            params.text, options=["Mon", "Tue"], approvers=APPROVERS,
            tool_call_id=tool_call_id, ctx=ctx,
        )  # fmt: skip

    @api.tool
    async def many(tool_call_id: str, params: Ask, ctx: ToolContext, on_update: OnUpdate) -> object:
        """Ask ada or a release manager to pick days."""
        return await ask_user_question(
            params.text, options=["Mon", "Tue", "Wed"], selection="multiple",
            approvers=APPROVERS, tool_call_id=tool_call_id, ctx=ctx,
        )  # fmt: skip

    @api.tool
    async def open(tool_call_id: str, params: Ask, ctx: ToolContext, on_update: OnUpdate) -> object:
        """Ask anyone."""
        return await ask_user_question(params.text, tool_call_id=tool_call_id, ctx=ctx)

    api.register_agent("people", "Ask what the prompt lists, then report the answers.")
    api.set_demo_model(ScriptedModel([_ask, _report], label="email-test"))


def _ask(request: ModelRequest) -> AssistantMessage:
    prompt = next(text_of(m.content) for m in request.messages if isinstance(m, UserMessage))
    calls: list[ToolCall] = []
    for line in prompt.splitlines():
        tool, _, text = line.partition(":")
        if tool.strip() in TOOLS and text.strip():
            call_id = f"c{len(calls) + 1}"
            calls.append(ToolCall(id=call_id, name=tool.strip(), arguments={"text": text.strip()}))
    return AssistantMessage(text="Let me ask.", tool_calls=calls)


def _report(request: ModelRequest) -> AssistantMessage:
    results = [text_of(m.content) for m in request.messages if isinstance(m, ToolResultMessage)]
    return AssistantMessage(text="Done: " + " | ".join(results))
