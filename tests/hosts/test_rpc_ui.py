"""The RPC dialog UI against an in-memory client: requests, answers, cancel notices."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest

from hosts.rpc._ui import RpcDialogUI
from interactions import InteractionAborted, ask_user_approval, ask_user_question
from interactions.testing.dialogs import StaticToolContext

pytestmark = pytest.mark.anyio


class Client:
    """Records what the UI sends; answers dialogs from a script keyed by method."""

    def __init__(self, answers: dict[str, dict[str, Any]] | None = None) -> None:
        self.sent: list[dict[str, Any]] = []
        self.answers = answers or {}
        self.ui = RpcDialogUI(self.send)

    async def send(self, record: dict[str, Any]) -> None:
        self.sent.append(record)
        answer = self.answers.get(record["method"])
        if answer is not None:
            response = {"type": "extension_ui_response", "id": record["id"], **answer}
            assert self.ui.deliver(response) is None


async def test_select_answered_by_value() -> None:
    client = Client({"select": {"value": "Blue"}})
    ctx = StaticToolContext(ui=client.ui, mode="rpc")
    result = await ask_user_question(
        "Colour?", options=["Red", "Blue"], tool_call_id="t", ctx=ctx, env={}
    )
    assert result.text == "Answer: Blue"
    request = client.sent[0]
    assert request["type"] == "extension_ui_request"
    assert request["options"] == ["Red", "Blue", "Other"]
    assert 119_000 <= request["timeout"] <= 120_000  # milliseconds


async def test_cancelled_response_declines() -> None:
    client = Client({"select": {"cancelled": True}})
    ctx = StaticToolContext(ui=client.ui, mode="rpc")
    result = await ask_user_approval(title="Go?", tool_call_id="t", ctx=ctx, env={})
    assert result.outcome.type == "declined"


async def test_timeout_sends_a_cancel_notice_and_declines() -> None:
    client = Client()
    ctx = StaticToolContext(ui=client.ui, mode="rpc")
    with anyio.fail_after(5):
        result = await ask_user_approval(
            title="Go?", tool_call_id="t", ctx=ctx, env={}, timeout=0.05
        )
    assert result.outcome.type == "declined"
    dialog, cancel = client.sent[0], client.sent[-1]
    assert cancel["method"] == "cancel" and cancel["targetId"] == dialog["id"]
    assert cancel["id"] != dialog["id"]
    late = {"type": "extension_ui_response", "id": dialog["id"], "value": "Approve"}
    assert client.ui.deliver(late) == {
        "type": "extension_ui_response_ignored",
        "id": dialog["id"],
        "reason": "unknown or closed dialog",
    }
    assert client.ui.open_dialogs == []


async def test_abort_sends_a_cancel_notice_and_raises() -> None:
    client = Client()
    ctx = StaticToolContext(ui=client.ui, mode="rpc", aborted=True)  # the turn's abort
    with anyio.fail_after(5), pytest.raises(ExceptionGroup) as info:
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: ask_user_approval(title="Go?", tool_call_id="t", ctx=ctx, env={}))
            await anyio.wait_all_tasks_blocked()
            tg.cancel_scope.cancel()
    assert info.group_contains(InteractionAborted)
    assert [r["method"] for r in client.sent] == ["select", "cancel"]


async def test_unknown_response_is_ignored() -> None:
    client = Client()
    notice = client.ui.deliver({"type": "extension_ui_response", "id": "nope", "value": "x"})
    assert notice is not None and notice["type"] == "extension_ui_response_ignored"


class ScriptClient:
    """Answers each dialog with the next response of a script (a function of the request)."""

    def __init__(self, *script: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
        self.sent: list[dict[str, Any]] = []
        self.script = list(script)
        self.ui = RpcDialogUI(self.send)

    async def send(self, record: dict[str, Any]) -> None:
        self.sent.append(record)
        if record["method"] != "cancel" and self.script:
            answer = self.script.pop(0)(record)
            response = {"type": "extension_ui_response", "id": record["id"], **answer}
            assert self.ui.deliver(response) is None


async def test_timeout_none_sends_the_default_as_whole_milliseconds() -> None:
    client = ScriptClient(lambda r: {"value": "A"}, lambda r: {"value": "A"})
    assert await client.ui.select("Pick", ["A"]) == "A"
    assert await client.ui.select("Pick", ["A"], timeout=0.25) == "A"
    assert [r["timeout"] for r in client.sent] == [120_000, 250]
    other = ScriptClient(lambda r: {"confirmed": True})
    other.ui = RpcDialogUI(other.send, default_timeout=30)
    assert await other.ui.confirm("Sure?", "Really?") is True
    assert other.sent[0]["timeout"] == 30_000


async def test_descriptions_are_shown_in_the_option_and_the_bare_option_comes_back() -> None:
    client = ScriptClient(lambda r: {"value": r["options"][0]}, lambda r: {"value": "Beta"})
    options, notes = ["Stable", "Beta", "Nightly"], ["every user gets it", None, ""]
    assert await client.ui.select("Channel?", options, descriptions=notes) == "Stable"
    assert await client.ui.select("Channel?", options, descriptions=notes) == "Beta"
    assert client.sent[0]["options"] == ["Stable — every user gets it", "Beta", "Nightly"]


async def test_multiple_choice_is_a_sequence_of_selects() -> None:
    assert not hasattr(RpcDialogUI, "multi_select")  # pi has no multi_select dialog

    def pick(label: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
        return lambda r: {"value": next(o for o in r["options"] if o.endswith(label))}

    client = ScriptClient(pick("Apple"), pick("Plum"), pick("Done"))
    ctx = StaticToolContext(ui=client.ui, mode="rpc")
    result = await ask_user_question(
        "Fruits?",
        options=["Apple", "Pear", "Plum"],
        selection="multiple",
        allow_other=False,
        tool_call_id="t",
        ctx=ctx,
        env={},
    )
    assert result.text == 'Answers: ["Apple","Plum"]'
    assert [r["method"] for r in client.sent] == ["select"] * 3
    assert client.sent[2]["options"] == ["[x] Apple", "[ ] Pear", "[x] Plum", "Done"]


WRONG_SHAPES = [
    ("select", {"confirmed": True}, "a select dialog needs 'value'; the response has confirmed"),
    ("select", {"value": 3}, "'value' must be a string, got int"),
    ("select", {"value": "Purple"}, "'value' 'Purple' is not one of the options"),
    ("select", {"value": "A", "cancelled": "yes"}, "'cancelled' must be true, got 'yes'"),
    ("confirm", {"value": "yes"}, "a confirm dialog needs 'confirmed'; the response has value"),
    ("confirm", {"confirmed": 1}, "'confirmed' must be true or false, got int"),
    ("input", {}, "a input dialog needs 'value'; the response has no other field"),
    ("editor", {"value": None}, "'value' must be a string, got NoneType"),
]


@pytest.mark.parametrize(("method", "response", "error"), WRONG_SHAPES)
async def test_a_response_of_the_wrong_shape_is_refused_and_the_dialog_stays_open(
    method: str, response: dict[str, Any], error: str
) -> None:
    sent: list[dict[str, Any]] = []

    async def send(record: dict[str, Any]) -> None:
        sent.append(record)

    ui = RpcDialogUI(send)
    ask = {
        "select": lambda: ui.select("Pick", ["A", "B"]),
        "confirm": lambda: ui.confirm("Sure?", "Really?"),
        "input": lambda: ui.input("Name?"),
        "editor": lambda: ui.editor("Text?"),
    }[method]
    good = {"confirmed": False} if method == "confirm" else {"value": "A"}
    answers: list[object] = []
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: _keep(answers, ask()))
            await anyio.wait_all_tasks_blocked()
            ident = sent[0]["id"]
            notice = ui.deliver({"type": "extension_ui_response", "id": ident, **response})
            assert notice is not None
            assert notice["type"] == "extension_ui_response_invalid"
            assert notice["id"] == ident and notice["method"] == method
            assert notice["error"] == error
            assert "cancelled" in notice["expected"]
            assert ui.open_dialogs == [ident]  # still open: a mistake is not a decline
            assert ui.deliver({"type": "extension_ui_response", "id": ident, **good}) is None
    assert answers == [good.get("value", False)]
    assert [r["method"] for r in sent] == [method]  # no cancel notice: it was answered


async def _keep(into: list[object], call: Awaitable[object]) -> None:
    into.append(await call)
