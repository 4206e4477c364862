"""The terminal dialog UI driven through prompt_toolkit's real key handling (pipe input)."""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import pytest
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output import DummyOutput

from hosts.cli.terminal import TerminalDialogUI
from interactions import InteractionAborted, ask_user_approval, ask_user_question
from interactions.testing.dialogs import StaticToolContext

pytestmark = pytest.mark.anyio

DOWN = "\x1b[B"
ENTER = "\r"
SPACE = " "
CTRL_C = "\x03"


@pytest.fixture
def keys() -> Iterator[PipeInput]:
    with create_pipe_input() as pipe:
        yield pipe


def _ctx(pipe: PipeInput) -> StaticToolContext:
    return StaticToolContext(ui=TerminalDialogUI(input=pipe, output=DummyOutput()), mode="tui")


async def test_select_with_arrow_keys(keys: PipeInput) -> None:
    keys.send_text(DOWN + ENTER)
    with anyio.fail_after(10):
        result = await ask_user_question(
            "Colour?", options=["Red", "Blue"], tool_call_id="t", ctx=_ctx(keys), env={}
        )
    assert result.text == "Answer: Blue"


async def test_other_then_typed_answer(keys: PipeInput) -> None:
    keys.send_text(DOWN + DOWN + ENTER)
    keys.send_text("Teal" + ENTER)
    with anyio.fail_after(10):
        result = await ask_user_question(
            "Colour?", options=["Red", "Blue"], tool_call_id="t", ctx=_ctx(keys), env={}
        )
    assert result.text == "Answer: Teal"


async def test_request_changes_with_feedback(keys: PipeInput) -> None:
    keys.send_text(DOWN + ENTER)
    keys.send_text("smaller diff" + ENTER)
    with anyio.fail_after(10):
        result = await ask_user_approval(title="Merge?", tool_call_id="t", ctx=_ctx(keys), env={})
    assert result.text == "Revision requested. Feedback: smaller diff"


async def test_checkbox_multi_select(keys: PipeInput) -> None:
    keys.send_text(SPACE + DOWN + DOWN + SPACE + ENTER)
    with anyio.fail_after(10):
        result = await ask_user_question(
            "Toppings?",
            options=["cheese", "ham", "olives"],
            selection="multiple",
            tool_call_id="t",
            ctx=_ctx(keys),
            env={},
        )
    assert result.text == 'Answers: ["cheese","olives"]'


async def test_ctrl_c_in_a_dialog_aborts_the_turn(keys: PipeInput) -> None:
    keys.send_text(CTRL_C)
    with anyio.fail_after(10), pytest.raises(InteractionAborted):
        await ask_user_approval(title="Merge?", tool_call_id="t", ctx=_ctx(keys), env={})


async def test_timeout_closes_the_dialog_and_declines(keys: PipeInput) -> None:
    with anyio.fail_after(10):
        result = await ask_user_approval(
            title="Merge?", tool_call_id="t", ctx=_ctx(keys), env={}, timeout=0.2
        )
    assert result.outcome.type == "declined"


ESCAPE = "\x1b"
CTRL_D = "\x04"


@pytest.mark.parametrize("key", [ESCAPE, CTRL_D])
async def test_escape_or_ctrl_d_declines_a_question(keys: PipeInput, key: str) -> None:
    keys.send_text(key)
    with anyio.fail_after(10):
        result = await ask_user_question(
            "Colour?", options=["Red", "Blue"], tool_call_id="t", ctx=_ctx(keys), env={}
        )
    assert result.outcome.type == "declined"


@pytest.mark.parametrize("key", [ESCAPE, CTRL_D])
async def test_escape_or_ctrl_d_declines_free_text(keys: PipeInput, key: str) -> None:
    keys.send_text("half an answer" + key)
    with anyio.fail_after(10):
        result = await ask_user_question("Name?", tool_call_id="t", ctx=_ctx(keys), env={})
    assert result.outcome.type == "declined"


async def test_an_approval_offers_decline(keys: PipeInput) -> None:
    keys.send_text(DOWN + DOWN + ENTER)
    with anyio.fail_after(10):
        result = await ask_user_approval(title="Merge?", tool_call_id="t", ctx=_ctx(keys), env={})
    assert result.outcome.type == "declined"
