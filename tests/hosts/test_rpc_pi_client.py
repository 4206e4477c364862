"""pi's own ``RpcClient`` (npm ``@earendil-works/pi-coding-agent`` 1.6.0, pinned in
``tests/hosts/pi_client``) drives ``pi-recipes rpc`` through one session: a prompt, a select
answered, a confirm declined, a multiple choice, a steer while busy, an abort during a dialog,
``get_state``, ``get_messages`` and ``waitForIdle`` (which waits for ``agent_settled``), then
``stop()`` (SIGTERM).

The Node side is ``pi_client/drive.mjs`` (it prints what it saw as JSON); ``pi_client/shim.mjs``
is what the client spawns as pi's CLI. ``.ci/run`` installs the package with ``npm ci``; where
Node or the package is missing, the test is skipped and says so.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.hosts.rpc_client import ROOT, TEST_RECIPE

PI_CLIENT = Path(__file__).with_name("pi_client")
PACKAGE = PI_CLIENT / "node_modules" / "@earendil-works" / "pi-coding-agent" / "package.json"
NODE = shutil.which("node")
PI_RECIPES = Path(sys.executable).with_name("pi-recipes")

pytestmark = [
    pytest.mark.skipif(NODE is None, reason="node is not installed: pi's RpcClient needs it"),
    pytest.mark.skipif(
        not PACKAGE.exists(),
        reason="pi's RpcClient is not installed: npm ci --prefix tests/hosts/pi_client",
    ),
]


@pytest.fixture(scope="module")
def seen() -> dict[str, Any]:
    """What ``drive.mjs`` saw (one session, run once for this module's tests)."""
    assert NODE is not None

    async def drive() -> dict[str, Any]:
        with anyio.fail_after(90):
            done = await anyio.run_process(
                [NODE, str(PI_CLIENT / "drive.mjs")],
                cwd=ROOT,
                env={**os.environ, "PI_RECIPES": str(PI_RECIPES), "PI_RECIPE": TEST_RECIPE},
                check=False,
            )
        out = done.stdout.decode().strip().splitlines()
        assert out, f"drive.mjs printed nothing; stderr:\n{done.stderr.decode()}"
        result: dict[str, Any] = json.loads(out[-1])
        assert "error" not in result, f"{result['error']}\nstderr:\n{done.stderr.decode()}"
        assert done.returncode == 0
        return result

    return anyio.run(drive)


def test_the_pinned_client_is_pi_1_6() -> None:
    assert json.loads(PACKAGE.read_text())["version"] == "1.6.0"


def test_a_prompt_starts_and_wait_for_idle_returns_on_agent_settled(seen: dict[str, Any]) -> None:
    echo = seen["echo"]
    assert echo["disposition"] == "started"
    assert echo["types"][-2:] == ["agent_end", "agent_settled"]
    assert echo["agentEnd"] == [{"status": "idle", "willRetry": False, "messages": 2}]
    assert echo["settled"] == [{"type": "agent_settled", "aborted": False}]


def test_a_tool_s_approval_is_a_select_then_an_editor_and_may_hold_for_the_run(
    seen: dict[str, Any],
) -> None:
    choice = seen["shipChoice"]
    assert choice["method"] == "select" and choice["title"].startswith("Run ship?")
    assert choice["options"] == [
        "Approve", "Approve always", "Edit arguments", "Request changes", "Decline",
        "Decline always",
    ]  # fmt: skip
    editor = seen["shipEditor"]
    assert editor["method"] == "editor" and editor["prefill"] == '{\n  "env": "prod"\n}'
    assert seen["shipEdit"]["results"] == [
        'The approver edited the arguments before approving: {"env":"canary"}.shipped to canary'
    ]
    assert seen["shipWhere"]["options"][:2] == ["In this run", "In this conversation"]
    assert seen["shipAlways"]["results"] == [
        "The user approved its later calls in this run too.shipped to prod"
    ]
    assert seen["shipAgain"]["results"] == ["shipped to prod"]
    assert seen["shipAgain"]["dialogs"] == 0, "approved always: the next call asks nothing"


def test_a_select_answered(seen: dict[str, Any]) -> None:
    request = seen["selectRequest"]
    assert request["method"] == "select" and request["title"] == "Pick a fruit"
    assert request["options"] == ["Apple", "Pear", "Other"]
    assert isinstance(request["timeout"], int) and 119_000 <= request["timeout"] <= 120_000
    assert seen["select"]["results"] == ["Answer: Pear"]


def test_a_confirm_declined(seen: dict[str, Any]) -> None:
    assert seen["confirmRequest"]["message"] == "This ships to production."
    assert seen["confirm"]["results"] == ["confirmed: False"]


def test_a_multiple_choice_is_answered_with_selects(seen: dict[str, Any]) -> None:
    assert seen["multiSelect"]["rows"] == [
        ["[ ] Apple", "[ ] Pear", "[ ] Plum", "Done"],
        ["[x] Apple", "[ ] Pear", "[ ] Plum", "Done"],
        ["[x] Apple", "[ ] Pear", "[x] Plum", "Done"],
    ]
    assert seen["multiSelect"]["results"] == ['Answers: ["Apple","Plum"]']


def test_steer_while_busy_is_queued_and_delivered_after_the_tool(seen: dict[str, Any]) -> None:
    assert seen["steerDisposition"] == "queued"
    busy = seen["stateWhileBusy"]
    assert busy["isStreaming"] is True and busy["pendingMessageCount"] == 1
    assert len(busy["pendingDialogs"]) == 1
    texts = [m["text"] for m in seen["messages"]]
    tool = texts.index("Answer: Apple")
    assert texts[tool + 1 : tool + 3] == ["steered", "echo: steered"]


def test_abort_during_a_dialog(seen: dict[str, Any]) -> None:
    abort = seen["abort"]
    assert abort["results"] == ["Aborted: the turn was aborted during a dialog"]
    assert abort["agentEnd"][0]["status"] == "aborted"
    assert abort["settled"] == [{"type": "agent_settled", "aborted": True}]
    assert seen["abortCancel"]["method"] == "cancel"


def test_get_state_and_get_messages(seen: dict[str, Any]) -> None:
    state = seen["state"]
    assert state["isStreaming"] is False and state["pendingMessageCount"] == 0
    assert state["model"] == {
        "id": "rpc-test",
        "name": "scripted:rpc-test",
        "provider": "scripted",
        "api": "scripted",
    }
    messages = seen["messages"]
    assert state["messageCount"] == len(messages)
    assert {m["role"] for m in messages} == {"user", "assistant", "toolResult"}
    assert all(m["timestamp"] == "number" for m in messages)
    assert messages[:2] == [
        {"role": "user", "text": "hi", "timestamp": "number"},
        {"role": "assistant", "text": "echo: hi", "timestamp": "number"},
    ]


def test_stop_ends_the_host_with_143_as_pi_does(seen: dict[str, Any]) -> None:
    assert seen["exit"] == {"code": 143, "signal": None}
