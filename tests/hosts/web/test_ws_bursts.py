"""A model's burst of deltas against WebSocket clients that read as fast as they can: they get
the whole text and stay connected. Before, a burst of 256 deltas or more (a buffering proxy
delivers a stream so) filled a client's outbox before its sender could run, and a client
reading at full speed was closed 4008 "too slow"."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from websockets.asyncio.client import ClientConnection, connect

from tests.hosts.web.server import Server, serving
from tests.hosts.web.web_burst_recipe import burst

pytestmark = pytest.mark.anyio

BURST_RECIPE = str(Path(__file__).with_name("web_burst_recipe.py"))
WAIT = 30.0


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(tmp_path_factory.mktemp("bursts"), recipe=BURST_RECIPE) as running:
        yield running


async def _subscribed(ws: ClientConnection) -> None:
    assert json.loads(await ws.recv())["type"] == "hello"
    await ws.send(json.dumps({"type": "subscribe", "run_id": None, "id": "s"}))
    assert json.loads(await ws.recv())["type"] == "subscribed"


async def _live_text(ws: ClientConnection, run_id: list[str]) -> str:
    """The text the run streamed live, read as fast as frames come, until its leg ends."""
    deltas: list[str] = []
    while True:
        got: dict[str, Any] = json.loads(await ws.recv())
        if got["type"] != "run.event" or not got["live"] or got["run_id"] not in run_id:
            continue
        event = got["event"]
        if event["type"] == "TEXT_MESSAGE_CONTENT":
            deltas.append(event["delta"])
        if event["type"] == "RUN_FINISHED":
            return "".join(deltas)


@pytest.mark.parametrize("count", [300, 1_500])
async def test_a_reading_client_gets_a_whole_burst_and_stays(server: Server, count: int) -> None:
    run_ids: list[str] = []
    async with (
        connect(server.ws_url, additional_headers=server.headers, proxy=None) as first,
        connect(server.ws_url, additional_headers=server.headers, proxy=None) as second,
    ):
        for ws in (first, second):
            await _subscribed(ws)
        async with server.async_client() as http:
            reply = await http.post("/api/runs", json={"prompt": str(count)})
            assert reply.status_code == 202, reply.text
            run_ids.append(reply.json()["run_id"])
        with anyio.fail_after(WAIT):
            texts = [await _live_text(ws, run_ids) for ws in (first, second)]
            for ws in (first, second):  # still connected, still served
                await ws.send(json.dumps({"type": "ping", "id": "after"}))
                while (got := json.loads(await ws.recv()))["type"] != "pong":
                    pass
                assert got["id"] == "after"
    assert texts == ["".join(burst(count))] * 2
