"""The recipe the web host's tests serve: each line of the prompt, ``tool: text``, becomes one
call in the first batch, so one run can ask any mix of questions at once.

- ``pick: Q`` a single choice (options with descriptions, "Other" allowed);
- ``many: Q`` a multiple choice; ``strict: Q`` a fixed choice (no "Other");
- ``text: Q`` free text; ``approve: T`` an approval with a markdown body and sections;
- ``ship: TARGET`` calls a tool that declares its approval, with flat arguments (``target``,
  ``replicas`` 2 of at most 10, ``mode`` one of fast/safe, ``notify``): its approver may edit
  them; ``batch: A, B`` likewise with a list (``targets``), edited as JSON;
- ``twice: Q`` breaks the ask contract (asks again after a pause): the run fails;
- ``tool@ID: text`` gives the call the id ``ID`` (else ``c1``, ``c2``...);
- ``hold: PORT`` connects to 127.0.0.1:PORT and waits (at most 30 s) for a byte: a leg that
  keeps its worker busy until the test lets it go.

Then the model reports every tool result: ``Done: <result> | <result>``.
"""

from __future__ import annotations

from typing import Literal

import anyio
from pydantic import BaseModel, Field

from interactions import ask_user_approval, ask_user_question
from recipes import OnUpdate, RecipeAPI, ToolContext
from recipes.messages import AssistantMessage, ToolCall, ToolResultMessage, UserMessage, text_of
from recipes.models import ModelRequest, ScriptedModel

OPTIONS = [
    {"label": "Alpha", "value": "alpha", "description": "the first letter"},
    {"label": "Beta", "value": "beta", "description": "the second letter"},
    {"label": "Gamma", "value": "gamma"},
]
TOOLS = {"pick", "many", "strict", "text", "approve", "twice", "hold", "ship", "batch"}
HOLD_LIMIT = 30.0


class Ask(BaseModel):
    text: str


class Ship(BaseModel):
    target: str = Field(description="where to ship")
    replicas: int = Field(default=1, ge=1, le=10, description="how many copies, 1 to 10")
    mode: Literal["fast", "safe"] = "safe"
    notify: bool = False


class Batch(BaseModel):
    targets: list[str]


def recipe(api: RecipeAPI) -> None:
    @api.tool
    async def pick(tool_call_id: str, params: Ask, ctx: ToolContext, on_update: OnUpdate) -> object:
        """Ask for one of three letters."""
        return await ask_user_question(
            params.text, options=OPTIONS, header="Pick one", tool_call_id=tool_call_id, ctx=ctx
        )

    @api.tool
    async def many(tool_call_id: str, params: Ask, ctx: ToolContext, on_update: OnUpdate) -> object:
        """Ask for any of three colours."""
        return await ask_user_question(
            params.text,
            options=["Red", "Green", "Blue"],
            selection="multiple",
            tool_call_id=tool_call_id,
            ctx=ctx,
        )

    @api.tool
    async def strict(
        tool_call_id: str, params: Ask, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Ask for one of three letters, nothing else."""
        return await ask_user_question(
            params.text, options=OPTIONS, allow_other=False, tool_call_id=tool_call_id, ctx=ctx
        )

    @api.tool
    async def text(tool_call_id: str, params: Ask, ctx: ToolContext, on_update: OnUpdate) -> object:
        """Ask for free text."""
        return await ask_user_question(params.text, tool_call_id=tool_call_id, ctx=ctx)

    @api.tool
    async def approve(
        tool_call_id: str, params: Ask, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Ask for an approval."""
        return await ask_user_approval(
            title=params.text,
            body="The **build** passed.\n\n- tests: green\n- lint: green",
            sections=[{"title": "Plan", "body": "1. deploy\n2. watch `errors`"}],
            tool_call_id=tool_call_id,
            ctx=ctx,
        )

    @api.tool
    async def twice(
        tool_call_id: str, params: Ask, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Ask, then ask again without returning the pause (a contract error)."""
        await ask_user_question(params.text, tool_call_id=tool_call_id, ctx=ctx)
        return await ask_user_question(params.text + " (again)", tool_call_id=tool_call_id, ctx=ctx)

    @api.tool
    async def hold(tool_call_id: str, params: Ask, ctx: ToolContext, on_update: OnUpdate) -> object:
        """Wait (bounded) until the test's listener on the port named sends a byte."""
        with anyio.fail_after(HOLD_LIMIT):
            async with await anyio.connect_tcp("127.0.0.1", int(params.text)) as gate:
                await gate.receive()
        return "held"

    @api.tool(requires_approval=True)
    async def ship(tool_call_id: str, params: Ship, ctx: ToolContext, on_update: OnUpdate) -> str:
        """Ship the build somewhere (a person approves it first)."""
        how = f"{params.mode}, notify={str(params.notify).lower()}"
        return f"Shipped to {params.target} x{params.replicas} ({how})"

    @api.tool(requires_approval=True)
    async def batch(tool_call_id: str, params: Batch, ctx: ToolContext, on_update: OnUpdate) -> str:
        """Ship to several targets (a person approves it first)."""
        return "Batched " + ", ".join(params.targets)

    api.register_agent("web", "Ask what the prompt lists, then report the answers.")
    api.set_demo_model(ScriptedModel([_ask, _report], label="web-test"))


def _ask(request: ModelRequest) -> AssistantMessage:
    prompt = next(text_of(m.content) for m in request.messages if isinstance(m, UserMessage))
    calls = []
    for line in prompt.splitlines():
        tool, _, text = line.partition(":")
        name, _, given = tool.strip().partition("@")  # ``tool@ID: text`` names the call's id
        if name in TOOLS and text.strip():
            call_id = given or f"c{len(calls) + 1}"
            calls.append(ToolCall(id=call_id, name=name, arguments=_arguments(name, text.strip())))
    return AssistantMessage(text="Let me ask.", tool_calls=calls)


def _arguments(tool: str, text: str) -> dict[str, object]:
    if tool == "ship":
        return {"target": text, "replicas": 2, "mode": "safe", "notify": False}
    if tool == "batch":
        return {"targets": [t.strip() for t in text.split(",")]}
    return {"text": text}


def _report(request: ModelRequest) -> AssistantMessage:
    results = [text_of(m.content) for m in request.messages if isinstance(m, ToolResultMessage)]
    return AssistantMessage(text="Done: " + " | ".join(results))
