"""The official AG-UI client (npm ``@ag-ui/client`` 1.0, pinned in ``tests/hosts/agui_client``)
drives ``POST /agui`` through a whole conversation: ``HttpAgent.runAgent``, its
``pendingInterrupts`` after each paused run, ``buildResumeArray`` for the answers, and a refused
resume. The client verifies the event sequence itself (it throws on one it does not accept).

``.ci/run`` installs the package with ``npm ci``; without Node or the package the test skips,
saying so.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.hosts.web.server import RELEASE, Server, serving

CLIENT = Path(__file__).resolve().parents[1] / "agui_client"
PACKAGE = CLIENT / "node_modules" / "@ag-ui" / "client" / "package.json"
NODE = shutil.which("node")

pytestmark = [
    pytest.mark.skipif(NODE is None, reason="node is not installed: the AG-UI client needs it"),
    pytest.mark.skipif(
        not PACKAGE.exists(),
        reason="the AG-UI client is not installed: npm ci --prefix tests/hosts/agui_client",
    ),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(tmp_path_factory.mktemp("agui-client"), recipe=RELEASE) as running:
        yield running


@pytest.fixture(scope="module")
def seen(server: Server) -> dict[str, Any]:
    """What ``drive.mjs`` saw (one conversation, run once for this module's tests)."""
    assert NODE is not None
    env = {**os.environ, "AGUI_URL": f"{server.url}agui", "AGUI_TOKEN": server.token}
    done = subprocess.run(
        [NODE, str(CLIENT / "drive.mjs")], env=env, capture_output=True, text=True, timeout=90
    )
    lines = done.stdout.strip().splitlines()
    assert lines, f"drive.mjs printed nothing; stderr:\n{done.stderr}"
    result: dict[str, Any] = json.loads(lines[-1])
    assert "error" not in result, f"{result['error']}\nstderr:\n{done.stderr}"
    assert done.returncode == 0
    return result


def test_the_pinned_client_is_1_0() -> None:
    assert json.loads(PACKAGE.read_text())["version"] == "1.0.0"


def test_the_first_run_pauses_with_its_interrupt(seen: dict[str, Any]) -> None:
    first = seen["first"]
    assert first["error"] is None and first["runError"] is None
    assert first["types"][0] == "RUN_STARTED" and first["types"][-1] == "RUN_FINISHED"
    assert "TEXT_MESSAGE_CONTENT" in first["types"] and "TOOL_CALL_START" in first["types"]
    assert first["started"] == {"runId": first["sentRunId"], "parentRunId": None}
    assert first["finished"] == {"runId": first["sentRunId"], "outcome": "interrupt"}
    (pending,) = first["pending"]
    assert (pending["id"], pending["reason"]) == ("int-call_channel", "input_required")
    assert pending["message"] == "Where should v7.0.0 be published?"
    assert pending["responseSchema"]["properties"]["answer"]["examples"] == [
        "stable", "beta", "nightly"
    ]  # fmt: skip


def test_a_refused_resume_reaches_the_client_as_an_http_error(seen: dict[str, Any]) -> None:
    refused = seen["refused"]
    assert refused["types"] == [] and refused["error"].startswith("HTTP 422")
    assert "42 is not of type 'string'" in refused["error"]
    assert [p["id"] for p in refused["pending"]] == ["int-call_channel"], "still pending"


def test_each_resume_is_a_new_run_naming_its_parent(seen: dict[str, Any]) -> None:
    first, second, third = seen["first"], seen["second"], seen["third"]
    assert second["started"] == {"runId": second["sentRunId"], "parentRunId": first["sentRunId"]}
    assert second["types"][1] == "TOOL_CALL_RESULT"
    assert second["finished"]["outcome"] == "interrupt"
    assert [p["id"] for p in second["pending"]] == ["int-call_publish"]
    assert third["started"] == {"runId": third["sentRunId"], "parentRunId": second["sentRunId"]}
    assert third["finished"] == {"runId": third["sentRunId"], "outcome": "success"}
    assert third["result"] == "Published v7.0.0. Approved. Feedback: ship"
    assert third["pending"] == []


def test_the_clients_transcript(seen: dict[str, Any]) -> None:
    roles = [m["role"] for m in seen["messages"]]
    assert roles[0] == "user" and "tool" in roles and roles[-1] == "assistant"
    assert seen["messages"][-1]["content"] == "Published v7.0.0. Approved. Feedback: ship"
