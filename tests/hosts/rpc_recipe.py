"""A recipe for the RPC server's tests, with a scripted demo model that needs no network.

The model looks at the last message of the transcript:

- a user message ``quick`` calls ``quick_question`` (a question with a 0.2 s dialog timeout);
- ``slow`` calls ``slow_question`` (the RPC default timeout, 120 s: it waits for an answer or
  an abort);
- ``noisy`` calls ``noisy`` (a tool that prints to standard output and logs);
- ``fruits`` calls ``pick_fruits`` (a multiple choice, no typed answer);
- ``deploy`` calls ``deploy`` (a yes/no ``confirm`` dialog straight on ``ctx.ui``);
- ``approve`` calls ``approve`` (an approval);
- ``flags`` calls ``flags`` (says whether auto-approval is on in the session and the process);
- ``tree`` calls ``tree`` (a result whose ``details`` nest 3000 levels deep);
- ``forever`` calls ``forever`` (a question with ``timeout=math.inf``);
- ``pause`` calls ``pause`` (a tool that pauses the run on a hand-built interrupt, which RPC
  mode cannot resume);
- ``stubborn`` calls ``stubborn`` (a blocking call in a worker thread, which no abort stops:
  it reports ``blocking`` as an update, then sleeps a minute);
- ``progress`` calls ``progress`` (reports ``step 1`` to ``step 3000`` as fast as it can, then
  returns ``done``);
- ``cat`` calls ``cat`` (runs ``cat``, which reads the standard input it inherits, and says
  what it read);
- ``ship`` calls ``ship`` with ``{"env": "prod"}`` (a tool that declares its approval:
  Approve, Approve always, Edit arguments... in a select, the edit in an editor);
- ``leak`` fails the model call, quoting the process's ``OPENAI_API_KEY`` (a provider's error
  echoing the key it was given);
- any other user message is echoed: ``echo: <text>``;
- after a tool result it replies ``tool said: <result text>``.
"""

from __future__ import annotations

import logging
import math
import os
import time
from typing import Any

import anyio
from pydantic import BaseModel

from interactions import AskUserInterrupt, ask_user_approval, ask_user_question
from recipes import NoParameters, OnUpdate, RecipeAPI, ToolContext, ToolResult
from recipes.messages import (
    AssistantMessage,
    TextPart,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    text_of,
)
from recipes.models import ModelRequest, ScriptedModel

QUICK_TIMEOUT = 0.2
COMMANDS = {
    "quick": "quick_question",
    "slow": "slow_question",
    "noisy": "noisy",
    "fruits": "pick_fruits",
    "deploy": "deploy",
    "approve": "approve",
    "ship": "ship",
    "flags": "flags",
    "tree": "tree",
    "forever": "forever",
    "stubborn": "stubborn",
    "pause": "pause",
    "cat": "cat",
    "progress": "progress",
}
PROGRESS_STEPS = 3000
TREE_DEPTH = 3000


class Ship(BaseModel):
    env: str


def recipe(api: RecipeAPI) -> None:
    @api.tool(execution_mode="sequential")
    async def quick_question(
        tool_call_id: str, params: NoParameters, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Ask a question that gives up after 0.2 s."""
        return await ask_user_question(
            "Pick a colour",
            options=["Red", "Blue"],
            timeout=QUICK_TIMEOUT,
            tool_call_id=tool_call_id,
            ctx=ctx,
        )

    @api.tool(execution_mode="sequential")
    async def slow_question(
        tool_call_id: str, params: NoParameters, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Ask a question and wait for the answer (or an abort)."""
        return await ask_user_question(
            "Pick a fruit",
            options=["Apple", "Pear"],
            tool_call_id=tool_call_id,
            ctx=ctx,
        )

    @api.tool
    async def noisy(
        tool_call_id: str, params: NoParameters, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Print to standard output and log, as careless code does."""
        print("noise on stdout", flush=True)
        logging.getLogger("rpc_recipe").warning("noise in the log")
        return "printed"

    @api.tool(execution_mode="sequential")
    async def pick_fruits(
        tool_call_id: str, params: NoParameters, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Ask for any number of fruits."""
        return await ask_user_question(
            "Which fruits?",
            options=["Apple", "Pear", "Plum"],
            selection="multiple",
            allow_other=False,
            tool_call_id=tool_call_id,
            ctx=ctx,
            env=ctx.env,
        )

    @api.tool(execution_mode="sequential")
    async def deploy(
        tool_call_id: str, params: NoParameters, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Ask yes or no through the UI's confirm dialog."""
        assert ctx.ui is not None
        confirmed = await ctx.ui.confirm("Deploy?", "This ships to production.")
        return f"confirmed: {confirmed}"

    @api.tool(execution_mode="sequential")
    async def approve(
        tool_call_id: str, params: NoParameters, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Ask for an approval."""
        return await ask_user_approval(
            title="Ship it?", tool_call_id=tool_call_id, ctx=ctx, env=ctx.env
        )

    @api.tool(requires_approval=True)
    async def ship(
        tool_call_id: str, params: Ship, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Ship the build to an environment."""
        return f"shipped to {params.env}"

    @api.tool
    async def flags(
        tool_call_id: str, params: NoParameters, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Say where PI_ASK_USER_AUTO_APPROVE is set."""
        flag = "PI_ASK_USER_AUTO_APPROVE"
        return f"session={ctx.env.get(flag)} process={os.environ.get(flag)}"

    @api.tool
    async def tree(
        tool_call_id: str, params: NoParameters, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Return a result whose details nest deeper than JSON encoders recurse."""
        details: dict[str, Any] = {}
        for _ in range(TREE_DEPTH):
            details = {"child": details}
        return ToolResult(content=[TextPart(text="grown")], details=details)

    @api.tool(execution_mode="sequential")
    async def forever(
        tool_call_id: str, params: NoParameters, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Ask a question with no time limit."""
        return await ask_user_question(
            "Wait forever?", options=["Yes", "No"], timeout=math.inf,
            tool_call_id=tool_call_id, ctx=ctx,
        )  # fmt: skip

    @api.tool(execution_mode="sequential")
    async def pause(
        tool_call_id: str, params: NoParameters, ctx: ToolContext, on_update: OnUpdate
    ) -> ToolResult:
        """Pause the run on an interrupt of the tool's own."""
        interrupt = AskUserInterrupt(
            id=f"int-{tool_call_id}", reason="acme:review", message="Review it",
            expires_at="2099-01-01T00:00:00Z",
        )  # fmt: skip
        return ToolResult.awaiting(interrupt)

    @api.tool(execution_mode="sequential")
    async def stubborn(
        tool_call_id: str, params: NoParameters, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Block a worker thread for a minute, deaf to any abort."""
        on_update("blocking")
        await anyio.to_thread.run_sync(time.sleep, 60)
        return "woke up"

    @api.tool(execution_mode="sequential")
    async def progress(
        tool_call_id: str, params: NoParameters, ctx: ToolContext, on_update: OnUpdate
    ) -> str:
        """Report every step of a long job, as fast as it goes."""
        for step in range(1, PROGRESS_STEPS + 1):
            on_update(f"step {step}")
        return "done"

    @api.tool(execution_mode="sequential")
    async def cat(
        tool_call_id: str, params: NoParameters, ctx: ToolContext, on_update: OnUpdate
    ) -> str:
        """Run ``cat`` on the standard input the host leaves this process."""
        done = await anyio.run_process(["cat"], check=False)
        return f"cat read {done.stdout!r}"

    api.register_agent("tester", "Do what the user's message names.")
    api.set_demo_model(ScriptedModel([_reply] * 50, label="rpc-test"))


def _reply(request: ModelRequest) -> AssistantMessage:
    last = request.messages[-1]
    if isinstance(last, ToolResultMessage):
        return AssistantMessage(text=f"tool said: {text_of(last.content)}")
    text = text_of(last.content) if isinstance(last, UserMessage) else ""
    if text.strip() == "leak":
        raise RuntimeError(f"invalid api key {os.environ.get('OPENAI_API_KEY', '')!r}")
    tool = COMMANDS.get(text.strip())
    if tool is None:
        return AssistantMessage(text=f"echo: {text}")
    turn = sum(isinstance(m, AssistantMessage) for m in request.messages)
    arguments = {"env": "prod"} if tool == "ship" else {}
    call = ToolCall(id=f"call_{turn}_{tool}", name=tool, arguments=arguments)
    return AssistantMessage(tool_calls=[call])
