"""Recipes the Temporal engine's tests serve from workers (in this process or another).

``slow`` keeps a log (the file ``PI_TEMPORAL_TEST_LOG`` names in the worker's environment) of
every model call and every start and end of its tool's body, so a test can count executions
across workers; its tool hangs on a worker whose environment sets ``PI_TEMPORAL_TEST_HANG``
(until that worker is killed) and returns at once elsewhere.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable

import anyio
from pydantic import BaseModel

from interactions import ask_user_question
from recipes import OnUpdate, RecipeAPI, ToolContext
from recipes.messages import AssistantMessage, ToolCall, ToolResultMessage, text_of
from recipes.models import Completed, ModelEvent, ModelRequest, ScriptedModel
from recipes.models.scripted import ScriptTurn

LOG_ENV = "PI_TEMPORAL_TEST_LOG"
HANG_ENV = "PI_TEMPORAL_TEST_HANG"


class Target(BaseModel):
    target: str


def note(line: str, log: str | None = None) -> None:
    """Append ``line`` (and this process's id) to the test log."""
    path = log or os.environ.get(LOG_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(f"{line} {os.getpid()}\n")


def _deploy(request: ModelRequest) -> AssistantMessage:
    note("model-1")
    return AssistantMessage(
        text="Deploying.",
        tool_calls=[ToolCall(id="call_deploy", name="deploy", arguments={"target": "prod"})],
    )


def _done(request: ModelRequest) -> AssistantMessage:
    note("model-2")
    results = [text_of(m.content) for m in request.messages if isinstance(m, ToolResultMessage)]
    return AssistantMessage(text="Done: " + " | ".join(results))


def slow(api: RecipeAPI) -> None:
    """One tool that takes as long as the test wants, between two model calls."""

    @api.tool(execution_mode="sequential")
    async def deploy(
        tool_call_id: str, params: Target, ctx: ToolContext, on_update: OnUpdate
    ) -> str:
        """Deploy a target."""
        log = ctx.env[LOG_ENV]
        note("tool-start", log)
        if ctx.env.get(HANG_ENV):
            await anyio.sleep(120)  # the test kills this worker long before
        note("tool-end", log)
        return f"Deployed {params.target}."

    api.register_agent("deployer", "Deploy what is asked.")
    api.set_demo_model(ScriptedModel([_deploy, _done], label="slow"))


def _ask_then_fail(request: ModelRequest) -> AssistantMessage:
    return AssistantMessage(
        text="Trying.",
        tool_calls=[
            ToolCall(id="call_boom", name="boom", arguments={"target": "x"}),
            ToolCall(id="call_ask", name="ask", arguments={"target": "colour"}),
        ],
    )


def failing(api: RecipeAPI) -> None:
    """A tool that raises beside a tool that asks: the error is a result the model reads."""

    @api.tool(execution_mode="sequential")
    async def boom(tool_call_id: str, params: Target, ctx: ToolContext, on_update: OnUpdate) -> str:
        """Fail."""
        raise RuntimeError(f"{params.target} is on fire")

    @api.tool(execution_mode="sequential")
    async def ask(
        tool_call_id: str, params: Target, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Ask for something."""
        return await ask_user_question(
            f"Which {params.target}?", tool_call_id=tool_call_id, ctx=ctx
        )

    api.register_agent("failing", "Try.")
    api.set_demo_model(ScriptedModel([_ask_then_fail, _done], label="failing"))


def openai(api: RecipeAPI) -> None:
    """An agent on an OpenAI-compatible model (the test's fake server), with one asking tool."""

    @api.tool(execution_mode="sequential")
    async def ask(
        tool_call_id: str, params: Target, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Ask for something."""
        return await ask_user_question(
            f"Which {params.target}?", tool_call_id=tool_call_id, ctx=ctx
        )

    api.register_agent("remote", "Answer.", model="openai:gpt-test")


def _read(n: int) -> Callable[[ModelRequest], AssistantMessage]:
    def step(request: ModelRequest) -> AssistantMessage:
        return AssistantMessage(
            text=f"Reading part {n}.",
            tool_calls=[ToolCall(id=f"call_read_{n}", name="read", arguments={"target": str(n)})],
        )

    return step


def _read_done(request: ModelRequest) -> AssistantMessage:
    results = [text_of(m.content) for m in request.messages if isinstance(m, ToolResultMessage)]
    return AssistantMessage(text="Read: " + " | ".join(r[:120] for r in results))


def _reader(api: RecipeAPI, chars: int, reads: int) -> None:
    @api.tool(execution_mode="sequential")
    async def read(tool_call_id: str, params: Target, ctx: ToolContext, on_update: OnUpdate) -> str:
        """Read a part of a big file (each body is noted in the test log)."""
        note(f"read-{params.target}", ctx.env.get(LOG_ENV))
        return "x" * chars

    api.register_agent("reader", "Read.")
    api.set_demo_model(
        ScriptedModel([*(_read(n) for n in range(1, reads + 1)), _read_done], label="reader")
    )


def huge_result(api: RecipeAPI) -> None:
    """One tool result over Temporal's payload limit (3 MB)."""
    _reader(api, 3_000_000, reads=1)


def growing_transcript(api: RecipeAPI) -> None:
    """Tool results each under the limit whose transcript grows past it (4 x 700 kB)."""
    _reader(api, 700_000, reads=4)


def two_reads(api: RecipeAPI) -> None:
    """Two tool results of 700 kB, then the answer: a history of some megabytes."""
    _reader(api, 700_000, reads=2)


def _waited(request: ModelRequest) -> AssistantMessage:
    results = [text_of(m.content) for m in request.messages if isinstance(m, ToolResultMessage)]
    return AssistantMessage(text="Waited: " + results[-1])


def _author_asking(api: RecipeAPI, then: AssistantMessage, last: ScriptTurn) -> None:
    """The agent ``author``, opted into async questions: it posts one ("Name?"), then calls
    the tool ``then`` names, then answers ``last`` (a text, or a reply made from the request)."""
    api.register_agent("author", "Write the README.", async_questions=True)
    ask = ToolCall(id="a1", name="ask_user_async", arguments={"question": "Name?"})
    api.set_demo_model(
        ScriptedModel([AssistantMessage(tool_calls=[ask]), then, last], label="author")
    )


def async_author(api: RecipeAPI) -> None:
    """An agent opted into async questions: it posts one, then waits for it (the tool)."""
    waits = AssistantMessage(tool_calls=[ToolCall(id="w1", name="await_answers")])
    _author_asking(api, waits, _waited)


RELEASE_ENV = "PI_TEMPORAL_TEST_RELEASE"


def async_then_work(api: RecipeAPI) -> None:
    """An agent that posts an async question, then works on (its tool returns once the file
    ``PI_TEMPORAL_TEST_RELEASE`` names exists, within 30 s) and finishes without the answer."""

    @api.tool(execution_mode="sequential")
    async def work(tool_call_id: str, params: None, ctx: ToolContext, on_update: OnUpdate) -> str:
        """Work until released."""
        released = anyio.Path(ctx.env[RELEASE_ENV])
        for _ in range(600):
            if await released.exists():
                return "worked"
            await anyio.sleep(0.05)
        raise TimeoutError("not released within 30 s")

    _author_asking(api, AssistantMessage(tool_calls=[ToolCall(id="w1", name="work")]), "Done.")


TICKS = 10
"""Seconds ``ticking``'s tool works when nothing stops it."""


def ticking(api: RecipeAPI) -> None:
    """A tool that works for :data:`TICKS` seconds, noting each one (``tick``), and notes how it
    ended: ``tool-end``, or ``tool-aborted`` (its ``ctx.abort`` fired) then ``tool-cancelled``
    (a cancellation reached its body)."""

    @api.tool(execution_mode="sequential")
    async def deploy(
        tool_call_id: str, params: Target, ctx: ToolContext, on_update: OnUpdate
    ) -> str:
        """Deploy a target, slowly."""
        log = ctx.env[LOG_ENV]
        note("tool-start", log)
        try:
            for _ in range(TICKS):
                await anyio.sleep(1)
                note("tick", log)
        except BaseException:
            if ctx.aborted:
                note("tool-aborted", log)
            note("tool-cancelled", log)
            raise
        note("tool-end", log)
        return f"Deployed {params.target}."

    api.register_agent("deployer", "Deploy what is asked.")
    api.set_demo_model(ScriptedModel([_deploy, _done], label="ticking"))


class _Pondering:
    """A model that thinks for :data:`TICKS` seconds before it answers, noting each one
    (``model-tick``, in the log ``PI_TEMPORAL_TEST_LOG`` names in this process's environment)
    and how it ended (``model-end`` or ``model-cancelled``)."""

    name = "test:pondering"

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        note("model-start")
        try:
            for _ in range(TICKS):
                await anyio.sleep(1)
                note("model-tick")
        except BaseException:
            note("model-cancelled")
            raise
        note("model-end")
        yield Completed(message=AssistantMessage(text="Thought it through."))


def pondering(api: RecipeAPI) -> None:
    """An agent whose model takes :data:`TICKS` seconds to answer."""
    api.register_agent("ponderer", "Think.")
    api.set_demo_model(_Pondering())


def short_script(api: RecipeAPI) -> None:
    """A scripted model with one turn for a run that needs two: the second call raises
    ``ScriptExhausted`` (a ``RunError``, reason ``script_exhausted``)."""

    @api.tool(execution_mode="sequential")
    async def deploy(
        tool_call_id: str, params: Target, ctx: ToolContext, on_update: OnUpdate
    ) -> str:
        """Deploy a target."""
        return f"Deployed {params.target}."

    api.register_agent("deployer", "Deploy what is asked.")
    api.set_demo_model(ScriptedModel([_deploy], label="short"))


class _Broken:
    """A custom model with a bug: every call raises a plain exception."""

    name = "test:broken"

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        note("model-call")
        raise KeyError("choices")
        yield  # pragma: no cover


def broken_model(api: RecipeAPI) -> None:
    """An agent whose model raises ``KeyError('choices')`` (a provider's bug) on every call."""
    api.register_agent("broken", "Answer.")
    api.set_demo_model(_Broken())


LEAK_ENV = "PI_TEMPORAL_TEST_TOKEN"
"""A credential-looking variable of the worker's environment (``*_TOKEN``) the leaky recipes
quote in their exceptions."""


class _LeakyTool(BaseModel):
    pass


def _fetch_then_done(request: ModelRequest) -> AssistantMessage:
    if any(isinstance(m, ToolResultMessage) for m in request.messages):
        return AssistantMessage(text="Could not fetch it.")
    return AssistantMessage(tool_calls=[ToolCall(id="f1", name="fetch")])


def leaky_tool(api: RecipeAPI) -> None:
    """An agent whose tool fails quoting the worker's token (the model reads the failure)."""

    @api.tool
    async def fetch(
        tool_call_id: str, params: _LeakyTool, ctx: ToolContext, on_update: OnUpdate
    ) -> str:
        """Fetch the report."""
        raise PermissionError(f"GET /report?token={ctx.env[LEAK_ENV]} -> 403")

    api.register_agent("fetcher", "Fetch the report.")
    api.set_demo_model(ScriptedModel([_fetch_then_done] * 2, label="fetcher"))


class _LeakyModel:
    name = "leaky:model"

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        raise RuntimeError(f"the gateway refused {os.environ[LEAK_ENV]}")
        yield  # pragma: no cover


def leaky_model(api: RecipeAPI) -> None:
    """An agent whose model raises quoting the worker's token."""
    api.register_agent("leaky", "Answer.")
    api.set_demo_model(_LeakyModel())


def reminding(api: RecipeAPI) -> None:
    """A question for ada, reminded every second and escalated to the group ops after two."""

    @api.tool(execution_mode="sequential")
    async def ask_ada(
        tool_call_id: str, params: Target, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Ask ada where to ship."""
        return await ask_user_question(
            f"Ship to {params.target}?", options=["Yes", "No"], approvers=["ada"],
            remind_after=1, escalate_after=2, escalate_to=["group:ops"],
            tool_call_id=tool_call_id, ctx=ctx,
        )  # fmt: skip

    api.register_agent("reminding", "Ask, then report.")
    call = ToolCall(id="call_ask", name="ask_ada", arguments={"target": "prod"})
    api.set_demo_model(
        ScriptedModel([AssistantMessage(text="Asking.", tool_calls=[call]), _done], label="remind")
    )
