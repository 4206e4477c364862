"""The MCP host end to end, with the MCP SDK's own ``ClientSession`` as the client: over stdio
(the server a subprocess) and over streamable HTTP (a real socket on a free port). What only
reads the form differently (typed Other, several answers, decline) runs over HTTP alone: one
server process serves those tests."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import httpx
import mcp.types as types
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from interactions import AWAITING_TEXT, DECLINED_TEXT, UNAVAILABLE_TEXT
from recipes import load_recipe
from tests.hosts.cli_helpers import PI_RECIPES, cli_env
from tests.hosts.mcp_client import HANG, RECIPE, WAIT, Elicitor, HttpServer, accept, connect, text

pytestmark = pytest.mark.anyio

TRANSPORTS = ["stdio", "http"]


@pytest.fixture(scope="module")
def http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    server = HttpServer(tmp_path_factory.mktemp("mcp-http"))
    yield server
    assert server.stop() in (0, 130), "".join(server.stderr)


@pytest.fixture(params=TRANSPORTS)
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def call(
    transport: str,
    tmp_path: Path,
    http_server: HttpServer,
    tool: str,
    arguments: dict[str, object] | None = None,
    elicitor: Elicitor | None = None,
) -> types.CallToolResult:
    async with connect(transport, cwd=tmp_path, http=http_server, elicitor=elicitor) as session:
        with anyio.fail_after(WAIT):
            result = await session.call_tool(tool, arguments or {})
    assert isinstance(result, types.CallToolResult)
    return result


async def test_tools_are_listed_with_their_json_schemas(
    transport: str, tmp_path: Path, http_server: HttpServer
) -> None:
    recipe = load_recipe(RECIPE)
    async with connect(transport, cwd=tmp_path, http=http_server) as session:
        listed = await session.list_tools()
    tools = {tool.name: tool for tool in listed.tools}
    assert list(tools) == list(recipe.tools)
    channel = tools["pick_channel"]
    assert channel.title == "Pick a channel"
    assert channel.description == "Ask which channel to publish a release to."
    assert channel.input_schema == recipe.tools["pick_channel"].spec().parameters
    assert channel.input_schema["required"] == ["version"]
    assert tools["fail"].title is None


async def test_a_chosen_option_records_its_value(
    transport: str, tmp_path: Path, http_server: HttpServer
) -> None:
    elicitor = Elicitor([accept(answer="beta")])
    result = await call(
        transport, tmp_path, http_server, "pick_channel", {"version": "v1.4.0"}, elicitor
    )
    assert (result.is_error, text(result)) == (False, "Answer: beta")
    (form,) = elicitor.seen
    assert form.message == "Release channel\n\nWhere should v1.4.0 be published?"
    answer = form.requested_schema["properties"]["answer"]
    assert answer["type"] == "string"
    assert answer["oneOf"] == [
        {"const": "stable", "title": "Stable"},
        {"const": "beta", "title": "Beta"},
        {"const": "nightly", "title": "Nightly"},
    ]
    assert "other" in form.requested_schema["properties"]
    assert result.meta is not None
    interrupt = result.meta["pi-recipes/interrupt"]
    assert interrupt["outcome"] == {"type": "answered", "answer": "beta"}
    assert interrupt["reason"] == "input_required"


async def test_an_option_with_a_blank_value_is_refused_before_anyone_is_asked(
    tmp_path: Path, http_server: HttpServer
) -> None:
    """Before, picking it was read as a decline here, and a durable run could not take it."""
    elicitor = Elicitor([accept(answer="")])
    result = await call("http", tmp_path, http_server, "pick_suffix", elicitor=elicitor)
    assert result.is_error
    assert "option 0 ('None'): a value must not be blank" in text(result)
    assert elicitor.seen == [], "no form was shown"


async def test_typed_other_is_the_answer(tmp_path: Path, http_server: HttpServer) -> None:
    elicitor = Elicitor([accept(answer="stable", other="  canary ")])
    result = await call("http", tmp_path, http_server, "pick_channel", {"version": "v1"}, elicitor)
    assert text(result) == "Answer: canary"


async def test_multi_select_answers_in_the_order_of_the_options(
    tmp_path: Path, http_server: HttpServer
) -> None:
    elicitor = Elicitor([accept(answers=["win", "linux"], other="BSD")])
    result = await call("http", tmp_path, http_server, "pick_many", elicitor=elicitor)
    assert text(result) == 'Answers: ["linux","win","BSD"]'
    answers = elicitor.seen[0].requested_schema["properties"]["answers"]
    assert answers["type"] == "array"
    assert answers["items"]["anyOf"][1] == {"const": "mac", "title": "macOS"}


async def test_approval_with_feedback(
    transport: str, tmp_path: Path, http_server: HttpServer
) -> None:
    elicitor = Elicitor(
        [accept(approved=False, feedback="add the notes"), accept(approved=True, feedback="go")]
    )
    async with connect(transport, cwd=tmp_path, http=http_server, elicitor=elicitor) as session:
        with anyio.fail_after(WAIT):
            revise = await session.call_tool("approve", {"version": "v2"})
            approve = await session.call_tool("approve", {"version": "v2"})
    assert isinstance(revise, types.CallToolResult) and isinstance(approve, types.CallToolResult)
    assert text(revise) == "Revision requested. Feedback: add the notes"
    assert text(approve) == "Approved. Feedback: go"
    form = elicitor.seen[0]
    assert form.message == "Publish v2?\n\nThe build passed.\n\nChangelog\n- faster resume"
    props = form.requested_schema["properties"]
    assert props["approved"]["type"] == "boolean"
    assert props["feedback"]["type"] == "string"
    assert form.requested_schema["required"] == ["approved"]


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_decline_and_cancel_are_a_decline(
    action: str, tmp_path: Path, http_server: HttpServer
) -> None:
    elicitor = Elicitor([types.ElicitResult(action=action)])  # type: ignore[arg-type]
    result = await call("http", tmp_path, http_server, "approve", {"version": "v3"}, elicitor)
    assert (result.is_error, text(result)) == (False, DECLINED_TEXT)


async def test_a_client_without_elicitation_gets_unavailable(
    transport: str, tmp_path: Path, http_server: HttpServer
) -> None:
    result = await call(transport, tmp_path, http_server, "pick_channel", {"version": "v1"})
    assert (result.is_error, text(result)) == (False, UNAVAILABLE_TEXT)


async def test_without_elicitation_the_interrupt_flag_pauses_the_call(tmp_path: Path) -> None:
    async with connect("stdio", cwd=tmp_path, env={"PI_INTERRUPT_RESUME": "1"}) as session:
        with anyio.fail_after(WAIT):
            result = await session.call_tool("pick_fixed", {})
    assert isinstance(result, types.CallToolResult)
    assert (result.is_error, text(result)) == (False, AWAITING_TEXT)
    assert result.meta is not None
    interrupt = result.meta["pi-recipes/interrupt"]
    assert interrupt["outcome"]["type"] == "awaiting_user"
    assert interrupt["id"].startswith("int-mcp-")
    assert interrupt["responseSchema"]["properties"]["answer"]["enum"] == ["y", "n"]


async def test_elicitation_comes_after_the_auto_approve_flag(tmp_path: Path) -> None:
    elicitor = Elicitor([])
    async with connect(
        "stdio", cwd=tmp_path, elicitor=elicitor, env={"PI_ASK_USER_AUTO_APPROVE": "1"}
    ) as session:
        with anyio.fail_after(WAIT):
            result = await session.call_tool("approve", {"version": "v1"})
    assert isinstance(result, types.CallToolResult)
    assert text(result) == "Approved."
    assert elicitor.seen == []


async def test_elicitation_comes_before_the_interrupt(tmp_path: Path) -> None:
    elicitor = Elicitor([accept(answer="n")])
    async with connect(
        "stdio", cwd=tmp_path, elicitor=elicitor, env={"PI_INTERRUPT_RESUME": "1"}
    ) as session:
        with anyio.fail_after(WAIT):
            result = await session.call_tool("pick_fixed", {})
    assert isinstance(result, types.CallToolResult)
    assert text(result) == "Answer: n"


async def test_cancelling_the_call_aborts_its_ask(
    transport: str, tmp_path: Path, http_server: HttpServer
) -> None:
    elicitor = Elicitor([HANG])
    async with connect(transport, cwd=tmp_path, http=http_server, elicitor=elicitor) as session:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(session.call_tool, "guarded", {"tag": "cancel"})
            with anyio.fail_after(WAIT):
                await elicitor.shown.wait()
            tasks.cancel_scope.cancel()  # the client sends notifications/cancelled
        with anyio.fail_after(WAIT):
            await elicitor.cancelled.wait()  # the server withdrew its elicitation
            note = await session.call_tool("abort_note", {"tag": "cancel"})
    assert isinstance(note, types.CallToolResult)
    assert text(note) == (
        "aborted=True: the MCP client cancelled the tool call while its question was shown"
    )


async def test_a_client_going_away_aborts_the_ask(tmp_path: Path) -> None:
    elicitor = Elicitor([HANG])
    params = StdioServerParameters(
        command=PI_RECIPES, args=["mcp", RECIPE], env=cli_env(), cwd=tmp_path
    )
    errors = (tmp_path / "stderr.txt").open("w+", encoding="utf-8")
    with errors, anyio.CancelScope() as gone:
        async with (
            stdio_client(params, errlog=errors) as (read, write),
            ClientSession(read, write, elicitation_callback=elicitor) as session,
            anyio.create_task_group() as tasks,
        ):
            with anyio.fail_after(WAIT):
                await session.initialize()
            tasks.start_soon(session.call_tool, "guarded", {"tag": "gone"})
            with anyio.fail_after(WAIT):
                await elicitor.shown.wait()
            gone.cancel()  # the client goes away: the server reads the end of its input
    logged = (tmp_path / "stderr.txt").read_text(encoding="utf-8")
    assert (
        "note gone: aborted=True: the MCP client disconnected while its question was shown"
        in logged
    )


@pytest.mark.parametrize(
    "code",
    [
        types.INVALID_REQUEST,
        # The codes the SDK also uses for its own timeout and closed connection: a client's
        # error reply with them was read as the human's decline, or as a disconnect.
        types.REQUEST_TIMEOUT,
        types.CONNECTION_CLOSED,
    ],
)
async def test_an_error_reply_to_the_elicitation_is_a_tool_error(
    code: int, transport: str, tmp_path: Path, http_server: HttpServer
) -> None:
    refusal = types.ErrorData(code=code, message="forms are switched off")
    result = await call(transport, tmp_path, http_server, "free_text", elicitor=Elicitor([refusal]))
    assert (result.is_error, text(result)) == (
        True,
        "the MCP client failed the elicitation: forms are switched off",
    )


async def test_the_ask_expiry_is_the_elicitation_timeout(
    transport: str, tmp_path: Path, http_server: HttpServer
) -> None:
    elicitor = Elicitor([HANG])
    result = await call(transport, tmp_path, http_server, "expiring", {"seconds": 1.5}, elicitor)
    assert (result.is_error, text(result)) == (False, DECLINED_TEXT)
    with anyio.fail_after(WAIT):
        await elicitor.cancelled.wait()


@pytest.mark.parametrize(
    ("tool", "reply", "detail"),
    [
        ("pick_fixed", accept(answer="maybe"), "'maybe' is not one of ['y', 'n']"),
        ("pick_fixed", accept(answer="y", other="z"), "'other' was unexpected"),
        ("pick_fixed", accept(), "'answer' is a required property"),
        ("approve", accept(approved="yes"), "'yes' is not of type 'boolean'"),
        ("approve", types.ElicitResult(action="accept"), "an accepted form carries no content"),
        ("pick_many", accept(answers="linux"), "'linux' is not of type 'array'"),
    ],
)
async def test_a_malformed_reply_is_a_tool_error(
    tool: str,
    reply: types.ElicitResult,
    detail: str,
    tmp_path: Path,
    http_server: HttpServer,
) -> None:
    arguments: dict[str, object] = {"version": "v1"} if tool == "approve" else {}
    result = await call("http", tmp_path, http_server, tool, arguments, Elicitor([reply]))
    assert result.is_error
    assert text(result).startswith(
        "the MCP client's elicitation reply does not match the form it was sent ("
    )
    assert detail in text(result)


async def test_progress_notifications_come_from_on_update(
    transport: str, tmp_path: Path, http_server: HttpServer
) -> None:
    seen: list[tuple[float, float | None, str | None]] = []
    all_seen = anyio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))
        if len(seen) == 3:
            all_seen.set()

    async with connect(transport, cwd=tmp_path, http=http_server) as session:
        with anyio.fail_after(WAIT):
            result = await session.call_tool("count", {"steps": 3}, progress_callback=on_progress)
            await all_seen.wait()
    assert isinstance(result, types.CallToolResult)
    assert text(result) == "counted 3"
    assert sorted(seen) == [(1, None, "step 1"), (2, None, "step 2"), (3, None, "step 3")]


async def test_a_lone_surrogate_is_sent_replaced_and_the_session_goes_on(
    transport: str, tmp_path: Path, http_server: HttpServer
) -> None:
    seen: list[str | None] = []
    reported = anyio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(message)
        reported.set()

    async with connect(transport, cwd=tmp_path, http=http_server) as session:
        with anyio.fail_after(WAIT):
            garbled = await session.call_tool("garbled", {}, progress_callback=on_progress)
            await reported.wait()
            after = await session.call_tool("count", {"steps": 1})
    assert isinstance(garbled, types.CallToolResult)
    assert not garbled.is_error
    assert text(garbled) == "done \ufffd here"
    assert seen == ["half \ufffd done"]
    assert text(after) == "counted 1"


async def test_a_form_with_a_lone_surrogate_is_sent_replaced_and_answered(
    transport: str, tmp_path: Path, http_server: HttpServer
) -> None:
    """The elicitation went out as it was: the SDK's writer died on it, and the session never
    answered again."""
    elicitor = Elicitor([accept(answer="a\ufffd")])
    async with connect(transport, cwd=tmp_path, http=http_server, elicitor=elicitor) as session:
        with anyio.fail_after(WAIT):
            picked = await session.call_tool("pick_garbled", {})
            after = await session.call_tool("count", {"steps": 1})
    (form,) = elicitor.seen
    assert form.message == "Which \ufffd one?"
    assert form.requested_schema["properties"]["answer"]["oneOf"][0] == {
        "const": "a\ufffd", "title": "A\ufffd"
    }  # fmt: skip
    assert isinstance(picked, types.CallToolResult)
    assert (picked.is_error, text(picked)) == (False, "Answer: a\ufffd")
    assert text(after) == "counted 1"


async def test_failures_are_tool_errors_with_the_message(
    transport: str, tmp_path: Path, http_server: HttpServer
) -> None:
    async with connect(transport, cwd=tmp_path, http=http_server) as session:
        with anyio.fail_after(WAIT):
            failed = await session.call_tool("fail", {})
            invalid = await session.call_tool("pick_channel", {"version": 3})
            with pytest.raises(MCPError) as unknown:
                await session.call_tool("nope", {})
    assert isinstance(failed, types.CallToolResult) and isinstance(invalid, types.CallToolResult)
    assert (failed.is_error, text(failed)) == (True, "the release server is down")
    assert invalid.is_error
    assert text(invalid) == (
        "Invalid arguments for tool 'pick_channel': version: Input should be a valid string"
    )
    assert unknown.value.error.code == types.INVALID_PARAMS
    assert "Unknown tool 'nope'" in unknown.value.error.message
    json.dumps(failed.model_dump(mode="json"))  # the wire form is plain JSON


async def test_a_tool_calling_sys_exit_is_a_tool_error_and_the_server_serves_on(
    transport: str, tmp_path: Path, http_server: HttpServer
) -> None:
    """Before, the ``SystemExit`` escaped the call: on stdio the server crashed with a
    traceback, the call unanswered; over HTTP every later request of every client got 500."""
    async with connect(transport, cwd=tmp_path, http=http_server) as session:
        with anyio.fail_after(WAIT):
            quit_ = await session.call_tool("quit", {})
            after = await session.call_tool("count", {"steps": 1})
    assert (quit_.is_error, text(quit_)) == (
        True,
        "Tool 'quit' called sys.exit(3) instead of returning a result; the call failed.",
    )
    assert (after.is_error, text(after)) == (False, "counted 1")


async def test_a_failure_quoting_a_credential_reaches_the_client_scrubbed(tmp_path: Path) -> None:
    token = "tok.MCPLEAK.0123456789/+=Vb2N"
    async with connect("stdio", cwd=tmp_path, env={"RELEASE_TOKEN": token}) as session:
        with anyio.fail_after(WAIT):
            failed = await session.call_tool("fail", {})
    assert (failed.is_error, text(failed)) == (True, "the release server is down for ***")


async def test_the_readme_tool_asks_twice_in_one_call(tmp_path: Path) -> None:
    from tests.test_docs import _painter

    elicitor = Elicitor([accept(answer="#33d"), accept(approved=True)])
    params = StdioServerParameters(
        command=PI_RECIPES, args=["mcp", _painter(tmp_path)], env=cli_env(), cwd=tmp_path
    )
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, elicitation_callback=elicitor) as session,
    ):
        with anyio.fail_after(WAIT):
            await session.initialize()
            result = await session.call_tool("repaint", {"element": "door"})
    assert isinstance(result, types.CallToolResult)
    assert text(result) == "Repainted the door #33d."
    assert [form.message for form in elicitor.seen] == [
        "Which colour for the door?",
        "Repaint the door?\n\nAnswer: #33d",
    ]


def test_a_foreign_host_header_is_refused(http_server: HttpServer) -> None:
    refused = httpx.post(
        http_server.url,
        headers={"Host": "evil.example", "Accept": "application/json, text/event-stream"},
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        timeout=WAIT,
    )
    assert refused.status_code == 421


@pytest.mark.parametrize(
    ("address", "listens_on"),
    [
        ("127.0.0.2", "127.0.0.2"),
        # Other spellings of a loopback address: the protection was decided from the
        # spelling, so these listened on 127.0.0.1 with DNS-rebinding protection off.
        ("127.1", "127.0.0.1"),
        ("2130706433", "127.0.0.1"),
    ],
)
async def test_any_loopback_address_refuses_a_foreign_host_header(
    address: str, listens_on: str, tmp_path: Path
) -> None:
    try:
        socket.create_server((listens_on, 0)).close()
        socket.getaddrinfo(address, 0, type=socket.SOCK_STREAM)
    except OSError:
        pytest.skip(f"{address} is not a loopback address of this machine")
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "a page on evil.example", "version": "1"},
        },
    }
    server = HttpServer(tmp_path, address=f"{address}:0")
    try:
        async with httpx.AsyncClient(timeout=WAIT) as web:
            refused = await web.post(
                server.url,
                headers={"Host": "evil.example", "Accept": "application/json, text/event-stream"},
                json=hello,
            )
        async with connect("http", cwd=tmp_path, http=server) as session:
            listed = await session.list_tools()
    finally:
        assert server.stop() in (0, 130), "".join(server.stderr)
    assert refused.status_code == 421
    assert "pick_channel" in [tool.name for tool in listed.tools]


class OldClient:
    """A client on MCP 2025-06-18 (elicitation, but no titled enums or arrays in forms), as
    JSON-RPC lines over the stdio of ``pi-recipes mcp``: the SDK's client speaks only the
    latest version, so this one is written out."""

    def __init__(self, process: anyio.abc.Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self._stdin = process.stdin
        self._lines = BufferedByteReceiveStream(process.stdout)

    async def send(self, message: dict[str, object]) -> None:
        await self._stdin.send(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")

    async def receive(self) -> dict[str, Any]:
        with anyio.fail_after(WAIT):
            line = await self._lines.receive_until(b"\n", 1 << 20)
        received: dict[str, Any] = json.loads(line)
        return received

    async def start(self) -> str:
        capabilities = {"elicitation": {}}
        info = {"name": "old-client", "version": "1"}
        params = {"protocolVersion": "2025-06-18", "capabilities": capabilities, "clientInfo": info}
        await self.send({"id": 1, "method": "initialize", "params": params})
        version: str = (await self.receive())["result"]["protocolVersion"]
        await self.send({"method": "notifications/initialized"})
        return version


async def test_a_client_on_an_older_protocol_gets_forms_it_can_show(tmp_path: Path) -> None:
    argv = [PI_RECIPES, "mcp", RECIPE]
    async with await anyio.open_process(argv, cwd=tmp_path, env=cli_env()) as process:
        client = OldClient(process)
        assert await client.start() == "2025-06-18"
        await client.send({"id": 2, "method": "tools/call", "params": {"name": "pick_many"}})
        asked = await client.receive()
        assert asked["method"] == "elicitation/create"
        fields = asked["params"]["requestedSchema"]["properties"]
        assert {name: field["type"] for name, field in fields.items()} == {
            "option_1": "boolean",
            "option_2": "boolean",
            "option_3": "boolean",
            "other": "string",
        }
        assert [fields[f"option_{i}"]["title"] for i in (1, 2, 3)] == ["Linux", "macOS", "Windows"]
        content = {"option_1": True, "option_3": True}
        reply = {"action": "accept", "content": content}
        await client.send({"id": asked["id"], "result": reply})
        result = (await client.receive())["result"]
        assert not result["isError"]
        assert result["content"][0]["text"] == 'Answers: ["linux","win"]'
        assert process.stdin is not None
        await process.stdin.aclose()
