"""A recipe whose tool asks for an approval two release managers must give: ``release`` asks
anyone in the group ``release`` (``approvers=["group:release"]``, ``required_approvals=2``)."""

from __future__ import annotations

from interactions import ask_user_approval
from recipes import NoParameters, OnUpdate, RecipeAPI, ToolContext
from recipes.messages import AssistantMessage, ToolCall, ToolResultMessage, text_of
from recipes.models import ModelRequest, ScriptedModel


def recipe(api: RecipeAPI) -> None:
    @api.tool
    async def release(
        tool_call_id: str, params: NoParameters, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Release v2, once two release managers approve."""
        return await ask_user_approval(
            title="Release v2?",
            approvers=["group:release"],
            required_approvals=2,
            tool_call_id=tool_call_id,
            ctx=ctx,
        )

    api.register_agent("releaser", "Release when asked.")
    api.set_demo_model(ScriptedModel([_call, _report], label="quorum-demo"))


def _call(request: ModelRequest) -> AssistantMessage:
    return AssistantMessage(tool_calls=[ToolCall(id="call_release", name="release")])


def _report(request: ModelRequest) -> AssistantMessage:
    result = [m for m in request.messages if isinstance(m, ToolResultMessage)][-1]
    return AssistantMessage(text=f"Tool said: {text_of(result.content)}")
