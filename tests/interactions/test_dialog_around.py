"""``around``: a dialog UI whose every dialog runs inside the caller's guard."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, nullcontext

import anyio
import pytest

from interactions import AnsweredMultiple, InteractionAborted, ask_user_question
from interactions.dialogs import DialogUI, MultiSelectUI, around
from interactions.testing.dialogs import (
    ABORT,
    HANG,
    DialogCall,
    ScriptedDialogUI,
    StaticToolContext,
)

pytestmark = pytest.mark.anyio


class _Log:
    """A guard that notes how many dialogs the UI had shown when it was entered and left."""

    def __init__(self, ui: ScriptedDialogUI) -> None:
        self.ui = ui
        self.entries: list[str] = []

    @asynccontextmanager
    async def guard(self) -> AsyncIterator[None]:
        self.entries.append(f"enter {len(self.ui.calls)}")
        try:
            yield
        finally:
            self.entries.append(f"exit {len(self.ui.calls)}")


async def test_every_dialog_runs_inside_the_guard_and_passes_through_unchanged() -> None:
    ui = ScriptedDialogUI(["Red", ["a", "b"], True, "one line", "many\nlines"])
    log = _Log(ui)
    wrapped = around(ui, log.guard)
    picked = await wrapped.select("Pick", ["Red", "Blue"], timeout=3, descriptions=["r", None])
    assert picked == "Red"
    assert await wrapped.multi_select("Pick", ["a", "b"], timeout=4) == ["a", "b"]
    assert await wrapped.confirm("Sure?", "really", timeout=5) is True
    assert await wrapped.input("Name", "yours", timeout=6) == "one line"
    assert await wrapped.editor("Text", "draft") == "many\nlines"
    assert ui.calls == [
        DialogCall("select", "Pick", ("Red", "Blue"), timeout=3, descriptions=("r", None)),
        DialogCall("multi_select", "Pick", ("a", "b"), timeout=4),
        DialogCall("confirm", "Sure?", placeholder="really", timeout=5),
        DialogCall("input", "Name", placeholder="yours", timeout=6),
        DialogCall("editor", "Text", placeholder="draft"),
    ]
    assert log.entries == [
        "enter 0", "exit 1", "enter 1", "exit 2", "enter 2", "exit 3", "enter 3", "exit 4",
        "enter 4", "exit 5",
    ]  # fmt: skip


async def test_a_dismissal_comes_back_as_none() -> None:
    ui = ScriptedDialogUI([None])
    assert await around(ui, _Log(ui).guard).input("Name") is None


async def test_what_a_dialog_raises_propagates_after_the_guard_exits() -> None:
    ui = ScriptedDialogUI([ABORT, HANG])
    log = _Log(ui)
    wrapped = around(ui, log.guard)
    with pytest.raises(InteractionAborted):
        await wrapped.confirm("Sure?", "really")
    with anyio.fail_after(5), anyio.move_on_after(0.05) as scope:
        await wrapped.select("Pick", ["a"])
    assert scope.cancelled_caught
    assert log.entries == ["enter 0", "exit 1", "enter 1", "exit 2"]


async def test_multi_select_is_there_exactly_when_the_wrapped_ui_has_it() -> None:
    with_multi = around(ScriptedDialogUI(), nullcontext)
    without = around(ScriptedDialogUI(multi_select_supported=False), nullcontext)
    assert isinstance(with_multi, MultiSelectUI)
    assert isinstance(without, DialogUI) and not isinstance(without, MultiSelectUI)


@pytest.mark.parametrize("multi", [True, False])
async def test_the_dialog_walk_runs_through_the_wrapper(multi: bool) -> None:
    script: list[object] = [["Red", "Blue"]] if multi else ["[ ] Red", "[ ] Blue", "Done"]
    ui = ScriptedDialogUI(script, multi_select_supported=multi)
    log = _Log(ui)
    result = await ask_user_question(
        "Colours?",
        options=["Red", "Blue"],
        selection="multiple",
        tool_call_id="t1",
        ctx=StaticToolContext(ui=around(ui, log.guard)),
        env={},
    )
    assert result.outcome == AnsweredMultiple(answers=("Red", "Blue"))
    methods = [c.method for c in ui.calls]
    assert methods == (["multi_select"] if multi else ["select"] * 3)
    assert len(log.entries) == 2 * len(ui.calls)


async def test_a_lock_as_the_guard_shows_one_dialog_at_a_time() -> None:
    ui = ScriptedDialogUI([HANG, "never shown"])
    lock = anyio.Lock()
    wrapped = around(ui, lambda: lock)
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(wrapped.select, "First", ["a"])
            tg.start_soon(wrapped.input, "Second")
            await anyio.wait_all_tasks_blocked()
            assert len(ui.calls) == 1, "the other dialog waits for the lock"
            tg.cancel_scope.cancel()
