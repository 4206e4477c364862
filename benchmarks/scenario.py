"""The benchmark scenario, the same on every engine compared: a tool asks for approval, the run
pauses and is stored, the answer arrives, the run resumes and finishes. No LLM: a scripted model
calls the tool, then says it is done.

The model keeps no log of the requests it served (``keep_requests=0``; :class:`ScriptedModel`
keeps the last 100 for tests to read, about 7 KiB each here, which ``bench_scale.py``'s memory
check would count as the server's).
"""

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
            keep_requests=0,
        )
    )
