"""Who may call ``pi-recipes mcp --http``: the web host's token, and its Origin rule, on every
interface. Before, anyone who reached the port could call every tool, and on ``0.0.0.0``
a DNS-rebinding page could too."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import anyio
import httpx
import pytest

from tests.hosts.mcp_client import WAIT, HttpServer, connect, text

pytestmark = pytest.mark.anyio

APP = "https://app.example"

HELLO = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    running = HttpServer(
        tmp_path_factory.mktemp("mcp-access"), "127.0.0.1:0", "--allow-origin", APP
    )
    try:
        yield running
    finally:
        running.stop()


def _port(url: str) -> int:
    port = urlsplit(url).port
    assert port is not None
    return port


def _post(url: str, headers: dict[str, str]) -> httpx.Response:
    return httpx.post(url, headers=ACCEPT | headers, json=HELLO, timeout=WAIT)


def test_the_token_is_made_next_to_the_default_store(server: HttpServer) -> None:
    made = "every request needs the token (made now, kept in .pi-recipes/web-token)"
    said = server.said(made)
    assert made in said
    assert server.token and server.token not in said


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic abc"}],
    ids=["none", "wrong", "not-bearer"],
)
def test_a_request_without_the_token_is_refused(
    server: HttpServer, headers: dict[str, str]
) -> None:
    refused = _post(server.url, headers)
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"] == "Bearer"
    assert refused.json()["error"] == "unauthorized"


async def test_the_sdk_client_with_the_token_calls_tools(
    server: HttpServer, tmp_path: Path
) -> None:
    async with connect("http", cwd=tmp_path, http=server) as session:
        with anyio.fail_after(WAIT):
            counted = await session.call_tool("count", {"steps": 2})
    assert text(counted) == "counted 2"


def test_a_rebinding_page_is_refused(server: HttpServer) -> None:
    """Its Host and Origin name the page, and agree: 403 (with the token even)."""
    evil = f"evil.example:{_port(server.url)}"
    headers = {"Host": evil, "Origin": f"http://{evil}"} | server.headers
    refused = _post(server.url, headers)
    assert refused.status_code == 403
    assert refused.json()["reason"] == "origin"


@pytest.mark.parametrize("page", ["own", "localhost", "configured"])
def test_legitimate_pages_are_served(server: HttpServer, page: str) -> None:
    origin = {
        "own": f"http://127.0.0.1:{_port(server.url)}",
        "localhost": f"http://localhost:{_port(server.url)}",
        "configured": APP,
    }[page]
    served = _post(server.url, {"Origin": origin} | server.headers)
    assert served.status_code == 200, served.text


def _lan_address() -> str:
    """An address of this machine that is not loopback (the one its default route uses)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("192.0.2.1", 9))  # no packet is sent
            address: str = probe.getsockname()[0]
    except OSError:
        pytest.skip("this machine has no address but loopback")
    if address.startswith("127."):
        pytest.skip("this machine has no address but loopback")
    return address


def test_on_every_interface_the_origin_rule_and_the_token_hold(tmp_path: Path) -> None:
    """``0.0.0.0``: a page reached at the machine's own address may call (with the token); a
    rebinding page reaching that address under its own name may not."""
    lan = _lan_address()
    server = HttpServer(tmp_path, "0.0.0.0:0")
    try:
        port = _port(server.url)
        url = f"http://{lan}:{port}/mcp"
        evil = f"evil.example:{port}"
        anonymous = _post(url, {"Origin": f"http://{lan}:{port}"})
        own = _post(url, {"Origin": f"http://{lan}:{port}"} | server.headers)
        rebound = _post(url, {"Host": evil, "Origin": f"http://{evil}"} | server.headers)
        foreign = _post(url, {"Origin": "https://evil.example"} | server.headers)
    finally:
        assert server.stop() in (0, 130), "".join(server.stderr)
    assert anonymous.status_code == 401
    assert own.status_code == 200, own.text
    assert (rebound.status_code, foreign.status_code) == (403, 403)


async def test_a_token_file_is_the_token(tmp_path: Path) -> None:
    given = tmp_path / "token"
    given.write_text("my-own-token\n")
    server = HttpServer(tmp_path, "127.0.0.1:0", "--token-file", str(given))
    try:
        assert not (tmp_path / ".pi-recipes" / "web-token").exists()
        server.token = "my-own-token"
        async with connect("http", cwd=tmp_path, http=server) as session:
            listed = await session.list_tools()
        refused = _post(server.url, {})
    finally:
        assert server.stop() in (0, 130), "".join(server.stderr)
    assert "count" in [tool.name for tool in listed.tools]
    assert refused.status_code == 401


async def test_the_token_is_the_one_serve_keeps_with_the_store(tmp_path: Path) -> None:
    """The store named by PI_RECIPES_STORE (as ``pi-recipes serve`` reads it) keeps the token
    both servers use."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "web-token").write_text("the-servers-token\n")
    store = str(data / "state.db")
    server = HttpServer(tmp_path, "127.0.0.1:0", PI_RECIPES_STORE=store)
    try:
        server.token = "the-servers-token"
        async with connect("http", cwd=tmp_path, http=server) as session:
            listed = await session.list_tools()
    finally:
        assert server.stop() in (0, 130), "".join(server.stderr)
    assert "count" in [tool.name for tool in listed.tools]
    assert not (tmp_path / ".pi-recipes").exists()
