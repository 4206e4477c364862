"""A recipe that pauses on two questions at once: ``release``, an approval two release
managers must give (``required_approvals=2``), and ``name``, a question anyone answers."""

from __future__ import annotations

from interactions import ask_user_approval, ask_user_question
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

    @api.tool
    async def name(
        tool_call_id: str, params: NoParameters, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Name the release."""
        return await ask_user_question("Name the release?", tool_call_id=tool_call_id, ctx=ctx)

    api.register_agent("releaser", "Release and name it.")
    api.set_demo_model(ScriptedModel([_calls, _report], label="quorum-pair-demo"))


def _calls(request: ModelRequest) -> AssistantMessage:
    return AssistantMessage(
        tool_calls=[
            ToolCall(id="call_release", name="release"),
            ToolCall(id="call_name", name="name"),
        ]
    )


def _report(request: ModelRequest) -> AssistantMessage:
    said = [text_of(m.content) for m in request.messages if isinstance(m, ToolResultMessage)]
    return AssistantMessage(text=" | ".join(said))
