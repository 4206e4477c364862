"""The RPC dialog UI against an in-memory client: requests, answers, cancel notices."""

from __future__ import annotations

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
            assert self.ui.deliver({"type": "extension_ui_response", "id": record["id"], **answer})


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
    assert client.ui.deliver(late) is False
    assert client.ui.open_dialogs == []


async def test_abort_sends_a_cancel_notice_and_raises() -> None:
    client = Client()
    ctx = StaticToolContext(ui=client.ui, mode="rpc")
    with anyio.fail_after(5), pytest.raises(ExceptionGroup) as info:
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: ask_user_approval(title="Go?", tool_call_id="t", ctx=ctx, env={}))
            await anyio.wait_all_tasks_blocked()
            tg.cancel_scope.cancel()
    assert info.group_contains(InteractionAborted)
    assert [r["method"] for r in client.sent] == ["select", "cancel"]


async def test_unknown_response_is_ignored() -> None:
    client = Client()
    assert client.ui.deliver({"type": "extension_ui_response", "id": "nope", "value": "x"}) is False
