"""A DNS-rebinding page against a running ``pi-recipes serve``: refused on HTTP and WebSocket.

Such a page is served at ``http://evil.example:PORT`` whose name now points at this server,
so the browser sends ``Host: evil.example:PORT`` and ``Origin: http://evil.example:PORT``:
the two agree, and a rule comparing them let it in. The Origin is compared with the
configured origins and the address served instead; legitimate pages still work."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from tests.hosts.web.server import Server, serving

pytestmark = pytest.mark.anyio

APP = "https://app.example"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(tmp_path_factory.mktemp("origins"), args=("--allow-origin", APP)) as running:
        yield running


def _port(server: Server) -> int:
    port = urlsplit(server.url).port
    assert port is not None
    return port


def _rebinding(server: Server) -> dict[str, str]:
    evil = f"evil.example:{_port(server)}"
    return {"Host": evil, "Origin": f"http://{evil}"}


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", "/api/runs", None),
        ("POST", "/api/runs", {"prompt": "Release v9"}),
        ("POST", "/agui", {"threadId": "t", "runId": "r", "messages": []}),
        ("GET", "/", None),
    ],
)
def test_a_rebinding_page_is_refused_over_http(
    server: Server, method: str, path: str, body: object
) -> None:
    """With the right token even (the page may have read it nowhere, but the rule must not
    rest on that): 403, and nothing is started."""
    with server.client() as http:
        before = http.get("/api/runs").json()["runs"]
        reply = http.request(method, path, json=body, headers=_rebinding(server))
        assert reply.status_code == 403, reply.text
        assert (reply.json()["error"], reply.json()["reason"]) == ("forbidden", "origin")
        assert http.get("/api/runs").json()["runs"] == before


async def test_a_rebinding_page_is_refused_a_websocket(server: Server) -> None:
    evil = _rebinding(server)
    with pytest.raises(InvalidStatus) as refused:
        async with connect(
            f"ws://{evil['Host']}/ws",
            host="127.0.0.1",
            port=_port(server),
            additional_headers={"Origin": evil["Origin"], **server.headers},
            proxy=None,
            open_timeout=10,
        ):
            pass
    assert refused.value.response.status_code == 403
    assert json.loads(refused.value.response.body)["reason"] == "origin"


@pytest.mark.parametrize("page", ["own", "localhost", "configured"])
async def test_legitimate_pages_still_work(server: Server, page: str) -> None:
    origin = {
        "own": server.url.rstrip("/"),
        "localhost": f"http://localhost:{_port(server)}",
        "configured": APP,
    }[page]
    with server.client() as http:
        listed = http.get("/api/runs", headers={"Origin": origin})
        assert listed.status_code == 200, listed.text
    async with connect(
        server.ws_url,
        subprotocols=["pi-recipes.v1", f"bearer.{server.token}"],  # type: ignore[list-item]
        additional_headers={"Origin": origin},
        proxy=None,
        open_timeout=10,
    ) as ws:
        assert json.loads(await ws.recv())["type"] == "hello"


def test_a_server_on_every_interface_accepts_only_the_address_served(tmp_path: Path) -> None:
    """On 0.0.0.0 a page reached through the address the connection came in on is its own;
    a rebinding page's name is not, whatever Host it sends."""
    with serving(tmp_path, args=("--host", "0.0.0.0")) as server:
        url = server.url.replace("0.0.0.0", "127.0.0.1")
        with httpx.Client(base_url=url, headers=server.headers, timeout=20) as http:
            own = http.get("/api/runs", headers={"Origin": url.rstrip("/")})
            evil = http.get("/api/runs", headers=_rebinding(server))
    assert own.status_code == 200, own.text
    assert evil.status_code == 403
