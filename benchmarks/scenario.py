"""The benchmark scenario, the same on every engine compared: a tool asks for approval, the run
pauses and is stored, the answer arrives, the run resumes and finishes. No LLM: a scripted model
calls the tool, then says it is done."""

from __future__ import annotations

from interactions import ask_user_approval
from recipes import OnUpdate, RecipeAPI, ToolContext
from recipes.messages import AssistantMessage, ToolCall
from recipes.models import ScriptedModel


def recipe(api: RecipeAPI) -> None:
    @api.tool(execution_mode="sequential")
    async def deploy(
        tool_call_id: str, params: None, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Deploy once a human approves."""
        return await ask_user_approval(title="Deploy?", tool_call_id=tool_call_id, ctx=ctx)

    api.register_agent("deployer", "Deploy when approved.")
    api.set_demo_model(
        ScriptedModel(
            [AssistantMessage(tool_calls=[ToolCall(id="call_1", name="deploy")]), "Deployed."],
            label="bench",
        )
    )
