"""The benchmark scenario, the same on every engine compared: a tool asks for approval, the run
pauses and is stored, the answer arrives, the run resumes and finishes. No LLM: a scripted model
calls the tool, then says it is done.

The model keeps no log of the requests it served (:class:`ScriptedModel` keeps every one, for
tests to read): a server answering 10,000 runs of this recipe would otherwise hold each run's
transcript in that log, about 7 KiB a run, and ``bench_scale.py``'s memory check would measure
the test helper's log, not the server.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from interactions import ask_user_approval
from recipes import OnUpdate, RecipeAPI, ToolContext
from recipes.messages import AssistantMessage, ToolCall
from recipes.models import ModelEvent, ModelRequest, ScriptedModel


class _Unlogged(ScriptedModel):
    """:class:`ScriptedModel`, forgetting each request once it has answered it."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        try:
            async for event in super().stream(request):
                yield event
        finally:
            self.requests.clear()


def recipe(api: RecipeAPI) -> None:
    @api.tool(execution_mode="sequential")
    async def deploy(
        tool_call_id: str, params: None, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Deploy once a human approves."""
        return await ask_user_approval(title="Deploy?", tool_call_id=tool_call_id, ctx=ctx)

    api.register_agent("deployer", "Deploy when approved.")
    api.set_demo_model(
        _Unlogged(
            [AssistantMessage(tool_calls=[ToolCall(id="call_1", name="deploy")]), "Deployed."],
            label="bench",
        )
    )
