"""``pi-recipes mcp``: its arguments, and what it says when it cannot serve."""

from __future__ import annotations

import argparse
import json
import re
import signal
import socket
import subprocess
from pathlib import Path

import pytest
from pydantic import BaseModel

from hosts.mcp import build_parser, parse_address, served_tools
from interactions import UsageError
from recipes import NoParameters, OnUpdate, RecipeAPI, ToolContext, build_recipe, load_recipe
from tests.hosts.cli_helpers import PI_RECIPES, RELEASE, ROOT, cli_env, pi
from tests.hosts.mcp_client import RECIPE


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("127.0.0.1:8765", ("127.0.0.1", 8765)),
        ("localhost:0", ("localhost", 0)),
        ("[::1]:9000", ("::1", 9000)),
        ("0.0.0.0:80", ("0.0.0.0", 80)),
    ],
)
def test_addresses_parse(text: str, address: tuple[str, int]) -> None:
    assert parse_address(text) == address


@pytest.mark.parametrize("text", ["8765", ":8765", "host:", "host:port", "host:70000", "h:-1"])
def test_bad_addresses_are_refused(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="is not HOST:PORT"):
        parse_address(text)


class _Note(BaseModel):
    text: str


def _recipe(api: RecipeAPI) -> None:
    async def note(tool_call_id: str, params: _Note, ctx: ToolContext, on_update: OnUpdate) -> str:
        return params.text

    async def other(
        tool_call_id: str, params: NoParameters, ctx: ToolContext, on_update: OnUpdate
    ) -> str:
        return "other"

    api.register_tool("note", description="Note.", execute=note, parameters=_Note)
    api.register_tool("other", description="Other.", execute=other)
    api.register_agent("noter", "Take notes.", tools=["note"])


def test_an_agent_serves_only_its_tools() -> None:
    recipe = build_recipe(_recipe, name="notes")
    assert [t.name for t in served_tools(recipe)] == ["note", "other"]
    assert [t.name for t in served_tools(recipe, "noter")] == ["note"]
    with pytest.raises(UsageError, match="no agent 'nobody'"):
        served_tools(recipe, "nobody")
    with pytest.raises(UsageError, match="registers no tool"):
        served_tools(build_recipe(lambda api: None, name="empty"))


def test_an_unknown_recipe_exits_2_and_writes_nothing_to_stdout(tmp_path: Path) -> None:
    done = pi("mcp", str(tmp_path / "missing.py"), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("pi-recipes mcp: error: ")
    assert "no such recipe file" in done.stderr


def test_an_unknown_agent_exits_2(tmp_path: Path) -> None:
    done = pi("mcp", RELEASE, "--agent", "nobody", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert "no agent 'nobody'" in done.stderr


def test_a_bad_address_exits_2(tmp_path: Path) -> None:
    done = pi("mcp", RECIPE, "--http", "nowhere", cwd=tmp_path)
    assert done.returncode == 2
    assert "'nowhere' is not HOST:PORT" in done.stderr


def test_an_address_in_use_exits_2(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        done = pi("mcp", RECIPE, "--http", f"127.0.0.1:{port}", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(f"pi-recipes mcp: error: cannot listen on 127.0.0.1:{port}")


def test_stdio_ends_with_its_input(tmp_path: Path) -> None:
    done = pi("mcp", RELEASE, cwd=tmp_path, input="")
    assert (done.returncode, done.stdout) == (0, "")
    assert "serving release (choose_channel, publish_release) on stdio" in done.stderr


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


@pytest.mark.parametrize("busy", [False, True])
def test_ctrl_c_stops_a_stdio_server_waiting_for_its_client(tmp_path: Path, busy: bool) -> None:
    """Idle, or with a tool waiting on the client's answer to a form: before, the server waited
    for its input in a thread a cancel cannot stop, and a Ctrl-C never ended it."""
    with subprocess.Popen(
        [PI_RECIPES, "mcp", RECIPE], cwd=tmp_path, env=cli_env(), stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    ) as server:  # fmt: skip
        try:
            assert server.stdin is not None and server.stdout is not None
            capabilities = {"elicitation": {}} if busy else {}
            params = {**INITIALIZE["params"], "capabilities": capabilities}
            messages = [{**INITIALIZE, "params": params}, INITIALIZED]
            if busy:  # the form goes out; the client never answers it
                call = {"name": "free_text", "arguments": {}}
                messages.append({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call})
            server.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
            server.stdin.flush()
            assert json.loads(server.stdout.readline())["id"] == 1
            if busy:
                assert json.loads(server.stdout.readline())["method"] == "elicitation/create"
            server.send_signal(signal.SIGINT)
            assert server.wait(timeout=10) == 130
        finally:
            server.kill()


NOISY = """\
print("loading the recipe")

from recipes import NoParameters, OnUpdate, RecipeAPI, ToolContext


def recipe(api: RecipeAPI) -> None:
    print("registering its tools")

    @api.tool
    async def hello(
        tool_call_id: str, params: NoParameters, ctx: ToolContext, on_update: OnUpdate
    ) -> str:
        \"\"\"Say hello.\"\"\"
        return "hello"
"""


def test_what_a_recipe_prints_while_it_loads_stays_off_the_protocol(tmp_path: Path) -> None:
    """Before, it went to standard output ahead of the first message: a line that is not
    JSON-RPC, which a client reads as a broken stream."""
    (tmp_path / "noisy.py").write_text(NOISY, encoding="utf-8")
    done = pi("mcp", str(tmp_path / "noisy.py"), cwd=tmp_path, input="")
    assert (done.returncode, done.stdout) == (0, ""), done.stderr
    assert "loading the recipe\nregistering its tools\n" in done.stderr


def test_the_readme_commands_and_client_configuration(tmp_path: Path) -> None:
    section = (ROOT / "docs" / "hosts" / "mcp.md").read_text(encoding="utf-8")
    (commands,) = re.findall(r"```sh\n(.*?)```", section, flags=re.S)
    parser = build_parser()
    for line in commands.splitlines():
        argv = line.split("#")[0].split()
        if argv[0].endswith("pi-recipes"):
            assert argv[1] == "mcp"
            args = parser.parse_args(argv[2:])
            assert load_recipe(str(ROOT / args.recipe)).name == "release"
    (config,) = re.findall(r"```json\n(.*?)```", section, flags=re.S)
    server = json.loads(config)["mcpServers"]["release"]
    assert Path(server["command"]).name == "pi-recipes"
    assert server["args"][0] == "mcp" and server["args"][1].endswith("examples/release.py")
