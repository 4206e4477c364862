"""The async questions' tools: ``ask_user_async`` and ``await_answers``, bound to a run.

An agent that has them (a graph node declared ``interaction: async``, or an agent registered
with ``async_questions=True`` in a durable run) posts questions and keeps working; answers
reach it as messages at its turn boundaries (the session's ``inbox``); ``await_answers`` is the
sync point. The tools decide nothing themselves: what they do is the :class:`AsyncQuestions`
binder's, which the driver of the run provides (it owns the store and the run's writes).

- ``ask_user_async(question, options?, allow_free_text?)`` posts the question (an interaction
  of kind ``async``) and returns at once: "Question posted as <id>; keep working…".
- ``await_answers()`` returns ``All posted questions are answered:`` and the answers when none
  is pending; otherwise the run pauses on an interaction of kind ``await``, and the call, run
  again once the last answer came (``resume="replay"``), returns that text.

Errors: a binder refuses by raising (the model reads an error result: the tool inside a
fan-out branch, an empty question).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from interactions import AskUserInterrupt
from interactions.asks import interrupt_id_for
from interactions.async_questions import ASYNC_PROMPT_SECTION
from recipes._context import ToolContext
from recipes._recipe import Recipe
from recipes._tools import OnUpdate, Tool, ToolResult
from recipes.messages import UserMessage

__all__ = [
    "ASK_TOOL",
    "AWAIT_TOOL",
    "AskUserAsync",
    "AsyncQuestions",
    "AwaitAnswers",
    "async_question_tools",
    "with_async_questions",
]

ASK_TOOL = "ask_user_async"
AWAIT_TOOL = "await_answers"


class AskUserAsync(BaseModel):
    """The arguments of ``ask_user_async``."""

    model_config = ConfigDict(extra="forbid")
    question: str = Field(min_length=1, description="The question for the operator.")
    options: list[str] | None = Field(
        default=None, description="Answers to choose from (optional)."
    )
    allow_free_text: bool | None = Field(
        default=None,
        description="Whether a typed answer outside the options is accepted (default: only "
        "when there are no options).",
    )


class AwaitAnswers(BaseModel):
    """The arguments of ``await_answers``."""

    model_config = ConfigDict(extra="forbid")
    note: str | None = Field(default=None, description="Why you are blocked (optional).")


@runtime_checkable
class AsyncQuestions(Protocol):
    """What the tools of one agent's async questions are bound to (the run's driver)."""

    async def post(
        self,
        question: str,
        *,
        options: Sequence[str] | None,
        allow_free_text: bool | None,
        tool_call_id: str,
    ) -> str:
        """Store the question (kind ``async``); return its interaction id. Raises to refuse."""
        ...

    async def await_answers(self, tool_call_id: str, interrupt_id: str) -> str | AskUserInterrupt:
        """The collected answers' text when nothing is pending; else the ``await`` interrupt
        the run pauses on (``interrupt_id``). Raises to refuse (inside a fan-out branch)."""
        ...

    async def inbox(self) -> Sequence[UserMessage]:
        """The answers not yet delivered to this agent, as messages (each delivered once)."""
        ...


def async_question_tools(binder: AsyncQuestions) -> list[Tool]:
    """``ask_user_async`` and ``await_answers``, bound to ``binder``."""

    async def ask(tool_call_id: str, params: Any, ctx: ToolContext, on_update: OnUpdate) -> str:
        from interactions.async_questions import posted_text

        iid = await binder.post(
            params.question,
            options=params.options,
            allow_free_text=params.allow_free_text,
            tool_call_id=tool_call_id,
        )
        return posted_text(iid)

    async def await_(
        tool_call_id: str, params: Any, ctx: ToolContext, on_update: OnUpdate
    ) -> str | ToolResult:
        ledger = ctx.asks
        iid = ledger.next_ask()[0] if ledger is not None else interrupt_id_for(tool_call_id)
        got = await binder.await_answers(tool_call_id, iid)
        if isinstance(got, str):
            return got
        return ToolResult.awaiting(got, text=f"{got.message}. The run pauses until then.")

    return [
        Tool(
            name=ASK_TOOL,
            label="Ask the operator (async)",
            description=(
                "Post a question to the operator and keep working: it returns at once; the "
                "answer arrives later as a message. Post your questions early."
            ),
            parameters=AskUserAsync,
            execute=ask,
            execution_mode="sequential",  # ids numbered in the order the model asked
        ),
        Tool(
            name=AWAIT_TOOL,
            label="Wait for the answers",
            description=(
                "Wait until every posted question is answered and return the answers. Call it "
                "only when you cannot go on without them."
            ),
            parameters=AwaitAnswers,
            execute=await_,
            resume="replay",
        ),
    ]


def with_async_questions(recipe: Recipe, agent: str, binder: AsyncQuestions) -> Recipe:
    """``recipe`` whose agent ``agent`` also has the async questions' tools (bound to
    ``binder``; they replace tools of the same names) and the ``[ASYNC QUESTIONS]`` section
    at the end of its instructions."""
    chosen = recipe.agent(agent)
    tools = {t.name: t for t in recipe.tools_for(chosen)}
    for tool in async_question_tools(binder):
        tools[tool.name] = tool
    instructions = "\n\n".join(p for p in (chosen.instructions, ASYNC_PROMPT_SECTION) if p)
    own = dataclasses.replace(chosen, instructions=instructions, tools=tuple(tools))
    everything = {**recipe.tools, **tools}
    return dataclasses.replace(
        recipe, tools=everything, agents={**recipe.agents, agent: own}
    )
