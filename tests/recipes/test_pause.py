"""Pausing a run on an ask, resuming it, restoring it in a new session; the tool's promises."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import anyio
import pytest

from interactions import (
    Answered,
    AskUserInterrupt,
    ContractError,
    Declined,
    InvalidPayloadError,
    UsageError,
    ask_user_approval,
    ask_user_question,
)
from interactions.testing.dialogs import HANG, ScriptedDialogUI
from recipes import OnUpdate, PausedBatch, RecipeAPI, ToolContext, ToolResult, build_recipe
from recipes.messages import ToolResultMessage, TranscriptAdapter, text_of
from recipes.models.scripted import ScriptedModel
from recipes.session import create_agent_session
from tests.recipes.helpers import call, calls, session_for

pytestmark = pytest.mark.anyio

PAUSE = {"PI_INTERRUPT_RESUME": "1"}


def recipe_with(log: list[str], ask_mode: str = "sequential") -> Any:
    def recipe(api: RecipeAPI) -> None:
        async def ask(
            tool_call_id: str, params: None, ctx: ToolContext, on_update: OnUpdate
        ) -> Any:
            log.append(f"ask:{tool_call_id}")
            return await ask_user_question("Colour?", tool_call_id=tool_call_id, ctx=ctx)

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
        env=PAUSE,
    )
    await session.prompt("pick a colour")

    assert session.status == "paused"
    assert log == ["note:1", "ask:2"]
    assert session.awaiting_call_ids == ["2"]
    assert [c.id for c in session.pending_calls] == ["3"]
    assert session.paused is not None
    [interrupt] = session.paused.interrupts
    assert (interrupt.id, interrupt.message, interrupt.tool_call_id) == ("int-2", "Colour?", "2")
    assert result_ids(session.messages) == ["1"]  # the paused call has no result yet
    assert len(model.requests) == 1
    end = rec.events[-1]
    assert end.type == "agent_end" and end.status == "paused" and end.paused == session.paused

    await session.resume({"int-2": Answered(answer="blue")})

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
        env=PAUSE,
    )
    await session.prompt("go")
    assert session.status == "paused"
    assert sorted(log) == ["ask:1", "note:2"]
    assert session.pending_calls == []
    assert result_ids(session.messages) == ["2"]
    await session.resume({"int-1": {"answer": "red"}})  # a resume payload works too
    assert result_ids(session.messages) == ["2", "1"]
    assert text_of(session.messages[-2].content) == "Answer: red"
    assert session.status == "idle"


async def test_a_stored_pause_resumes_in_a_new_session() -> None:
    log: list[str] = []
    recipe = build_recipe(recipe_with(log))
    script = [calls(call("1", "ask"), call("2", "note")), "Thanks."]
    first = create_agent_session(recipe, model=ScriptedModel(script), env=PAUSE)
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
    await second.resume({"int-1": Declined()})
    assert log == ["ask:1", "note:2"]
    assert result_ids(second.messages) == ["1", "2"]
    assert second.status == "idle" and model.remaining == 0


async def test_a_resume_must_answer_every_awaiting_interrupt() -> None:
    session, _, _ = session_for(recipe_with([]), [calls(call("1", "ask"))], env=PAUSE)
    await session.prompt("go")
    before = session.messages
    for bad in ({}, {"int-1": Answered(answer="a"), "int-9": Answered(answer="b")}):
        with pytest.raises(UsageError, match="every awaiting interrupt"):
            await session.resume(bad)
    with pytest.raises(UsageError, match="is a str"):
        await session.resume({"int-1": "Answer: a"})  # type: ignore[dict-item]
    with pytest.raises(InvalidPayloadError, match="expects a payload"):
        await session.resume({"int-1": {"approved": True}})
    with pytest.raises(UsageError, match="resume"):
        await session.prompt("hello?")
    assert session.status == "paused" and session.messages == before


async def test_resume_needs_a_paused_session() -> None:
    session, _, _ = session_for(recipe_with([]), ["hi"])
    with pytest.raises(UsageError, match="needs a paused session"):
        await session.resume({})


async def test_a_hand_built_interrupt_pauses_too() -> None:
    interrupt = AskUserInterrupt(
        id="int-custom",
        reason="acme:review",
        message="Review the diff",
        expires_at="2099-01-01T00:00:00Z",
        response_schema={"type": "object", "required": ["approved"]},
    )

    def recipe(api: RecipeAPI) -> None:
        @api.tool(description="Review.")
        async def review(
            tool_call_id: str, params: None, ctx: ToolContext, on_update: OnUpdate
        ) -> ToolResult:
            return ToolResult.awaiting(interrupt)

    session, _, _ = session_for(recipe, [calls(call("1", "review")), "ok"])
    await session.prompt("go")
    assert session.status == "paused" and session.paused is not None
    assert session.paused.interrupts == [interrupt]


async def test_a_pause_without_an_interrupt_is_refused() -> None:
    with pytest.raises(Exception, match="must carry the interrupt"):
        ToolResult(content=[], pause=True)


async def test_abort_while_paused_closes_the_calls() -> None:
    session, _, rec = session_for(
        recipe_with([]), [calls(call("1", "ask"), call("2", "note"))], env=PAUSE
    )
    await session.prompt("go")
    session.abort("nobody answered")
    assert session.status == "aborted" and session.paused is None
    closing = [m for m in session.messages if isinstance(m, ToolResultMessage)]
    assert [(m.tool_call_id, m.is_error, text_of(m.content)) for m in closing] == [
        ("1", True, "Aborted: nobody answered"),
        ("2", True, "Aborted: nobody answered"),
    ]
    assert rec.events[-1].type == "agent_end" and rec.events[-1].status == "aborted"


async def test_a_restored_pause_must_match_the_transcript() -> None:
    session, _, _ = session_for(recipe_with([]), [calls(call("1", "ask"))], env=PAUSE)
    await session.prompt("go")
    assert session.paused is not None
    other = session.paused.model_copy(
        update={"awaiting": [session.paused.awaiting[0].model_copy(update={"tool_call_id": "7"})]}
    )
    with pytest.raises(UsageError, match="does not match the transcript"):
        create_agent_session(
            build_recipe(recipe_with([])),
            model=ScriptedModel([]),
            messages=session.messages,
            paused=other,
        )


# -- what a tool author relies on: code after an ask, asking twice, hiding a pause ------------


def deploy_recipe(log: list[str], resume: str = "answer") -> Any:
    """A tool that asks for approval, then acts on it (deletes a file, say)."""

    def recipe(api: RecipeAPI) -> None:
        @api.tool(description="Deploy.", execution_mode="sequential", resume=resume)  # type: ignore[arg-type]
        async def deploy(
            tool_call_id: str, params: None, ctx: ToolContext, on_update: OnUpdate
        ) -> Any:
            log.append("before")
            approval = await ask_user_approval(
                title="Deploy?", tool_call_id=tool_call_id, ctx=ctx
            )
            if approval.outcome.type != "approved":
                return approval
            log.append("deployed")
            return "Deployed."

    return recipe


async def test_by_default_the_answer_becomes_the_result_and_the_tool_does_not_run_again() -> None:
    log: list[str] = []
    session, _, _ = session_for(deploy_recipe(log), [calls(call("d", "deploy")), "ok"], env=PAUSE)
    await session.prompt("deploy")
    await session.resume({"int-d": {"approved": True}})
    assert log == ["before"]  # 0 re-executions: the seed's contract
    [result] = [m for m in session.messages if isinstance(m, ToolResultMessage)]
    assert text_of(result.content) == "Approved."


async def test_a_replay_tool_runs_again_and_acts_on_the_answer() -> None:
    log: list[str] = []
    session, _, _ = session_for(
        deploy_recipe(log, resume="replay"), [calls(call("d", "deploy")), "ok"], env=PAUSE
    )
    await session.prompt("deploy")
    assert session.status == "paused"
    await session.resume({"int-d": {"approved": True}})
    assert log == ["before", "before", "deployed"]  # code before the ask runs again
    [result] = [m for m in session.messages if isinstance(m, ToolResultMessage)]
    assert text_of(result.content) == "Deployed."
    assert session.status == "idle"


def repaint_recipe(log: list[str]) -> Any:
    """The tool of docs/asking.md: a question, then an approval, then the work."""

    def recipe(api: RecipeAPI) -> None:
        @api.tool(description="Repaint.", execution_mode="sequential", resume="replay")
        async def repaint(
            tool_call_id: str, params: None, ctx: ToolContext, on_update: OnUpdate
        ) -> Any:
            colour = await ask_user_question(
                "Which colour?",
                options=["Red", {"label": "Blue", "value": "#33d"}],
                tool_call_id=tool_call_id,
                ctx=ctx,
            )
            if colour.outcome.type != "answered":
                return colour
            approval = await ask_user_approval(
                title="Repaint?", body=colour.text, tool_call_id=tool_call_id, ctx=ctx
            )
            if approval.outcome.type != "approved":
                return approval
            log.append(f"painted {colour.outcome.answer}")
            return f"Painted {colour.outcome.answer}."

    return recipe


async def test_a_replay_tool_asks_several_things_in_turn() -> None:
    log: list[str] = []
    session, _, _ = session_for(
        repaint_recipe(log), [calls(call("r", "repaint")), "done"], env=PAUSE
    )
    await session.prompt("repaint")
    assert session.paused is not None and [i.id for i in session.paused.interrupts] == ["int-r"]
    await session.resume({"int-r": {"answer": "Blue"}})  # the label records the value
    assert session.status == "paused" and session.paused is not None
    [approval] = session.paused.interrupts
    assert approval.id == "int-r.2" and approval.is_approval
    assert approval.display is not None and approval.display.body == "Answer: #33d"
    await session.resume({"int-r.2": {"approved": True}})
    assert log == ["painted #33d"]
    [result] = [m for m in session.messages if isinstance(m, ToolResultMessage)]
    assert text_of(result.content) == "Painted #33d."


async def test_a_second_ask_after_a_pause_fails_the_run_loudly() -> None:
    def recipe(api: RecipeAPI) -> None:
        @api.tool(description="Ask twice.", execution_mode="sequential")
        async def twice(
            tool_call_id: str, params: None, ctx: ToolContext, on_update: OnUpdate
        ) -> Any:
            await ask_user_question("First?", tool_call_id=tool_call_id, ctx=ctx)
            return await ask_user_approval(title="Then?", tool_call_id=tool_call_id, ctx=ctx)

    session, _, rec = session_for(recipe, [calls(call("t", "twice")), "ok"], env=PAUSE)
    with pytest.raises(ContractError, match="return that ask's result now"):
        await session.prompt("go")
    assert session.status == "failed"
    assert rec.events[-1].type == "agent_end" and rec.events[-1].status == "failed"


async def test_a_pause_the_tool_hides_fails_the_run_even_when_it_catches_everything() -> None:
    deleted: list[str] = []

    def recipe(api: RecipeAPI) -> None:
        @api.tool(description="Delete.", execution_mode="sequential")
        async def delete(
            tool_call_id: str, params: None, ctx: ToolContext, on_update: OnUpdate
        ) -> Any:
            try:
                await ask_user_approval(title="Delete?", tool_call_id=tool_call_id, ctx=ctx)
                await ask_user_approval(title="Really?", tool_call_id=tool_call_id, ctx=ctx)
            except Exception:
                pass  # a broad except cannot swallow the breach
            deleted.append("file")
            return "Deleted."

    session, model, _ = session_for(recipe, [calls(call("x", "delete")), "ok"], env=PAUSE)
    with pytest.raises(ContractError):
        await session.prompt("go")
    assert session.status == "failed" and len(model.requests) == 1  # no "success" turn


async def test_returning_something_else_after_a_pause_fails_the_run() -> None:
    def recipe(api: RecipeAPI) -> None:
        @api.tool(description="Swallow.", execution_mode="sequential")
        async def swallow(
            tool_call_id: str, params: None, ctx: ToolContext, on_update: OnUpdate
        ) -> str:
            await ask_user_approval(title="Go?", tool_call_id=tool_call_id, ctx=ctx)
            return "Done."  # the human was never asked

    session, _, _ = session_for(recipe, [calls(call("s", "swallow")), "ok"], env=PAUSE)
    with pytest.raises(ContractError, match="nobody would be asked"):
        await session.prompt("go")


async def test_a_reused_tool_call_id_gets_its_own_interrupt_id() -> None:
    log: list[str] = []
    session, _, _ = session_for(
        recipe_with(log), [calls(call("c", "ask")), calls(call("c", "ask")), "ok"], env=PAUSE
    )
    await session.prompt("go")
    await session.resume({"int-c": Answered(answer="red")})
    assert session.paused is not None
    assert [i.id for i in session.paused.interrupts] == ["int-c@2"]
    await session.resume({"int-c@2": Answered(answer="blue")})
    assert session.status == "idle"


# -- a timeout around an ask is a timeout ----------------------------------------------------


async def test_tool_timeout_around_a_dialog_ends_that_call_not_the_run() -> None:
    session, model, _ = session_for(
        recipe_with([]),
        [calls(call("1", "ask")), "ok"],
        ui=ScriptedDialogUI([HANG]),
        tool_timeout=0.05,
    )
    with anyio.fail_after(5):
        await session.prompt("go")
    assert session.status == "idle"  # not aborted
    [result] = [m for m in session.messages if isinstance(m, ToolResultMessage)]
    assert result.is_error and result.details == {"error": "timeout"}
    assert len(model.requests) == 2  # the model read the timeout and went on


async def test_a_tools_own_timeout_around_an_ask_is_its_own_business() -> None:
    def recipe(api: RecipeAPI) -> None:
        @api.tool(description="Ask briefly.")
        async def brief(
            tool_call_id: str, params: None, ctx: ToolContext, on_update: OnUpdate
        ) -> str:
            with anyio.move_on_after(0.05):
                await ask_user_question("Quick?", tool_call_id=tool_call_id, ctx=ctx)
            return "Nobody answered in time; going with the default."

    session, _, _ = session_for(
        recipe, [calls(call("1", "brief")), "ok"], ui=ScriptedDialogUI([HANG])
    )
    with anyio.fail_after(5):
        await session.prompt("go")
    assert session.status == "idle"
    [result] = [m for m in session.messages if isinstance(m, ToolResultMessage)]
    assert text_of(result.content).startswith("Nobody answered") and not result.is_error


# -- a replayed ask must be the ask that was answered ----------------------------------------


def changing_patch_recipe(applied: list[str]) -> Any:
    """A replay tool whose approval shows a patch computed before the ask (not idempotent)."""
    patches = iter(["rm build/", "rm -rf /"])

    def recipe(api: RecipeAPI) -> None:
        @api.tool(description="Apply a patch.", execution_mode="sequential", resume="replay")
        async def apply(
            tool_call_id: str, params: None, ctx: ToolContext, on_update: OnUpdate
        ) -> Any:
            patch = next(patches)
            approval = await ask_user_approval(
                title="Apply this patch?", body=patch, tool_call_id=tool_call_id, ctx=ctx
            )
            if approval.outcome.type != "approved":
                return approval
            applied.append(patch)
            return f"Applied {patch}."

    return recipe


async def test_an_approval_replayed_for_another_body_is_not_taken_as_given() -> None:
    applied: list[str] = []
    session, _, _ = session_for(
        changing_patch_recipe(applied), [calls(call("p", "apply")), "ok"], env=PAUSE
    )
    await session.prompt("patch it")
    assert session.paused is not None
    assert session.paused.interrupts[0].display.body == "rm build/"  # type: ignore[union-attr]
    with pytest.raises(ContractError, match="rm -rf /"):
        await session.resume({"int-p": {"approved": True}})  # approved "rm build/" only
    assert applied == []
    assert session.status == "failed"


async def test_a_question_replayed_with_other_options_is_refused() -> None:
    rounds = iter([["Red", "Blue"], ["Green"]])

    def recipe(api: RecipeAPI) -> None:
        @api.tool(description="Pick.", execution_mode="sequential", resume="replay")
        async def pick(
            tool_call_id: str, params: None, ctx: ToolContext, on_update: OnUpdate
        ) -> Any:
            return await ask_user_question(
                "Colour?",
                options=next(rounds),
                allow_other=False,
                tool_call_id=tool_call_id,
                ctx=ctx,
            )

    session, _, _ = session_for(recipe, [calls(call("q", "pick")), "ok"], env=PAUSE)
    await session.prompt("pick")
    with pytest.raises(ContractError, match="same things"):
        await session.resume({"int-q": {"answer": "Red"}})  # not an option of the replayed ask


async def test_an_identical_replayed_ask_gets_its_stored_answer() -> None:
    log: list[str] = []
    session, _, _ = session_for(
        repaint_recipe(log), [calls(call("r", "repaint")), "done"], env=PAUSE
    )
    await session.prompt("repaint")
    await session.resume({"int-r": {"answer": "Red"}})
    await session.resume({"int-r.2": {"approved": True, "feedback": "ok"}})
    assert log == ["painted Red"]


async def test_a_paused_session_is_freed_without_the_garbage_collector() -> None:
    """A host that starts many sessions (a run each) frees each one when it drops it: nothing in
    a session refers back to it, so it does not wait for a garbage collection, which a busy
    process runs ever more rarely."""

    def recipe(api: RecipeAPI) -> None:
        @api.tool(description="Deploy once approved.", execution_mode="sequential")
        async def deploy(
            tool_call_id: str, params: None, ctx: ToolContext, on_update: OnUpdate
        ) -> Any:
            return await ask_user_approval(title="Deploy?", tool_call_id=tool_call_id, ctx=ctx)

    gc.collect()
    gc.disable()
    try:
        session, _, rec = session_for(recipe, [calls(call("d", "deploy")), "ok"], env=PAUSE)
        await session.prompt("go")
        assert session.status == "paused" and rec.events[-1].type == "agent_end"
        freed = weakref.ref(session)
        del session, rec
        assert freed() is None
    finally:
        gc.enable()
