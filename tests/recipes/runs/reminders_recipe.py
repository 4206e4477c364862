"""A recipe whose tool asks ``ada`` for an approval, reminding every hour and escalating to
the group ``oncall`` after four hours."""

from __future__ import annotations

from datetime import timedelta

from interactions import ask_user_approval
from recipes import NoParameters, OnUpdate, RecipeAPI, ToolContext
from recipes.messages import AssistantMessage, ToolCall, ToolResultMessage, text_of
from recipes.models import ModelRequest, ScriptedModel


def recipe(api: RecipeAPI) -> None:
    @api.tool
    async def release(
        tool_call_id: str, params: NoParameters, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Release v2, once ada (or, after four hours, on-call) approves."""
        return await ask_user_approval(
            title="Release v2?",
            approvers=["ada"],
            remind_after=timedelta(hours=1),
            escalate_after=timedelta(hours=4),
            escalate_to=["group:oncall"],
            tool_call_id=tool_call_id,
            ctx=ctx,
        )

    api.register_agent("releaser", "Release when asked.")
    api.set_demo_model(ScriptedModel([_call, _report], label="releaser-demo"))


def _call(request: ModelRequest) -> AssistantMessage:
    return AssistantMessage(tool_calls=[ToolCall(id="call_release", name="release")])


def _report(request: ModelRequest) -> AssistantMessage:
    result = [m for m in request.messages if isinstance(m, ToolResultMessage)][-1]
    return AssistantMessage(text=f"Tool said: {text_of(result.content)}")
