"""Pausing a run on an awaiting tool result, resuming it, and restoring it in a new session."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from interactions import UsageError
from recipes._api import Recipe, RecipeAPI
from recipes._context import ToolContext
from recipes._events import PausedBatch
from recipes._tools import OnUpdate, ToolResult
from recipes.messages import ToolResultMessage, TranscriptAdapter, text_of
from recipes.models.scripted import ScriptedModel
from recipes.session import create_agent_session
from tests.recipes.helpers import call, calls, session_for

pytestmark = pytest.mark.anyio


class TextContent(BaseModel):
    type: str = "text"
    text: str


class Outcome(BaseModel):
    type: str


class AwaitingResult(BaseModel):
    """Shaped like interactions' AskUserResult when no human can answer inline."""

    content: list[TextContent]
    details: dict[str, Any]
    outcome: Outcome


def recipe_with(log: list[str], ask_mode: str = "sequential") -> Any:
    def recipe(api: RecipeAPI) -> None:
        async def ask(
            tool_call_id: str, params: None, ctx: ToolContext, on_update: OnUpdate
        ) -> Any:
            log.append(f"ask:{tool_call_id}")
            return AwaitingResult(
                content=[TextContent(text="Awaiting user response.")],
                details={"interrupt": {"id": f"int-{tool_call_id}", "message": "Colour?"}},
                outcome=Outcome(type="awaiting_user"),
            )

        async def note(
            tool_call_id: str, params: None, ctx: ToolContext, on_update: OnUpdate
        ) -> str:
            log.append(f"note:{tool_call_id}")
            return f"noted {tool_call_id}"

        api.register_tool("ask", description="Ask.", execute=ask, execution_mode=ask_mode)  # type: ignore[arg-type]
        api.register_tool("note", description="Note.", execute=note)

    return recipe


def result_ids(messages: list[Any]) -> list[str]:
    return [m.tool_call_id for m in messages if isinstance(m, ToolResultMessage)]


async def test_a_pause_keeps_unrun_calls_and_resume_continues() -> None:
    log: list[str] = []
    session, model, rec = session_for(
        recipe_with(log),
        [calls(call("1", "note"), call("2", "ask"), call("3", "note")), "Blue it is."],
    )
    await session.prompt("pick a colour")

    assert session.status == "paused"
    assert log == ["note:1", "ask:2"]
    assert session.awaiting_call_ids == ["2"]
    assert [c.id for c in session.pending_calls] == ["3"]
    assert session.paused is not None
    assert session.paused.awaiting[0].details == {
        "interrupt": {"id": "int-2", "message": "Colour?"}
    }
    assert result_ids(session.messages) == ["1"]  # the placeholder is not in the transcript
    assert len(model.requests) == 1
    end = rec.events[-1]
    assert end.type == "agent_end" and end.status == "paused" and end.paused == session.paused

    await session.resume({"2": "Answer: blue"})

    assert session.status == "idle"
    assert log == ["note:1", "ask:2", "note:3"]  # the paused tool did not run again
    assert result_ids(session.messages) == ["1", "2", "3"]
    assert text_of(session.messages[3].content) == "Answer: blue"
    assert list(model.requests[1].messages) == session.messages[:5]
    assert session.pending_calls == [] and session.awaiting_call_ids == []


async def test_a_pause_in_a_parallel_batch_keeps_the_finished_results() -> None:
    log: list[str] = []
    session, _, _ = session_for(
        recipe_with(log, ask_mode="parallel"),
        [calls(call("1", "ask"), call("2", "note")), "Done."],
    )
    await session.prompt("go")
    assert session.status == "paused"
    assert sorted(log) == ["ask:1", "note:2"]
    assert session.pending_calls == []
    assert result_ids(session.messages) == ["2"]
    await session.resume({"1": ToolResult.of_text("Answer: red", {"outcome": "answered"})})
    assert result_ids(session.messages) == ["2", "1"]
    assert session.status == "idle"


async def test_a_stored_pause_resumes_in_a_new_session() -> None:
    log: list[str] = []
    recipe = Recipe.from_function(recipe_with(log))
    script = [calls(call("1", "ask"), call("2", "note")), "Thanks."]
    first = create_agent_session(recipe, model=ScriptedModel(script))
    await first.prompt("go")
    assert first.paused is not None
    stored = (TranscriptAdapter.dump_json(first.messages), first.paused.model_dump_json())
    del first

    model = ScriptedModel(script)  # a fresh copy of the script, as another process loads it
    second = create_agent_session(
        recipe,
        model=model,
        messages=TranscriptAdapter.validate_json(stored[0]),
        paused=PausedBatch.model_validate_json(stored[1]),
    )
    assert second.status == "paused" and second.awaiting_call_ids == ["1"]
    await second.resume({"1": "Answer: green"})
    assert log == ["ask:1", "note:2"]
    assert result_ids(second.messages) == ["1", "2"]
    assert second.status == "idle" and model.remaining == 0


async def test_a_resume_must_answer_exactly_the_awaiting_calls() -> None:
    session, _, _ = session_for(recipe_with([]), [calls(call("1", "ask"))])
    await session.prompt("go")
    before = session.messages
    for bad in ({}, {"1": "a", "9": "b"}, {"9": "b"}):
        with pytest.raises(UsageError, match="exactly the awaiting calls"):
            await session.resume(bad)
    with pytest.raises(UsageError, match="still awaiting"):
        await session.resume({"1": ToolResult.awaiting()})
    with pytest.raises(UsageError, match="resume"):
        await session.prompt("hello?")
    assert session.status == "paused" and session.messages == before


async def test_resume_needs_a_paused_session() -> None:
    session, _, _ = session_for(recipe_with([]), ["hi"])
    with pytest.raises(UsageError, match="needs a paused session"):
        await session.resume({})


async def test_the_awaiting_helper_pauses_too() -> None:
    def recipe(api: RecipeAPI) -> None:
        @api.tool(description="Approve.")
        async def approve(
            tool_call_id: str, params: None, ctx: ToolContext, on_update: OnUpdate
        ) -> ToolResult:
            return ToolResult.awaiting({"interrupt": {"id": "i1"}})

    session, _, _ = session_for(recipe, [calls(call("1", "approve"))])
    await session.prompt("go")
    assert session.status == "paused" and session.awaiting_call_ids == ["1"]


async def test_abort_while_paused_closes_the_calls() -> None:
    session, _, rec = session_for(recipe_with([]), [calls(call("1", "ask"), call("2", "note"))])
    await session.prompt("go")
    session.abort("nobody answered")
    assert session.status == "aborted" and session.paused is None
    closing = [m for m in session.messages if isinstance(m, ToolResultMessage)]
    assert [(m.tool_call_id, m.is_error, text_of(m.content)) for m in closing] == [
        ("1", True, "Aborted: nobody answered"),
        ("2", True, "Aborted: nobody answered"),
    ]
    assert rec.events[-1].type == "agent_end" and rec.events[-1].status == "aborted"


def test_a_restored_pause_must_match_the_transcript() -> None:
    recipe = Recipe.from_function(recipe_with([]))
    messages = [calls(call("1", "ask"))]
    awaiting = ToolResultMessage(tool_call_id="7", tool_name="ask", content=[])
    with pytest.raises(UsageError, match="does not match the transcript"):
        create_agent_session(
            recipe,
            model=ScriptedModel([]),
            messages=messages,
            paused=PausedBatch(awaiting=[awaiting]),
        )
