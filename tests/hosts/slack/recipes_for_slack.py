"""Recipes whose one tool asks one question, with scripted demo models, for the Slack tests.

Each agent's model calls ``ask`` once, then says what the tool returned.
"""

from __future__ import annotations

from typing import Any, Literal

import anyio
from pydantic import BaseModel, Field

from interactions import ask_user_approval, ask_user_question
from recipes import OnUpdate, RecipeAPI, ToolContext
from recipes.messages import AssistantMessage, ToolCall, ToolResultMessage, text_of
from recipes.models import ModelRequest, ScriptedModel

TOPPINGS = ["Cheese", "Ham", "Olives", "Basil"]
FLAVOURS = ["Vanilla", "Chocolate", "Strawberry", "Pistachio", "Mango", "Lemon", "Coffee"]
LONG_PICKS = [f"Choice {i:02d} " + "x" * 280 for i in range(15)]  # all: past 3,000 characters
HOSTILE = "Ping <!channel> and <@U0ADMIN> & <https://evil.example|click>?"


class Nothing(BaseModel):
    pass


def _reply(request: ModelRequest) -> AssistantMessage:
    results = [m for m in request.messages if isinstance(m, ToolResultMessage)]
    return AssistantMessage(text=f"The tool said: {text_of(results[-1].content)}")


def _asking(api: RecipeAPI, name: str, question: str, **ask: Any) -> None:
    @api.tool(execution_mode="sequential")
    async def ask_it(
        tool_call_id: str, params: Nothing, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Ask the user the question."""
        return await ask_user_question(question, tool_call_id=tool_call_id, ctx=ctx, **ask)

    api.register_agent(name, "Ask, then report.")
    api.set_demo_model(
        ScriptedModel(
            [
                AssistantMessage(
                    text="Asking.", tool_calls=[ToolCall(id="c1", name="ask_it", arguments={})]
                ),
                _reply,
            ],
            label=name,
        )
    )


def toppings(api: RecipeAPI) -> None:
    _asking(api, "toppings", "Which toppings?", options=TOPPINGS, selection="multiple")


def flavours(api: RecipeAPI) -> None:
    _asking(api, "flavours", "Which flavour?", options=FLAVOURS, allow_other=False)


APPROVERS = ["ada", "group:release"]


def gated(api: RecipeAPI) -> None:
    _asking(api, "gated", "Ship it?", options=["Ship", "Hold"], approvers=APPROVERS)


def reminding(api: RecipeAPI) -> None:
    """A question for ada, reminded every hour and escalated to the group ops after four."""
    _asking(api, "reminding", "Ship it?", options=["Ship", "Hold"], approvers=["ada"],
            remind_after=3600, escalate_after=4 * 3600, escalate_to=["group:ops"])  # fmt: skip


def quorum(api: RecipeAPI) -> None:
    """An approval two of ada and the group release must give."""

    @api.tool(execution_mode="sequential")
    async def ask_it(
        tool_call_id: str, params: Nothing, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Ask two people to approve."""
        return await ask_user_approval(
            title="Ship it?", approvers=APPROVERS, required_approvals=2,
            tool_call_id=tool_call_id, ctx=ctx,
        )  # fmt: skip

    api.register_agent("quorum", "Ask, then report.")
    calls = [ToolCall(id="c1", name="ask_it", arguments={})]
    api.set_demo_model(
        ScriptedModel([AssistantMessage(text="Asking.", tool_calls=calls), _reply], label="quorum")
    )


def long_picks(api: RecipeAPI) -> None:
    _asking(api, "long_picks", "Which ones?", options=LONG_PICKS, selection="multiple")


def free_text(api: RecipeAPI) -> None:
    _asking(api, "free_text", "What should the release be called?")


def hostile(api: RecipeAPI) -> None:
    _asking(api, "hostile", HOSTILE + " " + "x" * 5000, options=["<!here>", "B" * 200])


DESCRIBED = [
    {"label": "<!channel> now", "description": "pings <!here> & <@U0ADMIN>"},
    {"label": "Quietly", "description": "a & b < c > d"},
]


def described(api: RecipeAPI) -> None:
    """Options whose labels and descriptions hold what Slack would parse."""
    _asking(api, "described", "How loud?", options=DESCRIBED)


def async_asker(api: RecipeAPI) -> None:
    """Posts an async question (its card says the run keeps working), then waits for it with
    the await tool, then says what that returned."""
    api.register_agent("asker", "Ask, keep working, then wait.", async_questions=True)
    api.set_demo_model(
        ScriptedModel(
            [
                AssistantMessage(tool_calls=[ToolCall(
                    id="q1", name="ask_user_async",
                    arguments={"question": "Which name?", "options": ["Bolt", "Comet"]},
                )]),
                AssistantMessage(tool_calls=[ToolCall(id="w1", name="await_answers")]),
                _reply,
            ],
            label="asker",
        )
    )  # fmt: skip


def two_async(api: RecipeAPI) -> None:
    """Posts two async questions in one turn (two open cards on one run), then waits for both."""
    api.register_agent("pair", "Ask two things, then wait.", async_questions=True)
    api.set_demo_model(
        ScriptedModel(
            [
                AssistantMessage(tool_calls=[
                    ToolCall(id="q1", name="ask_user_async",
                             arguments={"question": "Which name?", "options": ["Bolt", "Comet"]}),
                    ToolCall(id="q2", name="ask_user_async",
                             arguments={"question": "Which day?", "options": ["Mon", "Tue"]}),
                ]),
                AssistantMessage(tool_calls=[ToolCall(id="w1", name="await_answers")]),
                _reply,
            ],
            label="pair",
        )
    )  # fmt: skip


def async_unawaited(api: RecipeAPI) -> None:
    """Posts an async question, then asks a blocking one (the run pauses on it, the async
    question's card open), then, once that is answered, finishes without waiting for the async
    question: the run's end closes it."""

    @api.tool(execution_mode="sequential")
    async def ask_it(
        tool_call_id: str, params: Nothing, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Ask the user the question."""
        return await ask_user_question("Ready to finish?", tool_call_id=tool_call_id, ctx=ctx,
                                       options=["Yes", "No"])  # fmt: skip

    api.register_agent("hasty", "Ask, then finish.", async_questions=True)
    api.set_demo_model(
        ScriptedModel(
            [
                AssistantMessage(tool_calls=[ToolCall(
                    id="q1", name="ask_user_async",
                    arguments={"question": "Which name?", "options": ["Bolt", "Comet"]},
                )]),
                AssistantMessage(tool_calls=[ToolCall(id="c1", name="ask_it", arguments={})]),
                _reply,
            ],
            label="hasty",
        )
    )  # fmt: skip


def slow(api: RecipeAPI) -> None:
    """A tool that works for a minute (a leg still running when the host stops)."""

    @api.tool(execution_mode="sequential")
    async def work(
        tool_call_id: str, params: Nothing, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Work for a while."""
        await anyio.sleep(60)
        return "worked"

    api.register_agent("slow", "Work, then report.")
    api.set_demo_model(
        ScriptedModel(
            [
                AssistantMessage(
                    text="Working.", tool_calls=[ToolCall(id="c1", name="work", arguments={})]
                ),
                _reply,
            ],
            label="slow",
        )
    )


SHIP_ARGS = {"target": "staging", "replicas": 2, "mode": "safe", "notify": False}


class Ship(BaseModel):
    target: str = Field(description="where to ship")
    replicas: int = Field(default=1, ge=1, le=10)
    mode: Literal["fast", "safe"] = "safe"
    notify: bool = False


class Batch(BaseModel):
    targets: list[str]


def _gated(api: RecipeAPI, name: str, call: ToolCall, twice: bool = False) -> None:
    """The model calls ``call`` (a tool declaring its approval), then ``twice`` once more (a
    second call, for a decision that sticks), then says what the tool returned."""
    steps: list[Any] = [AssistantMessage(text="Calling.", tool_calls=[call])]
    if twice:
        again = call.model_copy(update={"id": call.id + "b"})
        steps.append(AssistantMessage(text="Again.", tool_calls=[again]))
    api.register_agent(name, "Call the tool, then report.")
    api.set_demo_model(ScriptedModel([*steps, _reply], label=name))


def _ship_tool(api: RecipeAPI) -> None:
    @api.tool(requires_approval=True)
    async def ship(tool_call_id: str, params: Ship, ctx: ToolContext, on_update: OnUpdate) -> str:
        """Ship the build."""
        return f"Shipped to {params.target} x{params.replicas} ({params.mode}, {params.notify})"


def shipper(api: RecipeAPI) -> None:
    """``ship`` asks its approval first; its arguments are flat (fields in the modal)."""
    _ship_tool(api)
    _gated(api, "shipper", ToolCall(id="c1", name="ship", arguments=SHIP_ARGS))


def shipper_twice(api: RecipeAPI) -> None:
    """As :func:`shipper`, and the model calls ``ship`` a second time once the first is done."""
    _ship_tool(api)
    _gated(api, "shipper", ToolCall(id="c1", name="ship", arguments=SHIP_ARGS), twice=True)


def batcher(api: RecipeAPI) -> None:
    """``batch`` asks its approval first; its arguments are not flat (a JSON text)."""

    @api.tool(requires_approval=True)
    async def batch(tool_call_id: str, params: Batch, ctx: ToolContext, on_update: OnUpdate) -> str:
        """Ship to several targets."""
        return "Batched " + ", ".join(params.targets)

    call = ToolCall(id="c1", name="batch", arguments={"targets": ["eu", "us"]})
    _gated(api, "batcher", call)
