"""The RPC mode host, driven as a front end would: a real ``python -m hosts.rpc`` subprocess
over pipes. Every wait is bounded by ``anyio.fail_after``; nothing sleeps to synchronize."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

import hosts.rpc
from hosts.rpc import OUTPUT_LOST
from hosts.rpc._commands import COMMAND_TYPES, CommandError, parse_command
from hosts.rpc._main import STOP_BOUND
from tests.hosts.rpc_client import (
    READ_TIMEOUT,
    RELEASE,
    ROOT,
    TEST_RECIPE,
    Record,
    RpcClient,
    is_response,
    of_type,
    rpc_process,
    rpc_server,
    strict_json,
)

pytestmark = pytest.mark.anyio

INTERACTION_ABORTED = "Aborted: the turn was aborted during a dialog"


def dialog(method: str = "select") -> Callable[[Record], bool]:
    return of_type("extension_ui_request", method=method)


def results(records: list[Record]) -> dict[str, str]:
    """Tool name -> the text of its result, from ``tool_execution_end`` records."""
    return {
        r["toolName"]: r["result"]["content"][0]["text"]
        for r in records
        if r["type"] == "tool_execution_end"
    }


def text(message: Record) -> str:
    """The text of a pi-shaped message."""
    return "".join(c["text"] for c in message["content"] if c["type"] == "text")


SETTLED = of_type("agent_settled")


async def start_dialog(client: RpcClient, message: str) -> Record:
    """Prompt ``message`` and return the dialog request it leads to."""
    response = await client.request({"type": "prompt", "message": message})
    assert response["success"] is True
    return (await client.until(of_type("extension_ui_request")))[-1]


async def test_release_conversation_answered_through_dialogs() -> None:
    async with rpc_server(RELEASE) as client:
        response = await client.request({"type": "prompt", "message": "Release v1.4.0"})
        assert response == {
            "type": "response",
            "command": "prompt",
            "success": True,
            "id": response["id"],
            "data": {"disposition": "started"},
        }
        question = (await client.until(dialog()))[-1]
        assert "Beta — opted-in testers" in question["options"]  # the label, its description
        assert question["timeout"] == 120_000  # the RPC default, whole milliseconds
        picked = "Beta — opted-in testers"  # what a pi client sends back: the option shown
        await client.send({"type": "extension_ui_response", "id": question["id"], "value": picked})

        approval = (await client.until(dialog()))[-1]
        assert approval["options"][0] == "Approve" and "beta" in approval["title"]
        await client.send(
            {"type": "extension_ui_response", "id": approval["id"], "value": "Approve"}
        )
        await client.until(SETTLED)

    log = client.log
    assert log[-1] == {"type": "agent_settled", "aborted": False}
    end = log[-2]
    assert end["type"] == "agent_end" and end["status"] == "idle" and end["willRetry"] is False
    assert end["messages"][0] == {
        "role": "user",
        "content": [{"type": "text", "text": "Release v1.4.0"}],
        "timestamp": end["messages"][0]["timestamp"],
    }
    assert results(log) == {"choose_channel": "Answer: beta", "publish_release": "Approved."}
    last = [r for r in log if r["type"] == "message_end"][-1]["message"]
    assert last["role"] == "assistant" and text(last) == "Published v1.4.0. Approved."
    assert last["stopReason"] == "stop" and end["messages"][-1] == last
    starts = [r for r in log if r["type"] == "tool_execution_start"]
    assert starts[0]["toolCallId"] == "call_channel" and starts[0]["args"] == {"version": "v1.4.0"}
    # pi clients assemble the text from assistantMessageEvent text deltas
    turn = log[[i for i, r in enumerate(log) if r["type"] == "turn_start"][-1] :]
    deltas = [
        r["assistantMessageEvent"]["delta"]
        for r in turn
        if r["type"] == "message_update" and r["assistantMessageEvent"]["type"] == "text_delta"
    ]
    assert "".join(deltas) == "Published v1.4.0. Approved."
    assert [r["assistantMessageEvent"]["type"] for r in turn if r["type"] == "message_update"] == [
        "text_start",
        "text_delta",
        "text_delta",
        "text_delta",
        "text_end",
    ]
    assert all("id" not in r for r in log if r["type"] not in ("response", "extension_ui_request"))


async def test_dialog_timeout_sends_a_cancel_notice_and_declines() -> None:
    async with rpc_server(TEST_RECIPE) as client:
        question = await start_dialog(client, "quick")
        assert 0 < question["timeout"] <= 200  # what is left of the walk's 0.2 s, in ms
        seen = await client.until(SETTLED)
    cancels = [r for r in seen if r.get("method") == "cancel"]
    assert cancels == [
        {
            "type": "extension_ui_request",
            "id": cancels[0]["id"],
            "method": "cancel",
            "targetId": question["id"],
        }
    ]
    assert cancels[0]["id"] != question["id"]
    declined = "User declined to answer. Proceed with your best judgment."
    assert results(seen) == {"quick_question": declined}
    assert seen[-2]["type"] == "agent_end" and seen[-2]["status"] == "idle"


async def test_a_late_response_to_a_closed_dialog_is_ignored() -> None:
    async with rpc_server(TEST_RECIPE) as client:
        question = await start_dialog(client, "quick")
        await client.until(of_type("extension_ui_request", method="cancel"))
        await client.send({"type": "extension_ui_response", "id": question["id"], "value": "Red"})
        await client.send({"type": "extension_ui_response", "id": "never-asked", "value": "x"})
        for ident in (question["id"], "never-asked"):
            notice = (await client.until(of_type("extension_ui_response_ignored")))[-1]
            assert notice == {
                "type": "extension_ui_response_ignored",
                "id": ident,
                "reason": "unknown or closed dialog",
            }
        state = await client.request({"type": "get_state"})
        assert state["success"] is True and state["data"]["pendingDialogs"] == []


HOSTILE_LINES = [
    (b"{not json\n", "not JSON"),
    (b"[1, 2]\n", "expected a JSON object"),
    (b'{"message": "no type"}\n', "expected a string field 'type'"),
    (b"\xff\xfe\n", "not UTF-8"),
    (b'{"type": "get_state", "id": NaN}\n', "NaN is not JSON"),
    (b'{"type": "get_state", "id": ' + b"7" * 5000 + b"}\n", "integer of 5000 digits"),
    (b'{"type": "get_state", "id": "\\ud800"}\n', "lone surrogate"),
    (b'{"type": "get_state", "id": ' + b"[" * 50_000 + b"]" * 50_000 + b"}\n", "nested deeper"),
]


async def test_bad_lines_get_error_responses_and_the_server_keeps_serving() -> None:
    async with rpc_server(TEST_RECIPE) as client:
        for line, reason in HOSTILE_LINES:
            await client.send_raw(b"\n" + line)  # the blank line before is ignored
            response = await client.read()
            assert response["command"] == "parse" and response["success"] is False
            assert reason in response["error"]
            assert "id" not in response
        assert all(strict_json(line) for line in client.raw)  # nothing echoed NaN or a surrogate
        refused = await client.request({"type": "launch_rockets"})
        assert refused["success"] is False and refused["command"] == "launch_rockets"
        assert "unknown command type 'launch_rockets'" in refused["error"]
        huge = await client.request({"type": "x" * 1_000_000})  # echoed cut, not twice 1 MB
        assert huge["command"] == "x" * 100 + "…"
        assert f"unknown command type '{'x' * 100}…'" in huge["error"]
        assert len(huge["error"]) < 1000
        invalid = await client.request({"type": "prompt", "message": 42})
        assert invalid["success"] is False and "message" in invalid["error"]
        state = await client.request({"type": "get_state"})
        assert state["success"] is True and state["data"]["status"] == "idle"


async def test_abort_during_a_dialog_cancels_it_and_a_new_prompt_works() -> None:
    async with rpc_server(TEST_RECIPE) as client:
        question = await start_dialog(client, "slow")
        state = await client.request({"type": "get_state"})
        assert state["data"]["isStreaming"] is True
        assert state["data"]["pendingDialogs"] == [question["id"]]

        response = await client.request({"type": "abort"})
        assert response["success"] is True
        seen = client.log[client.log.index(state) + 1 :]
        kinds = [r["type"] for r in seen]
        assert kinds.index("agent_end") < kinds.index("agent_settled") < kinds.index("response")
        assert next(r for r in seen if r["type"] == "agent_settled")["aborted"] is True
        assert "turn_start" not in kinds  # the aborted run asks the model nothing more
        assert of_type("extension_ui_request", method="cancel", targetId=question["id"])(
            next(r for r in seen if r.get("method") == "cancel")
        )
        end = next(r for r in seen if r["type"] == "tool_execution_end")
        assert end["isError"] is True and end["result"]["details"] == {"error": "aborted"}
        assert end["result"]["content"][0]["text"] == INTERACTION_ABORTED
        assert next(r for r in seen if r["type"] == "agent_end")["status"] == "aborted"

        await client.request({"type": "prompt", "message": "hello again"})
        assert (await client.until(SETTLED))[-1]["aborted"] is False
        reply = [r for r in client.log if r["type"] == "message_end"][-1]["message"]
        assert text(reply) == "echo: hello again"


async def test_u2028_inside_a_prompt_arrives_intact() -> None:
    sent = "line\u2028separator\u2029paragraph\u0085next"
    async with rpc_server(TEST_RECIPE) as client:
        await client.send({"type": "prompt", "message": sent})  # raw, not \u-escaped
        await client.until(SETTLED)
        messages = (await client.request({"type": "get_messages"}))["data"]["messages"]
    assert messages[0]["content"] == [{"type": "text", "text": sent}]
    assert text(messages[1]) == f"echo: {sent}"
    assert all("\u2028".encode() not in line for line in client.raw)  # escaped on the way out


async def test_get_state_and_get_messages_shapes() -> None:
    async with rpc_server(TEST_RECIPE) as client:
        state = await client.request({"type": "get_state"})
        assert state["command"] == "get_state" and state["success"] is True
        data = state["data"]
        assert isinstance(data.pop("sessionId"), str)
        assert data == {  # pi 1.6's RpcSessionState, then ours
            "model": {
                "id": "rpc-test",
                "name": "scripted:rpc-test",
                "provider": "scripted",
                "api": "scripted",
            },
            "thinkingLevel": "off",
            "isStreaming": False,
            "isCompacting": False,
            "steeringMode": "all",
            "followUpMode": "all",
            "autoCompactionEnabled": False,
            "messageCount": 0,
            "pendingMessageCount": 0,
            "recipe": "rpc_recipe",
            "agent": "tester",
            "status": "idle",
            "pendingDialogs": [],
        }
        assert (await client.request({"type": "get_messages"}))["data"] == {"messages": []}

        await client.request({"type": "prompt", "message": "hi"})
        ended = (await client.until(of_type("agent_end")))[-1]
        messages = (await client.request({"type": "get_messages"}))["data"]["messages"]
        assert [m["role"] for m in messages] == ["user", "assistant"]
        assert messages == ended["messages"]  # same shapes, same timestamps
        assert messages[1]["content"] == [{"type": "text", "text": "echo: hi"}]
        assert messages[1]["provider"] == "scripted" and messages[1]["model"] == "rpc-test"
        assert isinstance(messages[1]["timestamp"], int)
        assert (await client.request({"type": "get_state"}))["data"]["messageCount"] == 2


async def test_steer_and_follow_up_while_busy() -> None:
    async with rpc_server(TEST_RECIPE) as client:
        question = await start_dialog(client, "slow")
        refused = await client.request({"type": "prompt", "message": "not now"})
        assert refused["success"] is False and "streamingBehavior" in refused["error"]
        for command in (
            {"type": "prompt", "message": "first steer", "streamingBehavior": "steer"},
            {"type": "steer", "message": "second steer"},
            {"type": "prompt", "message": "later", "streamingBehavior": "followUp"},
        ):
            response = await client.request(command)
            assert response["success"] is True
            assert response["data"] == {"disposition": "queued"}
        state = await client.request({"type": "get_state"})
        assert state["data"]["pendingMessageCount"] == 3
        await client.send({"type": "extension_ui_response", "id": question["id"], "value": "Pear"})
        await client.until(SETTLED)
        messages = (await client.request({"type": "get_messages"}))["data"]["messages"]
    queues = [(r["steering"], r["followUp"]) for r in client.log if r["type"] == "queue_update"]
    assert queues == [
        (["first steer"], []),
        (["first steer", "second steer"], []),
        (["first steer", "second steer"], ["later"]),
        (["second steer"], ["later"]),  # each delivered message leaves the queue
        ([], ["later"]),
        ([], []),
    ]
    assert [text(m) for m in messages] == [
        "slow",
        "",
        "Answer: Pear",
        "first steer",
        "second steer",
        "echo: second steer",
        "later",
        "echo: later",
    ]


async def test_end_of_input_aborts_a_running_prompt_and_exits_cleanly() -> None:
    async with rpc_server(TEST_RECIPE) as client:
        question = await start_dialog(client, "slow")
        await client.close_input()
        rest = await client.rest()
    cancel = next(r for r in rest if r.get("method") == "cancel")
    assert cancel["targetId"] == question["id"]
    assert rest[-2]["type"] == "agent_end" and rest[-2]["status"] == "aborted"
    assert rest[-1] == {"type": "agent_settled", "aborted": True}


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
async def test_a_signal_aborts_the_run_cancels_the_dialog_and_exits_as_pi_does(
    signum: signal.Signals, code: int
) -> None:
    async with rpc_process(TEST_RECIPE) as client:
        question = await start_dialog(client, "slow")
        client.process.send_signal(signum)
        rest = await client.rest()
        with anyio.fail_after(10):
            assert await client.process.wait() == code
    cancel = next(r for r in rest if r.get("method") == "cancel")
    assert cancel["targetId"] == question["id"]
    end = next(r for r in rest if r["type"] == "agent_end")
    assert end["status"] == "aborted" and "SIG" in end["error"]
    assert rest[-1] == {"type": "agent_settled", "aborted": True}


@pytest.mark.parametrize("signals", [1, 2])
async def test_a_tool_deaf_to_the_abort_cannot_keep_the_host_from_exiting(signals: int) -> None:
    """A tool blocking a worker thread ignores the abort a signal starts. Before, the host
    then never exited, a second signal included; now a second signal exits at once, and a
    single one once the stop has taken :data:`STOP_BOUND` seconds, with the signal's code."""
    async with rpc_process(TEST_RECIPE) as client:
        response = await client.request({"type": "prompt", "message": "stubborn"})
        assert response["success"] is True
        await client.until(of_type("tool_execution_update"))
        started = time.monotonic()
        for _ in range(signals):
            client.process.send_signal(signal.SIGTERM)
            await anyio.sleep(0.2)
        with anyio.fail_after(STOP_BOUND + 10):
            assert await client.process.wait() == 143
        took = time.monotonic() - started
    assert took < STOP_BOUND if signals == 2 else took >= STOP_BOUND


async def test_a_tool_deaf_to_the_abort_cannot_keep_the_host_from_exiting_when_input_ends() -> None:
    """The client closed the host's input while a tool blocked a worker thread. Before, the
    host said it stopped anyway, then stayed until the thread ended (a minute here, for ever
    for a tool that never returns); now it exits once the stop has taken :data:`STOP_BOUND`
    seconds, with the input's code, saying why."""
    async with rpc_process(TEST_RECIPE) as client:
        response = await client.request({"type": "prompt", "message": "stubborn"})
        assert response["success"] is True
        await client.until(of_type("tool_execution_update"))
        started = time.monotonic()
        await client.close_input()
        with anyio.fail_after(STOP_BOUND + 10):
            assert await client.process.wait() == 0
        took = time.monotonic() - started
    assert STOP_BOUND <= took < STOP_BOUND + 10


async def test_a_client_that_closes_the_hosts_output_ends_the_session_with_exit_1() -> None:
    """Before, the host stopped when its records could no longer be written and exited 0, as
    if its input had ended cleanly: a supervisor read a lost session as a finished one."""
    read_end, write_end = os.pipe()
    command = [sys.executable, "-m", "hosts.rpc", TEST_RECIPE]
    process = await anyio.open_process(
        command, cwd=ROOT, stdin=subprocess.PIPE, stdout=write_end, stderr=subprocess.PIPE
    )
    os.close(write_end)
    async with process:
        assert process.stdin is not None and process.stderr is not None
        try:
            await process.stdin.send(b'{"type": "get_state", "id": "1"}\n')
            with anyio.fail_after(10):  # the first record written: the host is serving
                await anyio.wait_readable(read_end)
            os.close(read_end)
            await process.stdin.send(b'{"type": "get_state", "id": "2"}\n')
            with anyio.fail_after(10):
                assert await process.wait() == OUTPUT_LOST == 1
            stderr = b"".join([chunk async for chunk in process.stderr])
            assert b"the client's output is gone" in stderr
        finally:
            if process.returncode is None:
                process.kill()


async def test_a_command_a_tool_starts_reads_nothing_of_the_clients_input() -> None:
    """``cat`` inherits the host's standard input: it reads the null device, not the client's
    next commands, which the host still gets."""
    async with rpc_server(TEST_RECIPE) as client:
        assert (await client.request({"type": "prompt", "message": "cat"}))["success"]
        await client.send({"type": "get_state", "id": "after"})
        seen = await client.until(of_type("agent_settled"))
    [ended] = [r for r in seen if r["type"] == "tool_execution_end"]
    assert ended["result"]["content"] == [{"type": "text", "text": "cat read b''"}]
    [state] = [r for r in seen if is_response(r, "after")]
    assert state["success"] is True


async def test_a_failed_runs_log_line_scrubs_the_key_its_error_quotes() -> None:
    """A provider's error quoting the API key reached the client scrubbed (``agent_end``) but
    was logged whole on standard error, which front ends keep in their logs."""
    key = "sk-live-0123456789abcdefXYZ"
    process = await anyio.open_process(
        [sys.executable, "-m", "hosts.rpc", TEST_RECIPE],
        cwd=ROOT,
        env={**os.environ, "OPENAI_API_KEY": key},
    )
    async with process:
        assert process.stdin is not None and process.stderr is not None
        await process.stdin.send(b'{"type": "prompt", "message": "leak"}\n')
        await process.stdin.aclose()
        with anyio.fail_after(READ_TIMEOUT):
            logged = b"".join([chunk async for chunk in process.stderr]).decode()
            assert await process.wait() == 0
    assert "the run failed: RuntimeError: invalid api key '***'" in logged
    assert key not in logged


async def test_an_abort_of_a_paused_run_ends_it_and_settles_it() -> None:
    """A tool paused the run (RPC mode cannot resume it). An abort ended it with an
    ``agent_end`` but no ``agent_settled``, so a client waiting for the session to settle
    waited for ever; now the run ends and settles, then the abort's response comes."""
    async with rpc_server(TEST_RECIPE) as client:
        assert (await client.request({"type": "prompt", "message": "pause"}))["success"]
        paused = await client.until(of_type("agent_settled"))
        assert any(of_type("agent_end", status="paused")(r) for r in paused)
        await client.send({"type": "abort", "id": "abort-1"})
        after = await client.until(lambda r: is_response(r, "abort-1"))
        assert [r["type"] for r in after[-3:]] == ["agent_end", "agent_settled", "response"]
        assert after[-3]["status"] == "aborted"
        assert after[-2] == {"type": "agent_settled", "aborted": True}
        assert after[-1]["success"] is True
        again = await client.request({"type": "prompt", "message": "hello"})
        assert again["success"] is True
        assert (await client.until(of_type("agent_settled")))[-1]["aborted"] is False


async def test_a_dialog_response_of_the_wrong_shape_gets_an_error_record_and_stays_open() -> None:
    async with rpc_server(TEST_RECIPE) as client:
        question = await start_dialog(client, "slow")
        ident = question["id"]
        await client.send({"type": "extension_ui_response", "id": ident, "confirmed": True})
        notice = (await client.until(of_type("extension_ui_response_invalid")))[-1]
        assert notice == {
            "type": "extension_ui_response_invalid",
            "id": ident,
            "method": "select",
            "error": "a select dialog needs 'value'; the response has confirmed",
            "expected": '{"value": <one of the options>} or {"cancelled": true}',
        }
        await client.send({"type": "extension_ui_response", "id": ident, "value": "Kiwi"})
        notice = (await client.until(of_type("extension_ui_response_invalid")))[-1]
        assert notice["error"] == "'value' 'Kiwi' is not one of the options"
        state = await client.request({"type": "get_state"})
        assert state["data"]["pendingDialogs"] == [ident]
        await client.send({"type": "extension_ui_response", "id": ident, "value": "Apple"})
        seen = await client.until(SETTLED)
    assert results(seen) == {"slow_question": "Answer: Apple"}


async def test_a_result_nested_too_deep_for_json_is_written_cut_and_the_host_goes_on() -> None:
    async with rpc_server(TEST_RECIPE) as client:
        await client.request({"type": "prompt", "message": "tree"})
        seen = await client.until(SETTLED)
        messages = (await client.request({"type": "get_messages"}))["data"]["messages"]
    assert results(seen) == {"tree": "grown"}
    end = next(r for r in seen if r["type"] == "tool_execution_end")
    assert end["isError"] is False and "child" in end["result"]["details"]
    assert "nested deeper than" in json.dumps(end["result"]["details"])
    assert [m["role"] for m in messages] == ["user", "assistant", "toolResult", "assistant"]
    assert text(messages[-1]) == "tool said: grown"


async def test_a_dialog_without_a_time_limit_is_refused_and_leaves_no_open_dialog() -> None:
    async with rpc_server(TEST_RECIPE) as client:
        await client.request({"type": "prompt", "message": "forever"})
        seen = await client.until(SETTLED)
        state = await client.request({"type": "get_state"})
    assert not any(r["type"] == "extension_ui_request" for r in seen)
    end = next(r for r in seen if r["type"] == "tool_execution_end")
    assert end["isError"] is True
    assert "timeout must be a positive, finite number" in end["result"]["content"][0]["text"]
    assert state["data"]["pendingDialogs"] == []


async def test_auto_approve_sets_the_flag_for_the_session_only() -> None:
    async with rpc_server(TEST_RECIPE, "--auto-approve") as client:
        for prompt in ("approve", "flags"):
            await client.request({"type": "prompt", "message": prompt})
            await client.until(SETTLED)
    assert not any(r["type"] == "extension_ui_request" for r in client.log)
    assert results(client.log) == {"approve": "Approved.", "flags": "session=1 process=None"}


async def test_help_describes_the_options_and_exit_codes() -> None:
    command = os.path.join(os.path.dirname(sys.executable), "pi-recipes")
    with anyio.fail_after(20):
        done = await anyio.run_process([command, "rpc", "--help"], cwd=ROOT, check=False)
    out = done.stdout.decode()
    assert done.returncode == 0
    assert out.startswith("usage: pi-recipes rpc")
    for text_ in ("--agent", "--model PROVIDER:NAME", "--auto-approve", "143 after", "SIGTERM"):
        assert text_ in out


async def test_stray_stdout_writes_do_not_reach_the_protocol() -> None:
    async with rpc_server(TEST_RECIPE) as client:
        await client.request({"type": "prompt", "message": "noisy"})
        seen = await client.until(SETTLED)  # every line parsed as JSON
    assert results(seen) == {"noisy": "printed"}


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["no/such/recipe.py"], "no such recipe file"),
        ([TEST_RECIPE, "--agent", "nobody"], "has no agent 'nobody'"),
        ([TEST_RECIPE, "--model", "nonsense"], "expected '<provider>:<model>'"),
    ],
)
async def test_a_recipe_that_cannot_be_served_exits_2_with_a_reason(
    args: list[str], expected: str
) -> None:
    with anyio.fail_after(10):
        done = await anyio.run_process(
            [sys.executable, "-m", "hosts.rpc", *args],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    assert done.returncode == 2
    assert done.stdout == b""
    assert expected in done.stderr.decode()


def test_public_names_are_pinned() -> None:
    assert sorted(hosts.rpc.__all__) == [
        "ABORT_GRACE",
        "DEFAULT_TIMEOUT",
        "DRAIN_GRACE",
        "EXIT_ON_SIGNAL",
        "OUTPUT_LOST",
        "RpcDialogUI",
        "RpcServer",
        "build_parser",
        "configure_parser",
        "main",
        "run_parsed",
        "serve",
    ]


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


@given(
    kind=st.sampled_from([*COMMAND_TYPES, "extension_ui_response", "", "nope"]),
    fields=st.dictionaries(
        st.sampled_from(["id", "message", "streamingBehavior", "images", "extra"]),
        JSON_VALUES,
        max_size=4,
    ),
)
def test_parse_command_returns_a_command_or_a_command_error(
    kind: str, fields: dict[str, object]
) -> None:
    frame = {**fields, "type": kind}
    try:
        command = parse_command(frame)
    except CommandError as exc:
        assert str(exc)
    else:
        assert command.type == kind
