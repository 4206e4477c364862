"""A tool written exactly as the README and the pi seed write it (``ctx`` and nothing else), run
on every channel a session has: the session's environment decides, never the process's."""

from __future__ import annotations

import pytest

from interactions import AWAITING_TEXT, UNAVAILABLE_TEXT, AskUserResult, ask_user_approval
from interactions.testing.dialogs import ScriptedDialogUI
from recipes import OnUpdate, RecipeAPI, ToolContext
from recipes.messages import ToolResultMessage, text_of
from tests.recipes.helpers import call, calls, session_for

pytestmark = pytest.mark.anyio


def recipe(api: RecipeAPI) -> None:
    @api.tool(description="Ship it once approved.", execution_mode="sequential")
    async def ship(
        tool_call_id: str, params: None, ctx: ToolContext, on_update: OnUpdate
    ) -> AskUserResult:
        return await ask_user_approval(title="Ship v2?", tool_call_id=tool_call_id, ctx=ctx)


def _result(messages: list[object]) -> str:
    [result] = [m for m in messages if isinstance(m, ToolResultMessage)]
    return text_of(result.content)


async def test_the_session_environment_pauses_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PI_ASK_USER_AUTO_APPROVE", "1")  # the process's flag is not the session's
    session, model, _ = session_for(
        recipe, [calls(call("c1", "ship")), "Shipped."], env={"PI_INTERRUPT_RESUME": "1"}
    )
    await session.prompt("ship it")
    assert session.status == "paused" and session.paused is not None
    [interrupt] = session.paused.interrupts
    assert interrupt.tool_call_id == "c1" and interrupt.is_approval
    assert interrupt.outcome is not None and interrupt.outcome.type == "awaiting_user"
    assert AWAITING_TEXT == "Awaiting user response."
    await session.resume({"int-c1": {"approved": True, "feedback": "go"}})
    assert session.status == "idle" and model.remaining == 0
    assert _result(session.messages) == "Approved. Feedback: go"


async def test_the_session_environment_auto_approves() -> None:
    session, _, _ = session_for(
        recipe, [calls(call("c1", "ship")), "ok"], env={"PI_ASK_USER_AUTO_APPROVE": "1"}
    )
    await session.prompt("ship it")
    assert _result(session.messages) == "Approved."


async def test_a_host_that_can_pause_pauses_without_any_flag() -> None:
    session, _, _ = session_for(recipe, [calls(call("c1", "ship"))], env={}, can_pause=True)
    await session.prompt("ship it")
    assert session.status == "paused"


async def test_a_dialog_answers_when_the_session_has_a_ui() -> None:
    ui = ScriptedDialogUI(["Request changes", "smaller batch"])
    session, _, _ = session_for(recipe, [calls(call("c1", "ship")), "ok"], env={}, ui=ui)
    await session.prompt("ship it")
    assert _result(session.messages) == "Revision requested. Feedback: smaller batch"


async def test_without_a_human_the_tool_says_so_and_the_run_goes_on() -> None:
    session, _, _ = session_for(recipe, [calls(call("c1", "ship")), "I'll ask."], env={})
    await session.prompt("ship it")
    assert _result(session.messages) == UNAVAILABLE_TEXT
    assert session.status == "idle"


async def test_a_malformed_interrupt_lifetime_fails_the_session_at_its_start() -> None:
    from interactions import ContractError

    with pytest.raises(ContractError, match="PI_INTERRUPT_TTL_SECONDS"):
        session_for(recipe, [], env={"PI_INTERRUPT_TTL_SECONDS": "soon"})
