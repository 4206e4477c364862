"""Recipes the runner tests load by reference (``tests/recipes/runs/recipes_for_tests.py:...``).

Each asks through the real interactions helpers; the scripted models read the transcript, so a
run resumed in another process continues at the right turn.
"""

from __future__ import annotations

import anyio
from pydantic import BaseModel

from interactions import ask_user_approval, ask_user_question
from recipes import OnUpdate, RecipeAPI, ToolContext, ToolResult
from recipes.messages import (
    AssistantMessage,
    TextPart,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    text_of,
)
from recipes.models import ModelRequest, ScriptedModel

TOPPINGS = ["cheese", "ham", "olives"]


class Topic(BaseModel):
    topic: str


def _results(request: ModelRequest) -> list[str]:
    return [text_of(m.content) for m in request.messages if isinstance(m, ToolResultMessage)]


def _summary(request: ModelRequest) -> AssistantMessage:
    return AssistantMessage(text="Done: " + " | ".join(_results(request)))


def _call(id: str, name: str, **arguments: str) -> ToolCall:
    return ToolCall(id=id, name=name, arguments=arguments)


def parallel(api: RecipeAPI) -> None:
    """Three parallel tools in one batch: two ask, one just works."""

    @api.tool
    async def ask_colour(
        tool_call_id: str, params: Topic, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Ask for a colour."""
        return await ask_user_question(
            f"Colour for {params.topic}?", tool_call_id=tool_call_id, ctx=ctx
        )

    @api.tool
    async def ask_toppings(
        tool_call_id: str, params: Topic, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Ask for toppings."""
        return await ask_user_question(
            "Toppings?",
            options=TOPPINGS,
            selection="multiple",
            allow_other=False,
            tool_call_id=tool_call_id,
            ctx=ctx,
        )

    @api.tool
    async def count(tool_call_id: str, params: Topic, ctx: ToolContext, on_update: OnUpdate) -> str:
        """Count letters."""
        return f"{len(params.topic)} letters"

    api.register_agent("parallel", "Ask both.")
    api.set_demo_model(
        ScriptedModel(
            [
                AssistantMessage(
                    text="Asking.",
                    tool_calls=[
                        _call("c1", "ask_colour", topic="pizza"),
                        _call("c2", "count", topic="pizza"),
                        _call("c3", "ask_toppings", topic="pizza"),
                    ],
                ),
                _summary,
            ],
            label="parallel",
        )
    )


def approval_then_question(api: RecipeAPI) -> None:
    """Sequential: an approval, then (after the resume) a question: pauses twice."""

    @api.tool(execution_mode="sequential")
    async def approve(
        tool_call_id: str, params: Topic, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Ask for approval."""
        return await ask_user_approval(
            title=f"Deploy {params.topic}?", tool_call_id=tool_call_id, ctx=ctx
        )

    @api.tool(execution_mode="sequential")
    async def name(
        tool_call_id: str, params: Topic, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Ask for a name."""
        return await ask_user_question("Name the release?", tool_call_id=tool_call_id, ctx=ctx)

    api.register_agent("deployer", "Approve, then name.")
    api.set_demo_model(
        ScriptedModel(
            [
                AssistantMessage(
                    text="Checking.", tool_calls=[_call("a1", "approve", topic="api")]
                ),
                AssistantMessage(tool_calls=[_call("n1", "name", topic="api")]),
                _summary,
            ],
            label="two-pauses",
        )
    )


def broad_except(api: RecipeAPI) -> None:
    """A tool wrapping its ask in ``except Exception``: the pause is data, so it still pauses."""

    @api.tool
    async def careful(
        tool_call_id: str, params: Topic, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Ask, defensively."""
        try:
            return await ask_user_question("Proceed?", tool_call_id=tool_call_id, ctx=ctx)
        except Exception as exc:  # the kind of code recipe authors write
            return f"could not ask: {exc}"

    api.register_agent("careful", "Ask.")
    api.set_demo_model(
        ScriptedModel(
            [AssistantMessage(tool_calls=[_call("k1", "careful", topic="x")]), _summary],
            label="careful",
        )
    )


MASCOTS = [
    {"label": "Otter", "value": "otter"},
    {"label": "Badger", "value": "badger", "description": "the underdog"},
]


def questions(api: RecipeAPI) -> None:
    """A fixed choice with labels, values and a description; then a replayed act on it."""

    @api.tool(execution_mode="sequential")
    async def mascot(
        tool_call_id: str, params: Topic, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Ask for the release's mascot."""
        return await ask_user_question(
            "Which mascot?", options=MASCOTS, allow_other=False, tool_call_id=tool_call_id, ctx=ctx
        )

    api.register_agent("namer", "Ask for a mascot.")
    api.set_demo_model(
        ScriptedModel(
            [AssistantMessage(tool_calls=[_call("m1", "mascot", topic="x")]), _summary],
            label="questions",
        )
    )


def act_after_approval(api: RecipeAPI) -> None:
    """A replay tool: asks, then acts (writes a marker file) once approved."""

    @api.tool(execution_mode="sequential", resume="replay")
    async def clean(
        tool_call_id: str, params: Topic, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Delete a file once approved."""
        approval = await ask_user_approval(
            title=f"Delete {params.topic}?", tool_call_id=tool_call_id, ctx=ctx
        )
        if approval.outcome.type != "approved":
            return approval
        (ctx.cwd / params.topic).unlink()
        return f"Deleted {params.topic}."

    api.register_agent("cleaner", "Clean up.")
    api.set_demo_model(
        ScriptedModel(
            [AssistantMessage(tool_calls=[_call("x1", "clean", topic="junk.txt")]), _summary],
            label="cleaner",
        )
    )


def slow_deploy(api: RecipeAPI) -> None:
    """A tool that takes its time: it marks ``started`` in the working folder, works for up to
    30 s, then marks ``deployed`` (what a stopped tool must never get to)."""

    @api.tool
    async def deploy(
        tool_call_id: str, params: Topic, ctx: ToolContext, on_update: OnUpdate
    ) -> str:
        """Deploy, slowly."""
        await anyio.Path(ctx.cwd / "started").write_text(params.topic)
        await anyio.sleep(30)
        await anyio.Path(ctx.cwd / "deployed").write_text(params.topic)
        return f"Deployed {params.topic}."

    api.register_agent("deployer", "Deploy.")
    api.set_demo_model(
        ScriptedModel(
            [AssistantMessage(tool_calls=[_call("d1", "deploy", topic="v2")]), _summary],
            label="deployer",
        )
    )


def _said(request: ModelRequest) -> AssistantMessage:
    """Everything the agent was told after its prompt: tool results and messages, in order."""
    told = [
        text_of(m.content)
        for m in request.messages[1:]
        if isinstance(m, ToolResultMessage | UserMessage)
    ]
    return AssistantMessage(text="Done: " + " | ".join(told))


def async_author(api: RecipeAPI) -> None:
    """An agent opted into async questions: it posts one, then waits for it (the tool)."""
    api.register_agent("author", "Write the README.", async_questions=True)
    api.set_demo_model(
        ScriptedModel(
            [
                AssistantMessage(tool_calls=[
                    _call("a1", "ask_user_async", question="Project name?"),
                    _call("a2", "ask_user_async", question="Licence?"),
                ]),
                AssistantMessage(tool_calls=[_call("w1", "await_answers")]),
                _said,
            ],
            label="author",
        )
    )


def async_listener(api: RecipeAPI) -> None:
    """Posts an async question and asks a blocking one in the same batch (the run pauses on
    the blocking one); then says what it was told."""

    @api.tool
    async def ask_colour(
        tool_call_id: str, params: Topic, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Ask for a colour."""
        return await ask_user_question(
            f"Colour for {params.topic}?", tool_call_id=tool_call_id, ctx=ctx
        )

    api.register_agent("listener", "Listen.", async_questions=True)
    api.set_demo_model(
        ScriptedModel(
            [
                AssistantMessage(tool_calls=[
                    _call("a1", "ask_user_async", question="Project name?"),
                    _call("c1", "ask_colour", topic="logo"),
                ]),
                _said,
            ],
            label="listener",
        )
    )


def cut_short(api: RecipeAPI) -> None:
    """An approval, then an answer the model's output limit cut (``stop_reason`` max_tokens)."""

    @api.tool
    async def approve(
        tool_call_id: str, params: Topic, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Ask for approval."""
        return await ask_user_approval(
            title=f"Write {params.topic}?", tool_call_id=tool_call_id, ctx=ctx
        )

    api.register_agent("writer", "Write it.")
    api.set_demo_model(
        ScriptedModel(
            [
                AssistantMessage(tool_calls=[_call("w1", "approve", topic="the report")]),
                AssistantMessage(
                    text="The report, part one of three: sales", stop_reason="max_tokens"
                ),
            ],
            label="cut-short",
        )
    )


def unstorable(api: RecipeAPI) -> None:
    """A tool whose result no store keeps (text decoded with ``surrogateescape`` from bytes
    that are not UTF-8) until ``FIXED`` is set in the run's environment."""

    @api.tool
    async def read_menu(
        tool_call_id: str, params: Topic, ctx: ToolContext, on_update: OnUpdate
    ) -> str:
        """Read the menu file."""
        raw = b"caf\xe9 menu"
        if ctx.env.get("FIXED"):
            return raw.decode("latin-1")
        return raw.decode("utf-8", "surrogateescape")

    api.register_agent("reader", "Read the menu.")
    api.set_demo_model(
        ScriptedModel(
            [
                AssistantMessage(tool_calls=[_call("m1", "read_menu", topic="menu")]),
                _summary,
            ],
            label="unstorable",
        )
    )


def _step(n: int) -> AssistantMessage:
    return AssistantMessage(tool_calls=[_call(f"s{n}", "step", topic=f"step {n}")])


def looping(api: RecipeAPI) -> None:
    """A model that calls a tool five times before it answers (for ``max_turns``)."""

    @api.tool
    async def step(tool_call_id: str, params: Topic, ctx: ToolContext, on_update: OnUpdate) -> str:
        """Take one step."""
        return f"took {params.topic}"

    api.register_agent("walker", "Walk.")
    api.set_demo_model(
        ScriptedModel(
            [
                *(_step(n) for n in range(1, 6)),
                AssistantMessage(text="Arrived after five steps."),
            ],
            label="looping",
        )
    )


def env_printer(api: RecipeAPI) -> None:
    """A tool that prints its environment (as is, and JSON-escaped), in its result, its
    details and a progress update: credentials among them."""

    @api.tool
    async def show_env(
        tool_call_id: str, params: None, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Show the environment."""
        shown = "\n".join(f"{name}={value}" for name, value in sorted(ctx.env.items()))
        on_update(shown)
        escaped = "".join(f"\\u{ord(c):04x}" for c in ctx.env.get("OPENAI_API_KEY", ""))
        return ToolResult(
            content=[TextPart(text=f"{shown}\nescaped: {escaped}")],
            details={"env": dict(ctx.env), "sk-like": "sk-not-a-secret-just-an-example"},
        )

    api.register_agent("printer", "Show the environment.")
    api.set_demo_model(
        ScriptedModel(
            [AssistantMessage(tool_calls=[_call("e1", "show_env")]), _summary], label="printer"
        )
    )
