"""The dialog walk, driven through the public helpers by a scripted UI."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
import pytest

from interactions import (
    AnsweredMultiple,
    Approved,
    Declined,
    InteractionAborted,
    Remember,
    RevisionRequested,
    ask_user_approval,
    ask_user_question,
)
from interactions.asks import QuestionRequest
from interactions.dialogs import InputStep, SelectStep, dialog_walk
from interactions.testing.dialogs import ABORT, HANG, ScriptedDialogUI, StaticToolContext

pytestmark = pytest.mark.anyio

COLOURS = [
    {"label": "Red", "value": "#f00"},
    {"label": "Green"},
    {"label": "Blue", "value": "#00f", "description": "the sky"},
]


async def _question(script: list[Any], **kwargs: Any) -> tuple[str, ScriptedDialogUI]:
    ui = ScriptedDialogUI(script, multi_select_supported=kwargs.pop("multi", True))
    mode = kwargs.pop("mode", "tui")
    result = await ask_user_question(
        kwargs.pop("question", "Colour?"),
        tool_call_id="t1",
        ctx=StaticToolContext(ui=ui, mode=mode),
        env={},
        **kwargs,
    )
    assert ui.remaining == 0, "the walk used every scripted answer"
    return result.text, ui


async def _approval(script: list[Any], **kwargs: Any) -> tuple[str, ScriptedDialogUI]:
    ui = ScriptedDialogUI(script)
    result = await ask_user_approval(
        title="Deploy v2?",
        body="Rolls out to all regions.",
        tool_call_id="t1",
        ctx=StaticToolContext(ui=ui, mode=kwargs.pop("mode", "tui")),
        env={},
        **kwargs,
    )
    return result.text, ui


async def test_approval_approve() -> None:
    text, ui = await _approval(["Approve"])
    assert text == "Approved."
    assert ui.calls[0].method == "select"
    assert ui.calls[0].options == ("Approve", "Request changes", "Decline")
    assert "Deploy v2?" in ui.calls[0].title and "Rolls out" in ui.calls[0].title


async def test_approval_decline_is_a_decline() -> None:
    text, ui = await _approval(["Decline"])
    assert text == "User declined to answer. Proceed with your best judgment."
    assert [c.method for c in ui.calls] == ["select"]


async def test_option_descriptions_reach_the_ui_and_the_value_is_recorded() -> None:
    text, ui = await _question(["Blue"], options=COLOURS)
    assert text == "Answer: #00f"
    assert ui.calls[0].options == ("Red", "Green", "Blue", "Other")
    assert ui.calls[0].descriptions == (None, None, "the sky", None)


async def test_options_without_descriptions_send_none() -> None:
    _, ui = await _question(["a"], options=["a", "b"])
    assert ui.calls[0].descriptions == ()


async def test_approval_request_changes_with_feedback() -> None:
    text, ui = await _approval(["Request changes", "  canary first  "])
    assert text == "Revision requested. Feedback: canary first"
    assert [c.method for c in ui.calls] == ["select", "input"]
    assert ui.calls[1].title == "Feedback"


@pytest.mark.parametrize("feedback", [None, "", "   "])
async def test_approval_request_changes_without_feedback(feedback: str | None) -> None:
    text, _ = await _approval(["Request changes", feedback])
    assert text == "Revision requested."


async def test_approval_dismissed_is_declined() -> None:
    text, _ = await _approval([None])
    assert text == "User declined to answer. Proceed with your best judgment."


async def test_question_option_answer_is_value_else_label() -> None:
    text, ui = await _question(["Red"], options=COLOURS)
    assert text == "Answer: #f00"
    assert ui.calls[0].options == ("Red", "Green", "Blue", "Other")
    text, _ = await _question(["Green"], options=COLOURS)
    assert text == "Answer: Green"


async def test_question_other_asks_for_own_answer() -> None:
    text, ui = await _question(["Other", "Teal"], options=COLOURS)
    assert text == "Answer: Teal"
    assert ui.calls[1].method == "input"
    assert ui.calls[1].title == "Colour?"


@pytest.mark.parametrize("own", [None, "", "  "])
async def test_question_other_left_empty_is_declined(own: str | None) -> None:
    text, _ = await _question(["Other", own], options=COLOURS)
    assert text.startswith("User declined")


async def test_option_named_other_keeps_its_meaning() -> None:
    text, ui = await _question(["Other"], options=["This", "Other"])
    assert text == "Answer: Other"
    assert ui.calls[0].options == ("This", "Other", "Other (type your own)")


@pytest.mark.parametrize("typed", ["Blue", " blue ", "#00f"])
async def test_an_option_typed_as_other_records_the_option_as_a_resume_would(typed: str) -> None:
    # `runs answer RUN int-t1 '{"answer": "blue"}'` records #00f: a dialog must record the same
    text, _ = await _question(["Other", typed], options=COLOURS)
    assert text == "Answer: #00f"


@pytest.mark.parametrize(
    ("picked", "expected"), [(" green ", "Answer: Green"), ("#f00", "Answer: #f00")]
)
async def test_fixed_options_read_a_ui_answer_as_a_resume_would(picked: str, expected: str) -> None:
    text, _ = await _question([picked], options=COLOURS, allow_other=False)
    assert text == expected


async def test_fixed_options_decline_an_answer_that_is_no_option() -> None:
    text, _ = await _question(["Teal"], options=COLOURS, allow_other=False)
    assert text.startswith("User declined")


async def test_multiple_own_answers_that_name_an_option_record_the_option_once() -> None:
    script = [["Blue", "Other"], "blue"]
    text, _ = await _question(script, options=COLOURS, selection="multiple")
    assert text == 'Answers: ["#00f"]'
    text, _ = await _question([["Green", "red", "Teal"]], options=COLOURS, selection="multiple",
                              allow_other=False)  # fmt: skip
    assert text == 'Answers: ["Green","#f00"]'  # the option named by its label; no "Teal"


async def test_multiple_fallback_own_answer_naming_an_option_checks_that_option() -> None:
    script = ["Other", " RED ", "Done"]
    text, ui = await _question(script, options=COLOURS, selection="multiple", multi=False)
    assert ui.calls[-1].options == ("[x] Red", "[ ] Green", "[ ] Blue", "Other", "Done")
    assert text == 'Answers: ["#f00"]'


async def test_the_other_row_never_shares_a_label_with_an_option() -> None:
    text, ui = await _question(
        ["Other (type your own) 2", "Teal"], options=["Other", "Other (type your own)"]
    )
    assert ui.calls[0].options == ("Other", "Other (type your own)", "Other (type your own) 2")
    assert text == "Answer: Teal"


async def test_fixed_options_offer_no_other() -> None:
    text, ui = await _question(["Green"], options=COLOURS, allow_other=False)
    assert ui.calls[0].options == ("Red", "Green", "Blue")
    assert text == "Answer: Green"


async def test_free_text_question_uses_input() -> None:
    text, ui = await _question(["  forty-two "], question="Meaning?", header="Life")
    assert text == "Answer: forty-two"
    assert ui.calls[0].method == "input"
    assert ui.calls[0].title == "Life\n\nMeaning?"


@pytest.mark.parametrize("answer", [None, "", "   "])
async def test_free_text_dismissed_or_empty_is_declined(answer: str | None) -> None:
    text, _ = await _question([answer])
    assert text.startswith("User declined")


async def test_multiple_with_multi_select() -> None:
    text, ui = await _question([["Blue", "Red"]], options=COLOURS, selection="multiple")
    assert ui.calls[0].method == "multi_select"
    assert ui.calls[0].options == ("Red", "Green", "Blue", "Other")
    assert text == 'Answers: ["#f00","#00f"]'  # in the options' order


async def test_multiple_with_multi_select_and_other() -> None:
    text, _ = await _question([["Green", "Other"], "Teal"], options=COLOURS, selection="multiple")
    assert text == 'Answers: ["Green","Teal"]'


@pytest.mark.parametrize("picked", [None, []])
async def test_multiple_with_nothing_picked_is_declined(picked: list[str] | None) -> None:
    text, _ = await _question([picked], options=COLOURS, selection="multiple")
    assert text.startswith("User declined")


async def test_multiple_fallback_toggles_rows_until_done() -> None:
    script = ["[ ] Red", "[ ] Blue", "[x] Red", "[ ] Green", "Other", "Teal", "Done"]
    text, ui = await _question(script, options=COLOURS, selection="multiple", multi=False)
    assert all(c.method in ("select", "input") for c in ui.calls)
    assert ui.calls[0].options == ("[ ] Red", "[ ] Green", "[ ] Blue", "Other", "Done")
    assert ui.calls[2].options == ("[x] Red", "[ ] Green", "[x] Blue", "Other", "Done")
    assert ui.calls[-1].options == ("[ ] Red", "[x] Green", "[x] Blue", "[x] Teal", "Other", "Done")
    assert text == 'Answers: ["Green","#00f","Teal"]'


async def test_multiple_fallback_done_with_nothing_is_declined() -> None:
    text, _ = await _question(["Done"], options=COLOURS, selection="multiple", multi=False)
    assert text.startswith("User declined")


async def test_multiple_fallback_dismissed_midway_is_declined() -> None:
    text, _ = await _question(["[ ] Red", None], options=COLOURS, selection="multiple", multi=False)
    assert text.startswith("User declined")


def test_walk_is_a_plain_generator() -> None:
    walk = dialog_walk(QuestionRequest(question="Name?"))
    step = next(walk)
    assert step == InputStep("Name?", "Type your answer")
    with pytest.raises(StopIteration) as done:
        walk.send("Ada")
    assert done.value.value.answer == "Ada"


def test_walk_fallback_rows_without_io() -> None:
    request = QuestionRequest.model_validate(
        {"question": "Pick", "options": [{"label": "a"}, {"label": "b"}], "selection": "multiple"}
    )
    walk = dialog_walk(request, has_multi_select=False)
    assert next(walk) == SelectStep("Pick", ("[ ] a", "[ ] b", "Other", "Done"))
    assert walk.send("[ ] b") == SelectStep("Pick", ("[ ] a", "[x] b", "Other", "Done"))
    with pytest.raises(StopIteration) as done:
        walk.send("Done")
    assert done.value.value == AnsweredMultiple(answers=("b",))


async def test_the_contract_gives_no_default_timeout_whatever_the_mode() -> None:
    # A host's own default (RPC's 120 s) belongs to its UI, not to the contract.
    for mode in ("rpc", "tui", "web"):
        _, ui = await _question(["Green"], options=COLOURS, mode=mode)
        assert ui.calls[0].timeout is None


async def test_every_dialog_gets_the_configured_timeout_not_what_remains() -> None:
    _, ui = await _question(["Other", "teal"], options=COLOURS, timeout=5)
    assert [c.timeout for c in ui.calls] == [5, 5]


async def test_timeout_is_enforced_even_when_the_ui_ignores_it() -> None:
    with anyio.fail_after(5):
        text, _ = await _question([HANG], options=COLOURS, mode="rpc", timeout=0.05)
    assert text.startswith("User declined")


async def test_timeout_bounds_the_whole_walk() -> None:
    with anyio.fail_after(5):
        text, ui = await _approval(["Request changes", HANG], mode="rpc", timeout=0.05)
    assert text.startswith("User declined")
    assert ui.calls[1].timeout is not None and ui.calls[1].timeout <= 0.05


async def test_a_dialog_stays_open_no_longer_than_its_ask_expires() -> None:
    # No timeout: the terminal waits, but not past the expiry a durable run would enforce.
    ui = ScriptedDialogUI([HANG])
    expires = datetime.now(UTC) + timedelta(seconds=1.5)
    with anyio.fail_after(10):
        result = await ask_user_approval(
            title="Deploy?", expires_at=expires, tool_call_id="t1", ctx=StaticToolContext(ui=ui)
        )
    assert result.outcome == Declined(reason="expired")
    assert result.text.startswith("User declined")
    assert ui.calls[0].timeout is None  # each dialog still gets the caller's timeout as given


async def test_ui_reported_abort_raises_not_declines() -> None:
    with pytest.raises(InteractionAborted) as info:
        await _approval([ABORT])
    assert info.value.tool_call_id == "t1"


async def test_cancelling_the_turn_raises_interaction_aborted() -> None:
    ui = ScriptedDialogUI([HANG])
    started = anyio.Event()
    caught: list[BaseException] = []

    async def tool() -> None:
        started.set()
        try:
            await ask_user_question(
                "Colour?", tool_call_id="t9", ctx=StaticToolContext(ui=ui, aborted=True), env={}
            )
        except InteractionAborted as exc:
            caught.append(exc)
            raise

    with anyio.fail_after(5):
        with pytest.raises(ExceptionGroup) as info:
            async with anyio.create_task_group() as tg:
                tg.start_soon(tool)
                await started.wait()
                await anyio.wait_all_tasks_blocked()
                tg.cancel_scope.cancel()
    assert len(caught) == 1 and caught[0].tool_call_id == "t9"  # type: ignore[attr-defined]
    assert info.group_contains(InteractionAborted)


async def test_a_timeout_around_an_ask_is_a_timeout_not_an_abort() -> None:
    ui = ScriptedDialogUI([HANG])
    with anyio.fail_after(5):
        with anyio.move_on_after(0.05) as scope:
            await ask_user_question("Colour?", tool_call_id="t1", ctx=StaticToolContext(ui=ui))
    assert scope.cancelled_caught  # the tool's own timeout caught its own cancellation


def _tool_approval() -> Any:
    from interactions.asks import ARGS_SCHEMA, ApprovalRequest

    schema = {"properties": {"env": {"type": "string"}}, "required": ["env"], "type": "object"}
    return ApprovalRequest(
        title="Run deploy?",
        metadata={"kind": "tool_call", "arguments": {"env": "prod"}, ARGS_SCHEMA: schema},
    )


@pytest.mark.parametrize(
    ("pick", "scope", "expected"),
    [
        ("Approve always", "In this run", Approved(remember=Remember(scope="run"))),
        (
            "Approve always",
            "In this conversation, with these arguments only",
            Approved(remember=Remember(scope="thread", args=True)),
        ),
        (
            "Decline always",
            "In this conversation",
            RevisionRequested(remember=Remember(scope="thread")),
        ),
    ],
)
def test_a_tool_calls_approval_may_be_remembered_where_the_person_says(
    pick: str, scope: str, expected: Any
) -> None:
    walk = dialog_walk(_tool_approval())
    first = next(walk)
    assert isinstance(first, SelectStep)
    assert first.options == (
        "Approve", "Approve always", "Edit arguments", "Request changes", "Decline",
        "Decline always",
    )  # fmt: skip
    where = walk.send(pick)
    assert where == SelectStep(
        "Without asking again, for the calls of this tool",
        (
            "In this run",
            "In this conversation",
            "In this run, with these arguments only",
            "In this conversation, with these arguments only",
        ),
    )
    with pytest.raises(StopIteration) as done:
        walk.send(scope)
    assert done.value.value == expected


def test_dismissing_where_a_decision_holds_goes_back_to_the_choice() -> None:
    walk = dialog_walk(_tool_approval())
    first = next(walk)
    walk.send("Approve always")
    assert walk.send(None) == first, "nothing is decided by a dismissed scope"
    with pytest.raises(StopIteration) as done:
        walk.send("Approve")
    assert done.value.value == Approved()


def test_an_approval_of_no_tool_call_offers_no_always() -> None:
    from interactions.asks import ApprovalRequest

    step = next(dialog_walk(ApprovalRequest(title="Ship?")))
    assert isinstance(step, SelectStep)
    assert step.options == ("Approve", "Request changes", "Decline")


async def test_an_ask_naming_its_approvers_is_never_taken_by_a_dialog() -> None:
    """Whoever sits at a dialog is no one a host signed in: the ask pauses where the run can,
    for the people it names, else no one can answer it here."""
    from interactions import Unavailable, is_awaiting

    for people in ({"approvers": ["ada"]}, {"required_approvals": 2, "approvers": ["group:r"]}):
        ui = ScriptedDialogUI([])
        pausing = StaticToolContext(ui=ui, can_pause=True)
        paused = await ask_user_approval(
            title="Ship?", tool_call_id="t1", **people, ctx=pausing, env={}
        )
        assert is_awaiting(paused.outcome) and ui.calls == []
        alone = await ask_user_approval(
            title="Ship?", tool_call_id="t1", **people, ctx=StaticToolContext(ui=ui), env={}
        )
        assert isinstance(alone.outcome, Unavailable) and ui.calls == []
