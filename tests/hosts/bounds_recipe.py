"""Recipes whose one tool goes past what a process can give: for tests of a run's bounds.

``hog``'s tool asks for more memory than any machine has (a real ``MemoryError``); ``spin``'s
tool creates a file ``started`` in the working directory, then computes in a pure-Python loop
that never awaits (bounded: 120 s), as a tool busy with a long computation does; called again
once ``started`` is there (a retry), it returns at once.
"""

from __future__ import annotations

import json
import time

import anyio
from pydantic import BaseModel

from recipes import OnUpdate, RecipeAPI, ToolContext
from recipes.messages import AssistantMessage, ToolCall
from recipes.models import ScriptedModel


class Nothing(BaseModel):
    pass


def hog(api: RecipeAPI) -> None:
    @api.tool
    async def take_memory(
        tool_call_id: str, params: Nothing, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Take more memory than there is."""
        return str(len(bytearray(1 << 50)))

    call = AssistantMessage(tool_calls=[ToolCall(id="m1", name="take_memory", arguments={})])
    api.register_agent("hogger", "Take memory.")
    api.set_demo_model(ScriptedModel([call, AssistantMessage(text="It went on.")], label="hog"))


def spin(api: RecipeAPI) -> None:
    @api.tool
    async def compute(
        tool_call_id: str, params: Nothing, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Compute for a long time, never awaiting."""
        if await anyio.Path("started").exists():  # a retry, after a stop: done at once
            return "computed"
        await anyio.Path("started").write_text("spinning")
        end, n = time.monotonic() + 120, 0
        while time.monotonic() < end:
            n += 1
        return "computed"

    call = AssistantMessage(tool_calls=[ToolCall(id="c1", name="compute", arguments={})])
    done = AssistantMessage(text=json.dumps({"result": "done"}))
    api.register_agent("spinner", "Compute.")
    api.set_demo_model(ScriptedModel([call, done], label="spin"))


def stubborn(api: RecipeAPI) -> None:
    """``spin``'s tool, that goes on computing when it is stopped (it swallows even a
    ``BaseException``), as no tool should."""

    @api.tool
    async def insist(
        tool_call_id: str, params: Nothing, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Compute for a long time, and go on when stopped."""
        await anyio.Path("started").write_text("insisting")
        end = time.monotonic() + 120
        while time.monotonic() < end:
            try:
                while time.monotonic() < end:
                    pass
            except BaseException:  # on purpose: a tool that will not stop
                continue
        return "computed"

    call = AssistantMessage(tool_calls=[ToolCall(id="i1", name="insist", arguments={})])
    api.register_agent("insister", "Compute.")
    api.set_demo_model(ScriptedModel([call, AssistantMessage(text="Done.")], label="insist"))
