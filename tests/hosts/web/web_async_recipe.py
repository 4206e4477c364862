"""An agent that asks the operator while it works (``async_questions=True``), for the web
host's tests: it posts the prompt as an async question, then works until the question is
answered (its tool watches the store the server uses, ``state.db`` in its directory), then
reports what it was told — the answer arrives as a message at its next step. ``awaits`` posts
the prompt as an async question, then waits for the answer with the await tool (the run pauses
on its own ``await`` wait), then reports."""

from __future__ import annotations

import anyio
from pydantic import BaseModel

from interactions.store import open_sqlite_store
from recipes import OnUpdate, RecipeAPI, ToolContext
from recipes.messages import AssistantMessage, ToolCall, ToolResultMessage, UserMessage, text_of
from recipes.models import ModelRequest, ScriptedModel

WORK_BOUND = 60.0


class Nothing(BaseModel):
    pass


def recipe(api: RecipeAPI) -> None:
    @api.tool
    async def work(
        tool_call_id: str, params: Nothing, ctx: ToolContext, on_update: OnUpdate
    ) -> str:
        """Work until the operator has answered the posted question."""
        iid = f"{ctx.run_id}_asker_async_1"
        async with await open_sqlite_store(ctx.cwd / "state.db") as store:
            with anyio.fail_after(WORK_BOUND):
                seen = 0
                while (await store.get_interaction(ctx.run_id, iid)).answer is None:
                    found = await store.wait_for_events(ctx.run_id, after_seq=seen, timeout=5)
                    seen = found[-1].seq if found else seen
        return "worked"

    api.register_agent("asker", "Ask, keep working.", async_questions=True)
    api.set_demo_model(ScriptedModel([_post, _work, _report], label="web-async"))


def awaits(api: RecipeAPI) -> None:
    api.register_agent("waiter", "Ask, then wait.", async_questions=True)
    api.set_demo_model(ScriptedModel([_post, _await, _report], label="web-await"))


def _post(request: ModelRequest) -> AssistantMessage:
    prompt = next(text_of(m.content) for m in request.messages if isinstance(m, UserMessage))
    call = ToolCall(id="q1", name="ask_user_async", arguments={"question": prompt})
    return AssistantMessage(text="Asking, and working meanwhile.", tool_calls=[call])


def _work(request: ModelRequest) -> AssistantMessage:
    return AssistantMessage(tool_calls=[ToolCall(id="w1", name="work", arguments={})])


def _await(request: ModelRequest) -> AssistantMessage:
    return AssistantMessage(tool_calls=[ToolCall(id="w1", name="await_answers", arguments={})])


def _report(request: ModelRequest) -> AssistantMessage:
    told = [
        text_of(m.content)
        for m in request.messages[1:]
        if isinstance(m, ToolResultMessage | UserMessage)
    ]
    return AssistantMessage(text="Done: " + " | ".join(told))
