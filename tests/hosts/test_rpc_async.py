"""``pi-recipes rpc --async-questions``: the agent's ``ask_user_async`` and ``await_answers``
calls go to the client as ``extension_ui_request`` records (how a graph's pi backend serves
them); the client's ``value`` is what the tool returns, an ``error`` refuses the call."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hosts.rpc_client import of_type, rpc_server

pytestmark = pytest.mark.anyio

RECIPE = str(Path(__file__).with_name("rpc_async_recipe.py"))


async def test_the_async_tools_are_served_by_the_client() -> None:
    async with rpc_server(RECIPE, "--async-questions",
                          "--append-system-prompt", "Be brief.") as client:  # fmt: skip
        state = await client.request({"type": "get_state"})
        assert state["success"] is True
        response = await client.request({"type": "prompt", "message": "Go."})
        assert response["success"] is True
        [ask] = [r for r in await client.until(of_type("extension_ui_request"))
                 if r["type"] == "extension_ui_request"]  # fmt: skip
        assert ask["method"] == "ask_user_async"
        assert (ask["question"], ask["options"], ask["toolCallId"]) == (
            "Tone?", ["friendly", "formal"], "q1"
        )  # fmt: skip
        reply = {"type": "extension_ui_response", "id": ask["id"], "value": "r_x_async_1"}
        await client.send(reply)
        wait = (await client.until(of_type("extension_ui_request")))[-1]
        assert (wait["method"], wait["toolCallId"]) == ("await_answers", "w1")
        refusal = "await_answers cannot run inside a fan-out branch"
        await client.send({"type": "extension_ui_response", "id": wait["id"], "error": refusal})
        end = (await client.until(of_type("agent_end")))[-1]
        said = end["messages"][-1]["content"][0]["text"]
        assert said == (
            "Question posted as r_x_async_1; keep working. The answer arrives as a message "
            '"[Answer to question r_x_async_1] ..." when the operator replies. Call '
            "await_answers only when you cannot proceed without it. | "
            "await_answers cannot run inside a fan-out branch"
        )
        await client.until(of_type("agent_settled"))


async def test_a_call_the_client_dismisses_is_said_to_be_dismissed_not_timed_out() -> None:
    async with rpc_server(RECIPE, "--async-questions") as client:
        await client.request({"type": "prompt", "message": "Go."})
        ask = (await client.until(of_type("extension_ui_request")))[-1]
        await client.send({"type": "extension_ui_response", "id": ask["id"], "cancelled": True})
        wait = (await client.until(of_type("extension_ui_request")))[-1]
        assert wait["method"] == "await_answers"
        await client.send({"type": "extension_ui_response", "id": wait["id"], "cancelled": True})
        end = (await client.until(of_type("agent_end")))[-1]
        said = end["messages"][-1]["content"][0]["text"]
        assert said == (
            "the host dismissed the ask_user_async call | the host dismissed the await_answers call"
        )
        await client.until(of_type("agent_settled"))


async def test_without_the_flag_the_agent_has_no_async_tools() -> None:
    async with rpc_server(RECIPE) as client:
        await client.request({"type": "prompt", "message": "Go."})
        records = await client.until(of_type("agent_settled"))
        ends = [r for r in records if r["type"] == "tool_execution_end"]
        assert ends[0]["isError"] and "not found" in ends[0]["result"]["content"][0]["text"]
