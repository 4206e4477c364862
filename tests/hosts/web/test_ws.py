"""The WebSocket with the ``websockets`` client against a running server: subscribe, answer,
ack; a conflicting answer refused; the handshake refused without the token or from a foreign
Origin; size limits; answers given elsewhere arriving; a client that does not read dropped."""

from __future__ import annotations

import base64
import json
import os
import socket
import struct
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from interactions.store import open_sqlite_store
from tests.hosts.cli_helpers import pi
from tests.hosts.web.server import Server, serving, wait_for_status

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(tmp_path_factory.mktemp("ws")) as running:
        yield running


@asynccontextmanager
async def client(
    server: Server, run_id: str | None = None, **kwargs: Any
) -> AsyncIterator[ClientConnection]:
    """A connected, subscribed client (``run_id`` None: every run)."""
    headers = kwargs.pop("additional_headers", server.headers)
    async with connect(
        server.ws_url, additional_headers=headers, proxy=None, open_timeout=10, **kwargs
    ) as ws:
        assert (await frame(ws))["type"] == "hello"
        await ws.send(json.dumps({"type": "subscribe", "run_id": run_id, "id": "s1"}))
        assert await frame(ws) == {"type": "subscribed", "run_id": run_id, "id": "s1"}
        yield ws


async def frame(ws: ClientConnection, timeout: float = 10) -> dict[str, Any]:
    with anyio.fail_after(timeout):
        data: dict[str, Any] = json.loads(await ws.recv())
        return data


async def until(ws: ClientConnection, match: dict[str, Any], timeout: float = 10) -> dict[str, Any]:
    """The first frame having every key/value of ``match`` (others are skipped), bounded."""
    with anyio.fail_after(timeout):
        while True:
            got = await frame(ws, timeout)
            if all(got.get(k) == v for k, v in match.items()):
                return got


async def collect(
    ws: ClientConnection, match: dict[str, Any], timeout: float = 10
) -> list[dict[str, Any]]:
    """Every frame up to and including the first matching ``match`` (bounded)."""
    frames = []
    with anyio.fail_after(timeout):
        while not frames or not all(frames[-1].get(k) == v for k, v in match.items()):
            frames.append(await frame(ws, timeout))
    return frames


async def start(server: Server, prompt: str) -> str:
    async with server.async_client() as http:
        reply = await http.post("/api/runs", json={"prompt": prompt})
        assert reply.status_code == 202, reply.text
        run_id: str = reply.json()["run_id"]
        return run_id


async def test_subscribe_see_the_interrupt_answer_and_get_an_ack(server: Server) -> None:
    async with client(server) as ws:
        run_id = await start(server, "pick: Which letter?")
        frames = await collect(ws, {"type": "run.status", "run_id": run_id})
        (created,) = [f for f in frames if f["type"] == "run.created"]
        assert created["run"]["id"] == run_id and created["run"]["kind"] == "recipe"
        live = [f["event"]["type"] for f in frames if f["type"] == "run.event" and f["live"]]
        assert live[0] == "RUN_STARTED" and live[-1] == "RUN_FINISHED"
        assert "TEXT_MESSAGE_CONTENT" in live and "TOOL_CALL_START" in live
        stored = [f["event"]["type"] for f in frames if f["type"] == "run.event" and not f["live"]]
        assert stored[0] == "RUN_STARTED" and stored[-1] == "RUN_FINISHED"
        (opened,) = [f for f in frames if f["type"] == "interrupt.opened"]
        interrupt = opened["interaction"]["interrupt"]
        assert interrupt["message"] == "Which letter?" and len(interrupt["options"]) == 3
        assert interrupt["display"]["header"] == "Pick one"
        paused = frames[-1]
        assert (paused["from"], paused["to"], paused["kind"]) == (
            "running", "paused_waiting_human", "recipe"
        )  # fmt: skip
        await ws.send(json.dumps({
            "type": "answer", "id": "a1", "run_id": run_id, "interaction_id": "int-c1",
            "payload": {"answer": "Gamma"}, "answered_by": "ada",
        }))  # fmt: skip
        frames = await collect(ws, {"type": "run.status", "run_id": run_id, "to": "finished"})
        (ack,) = [f for f in frames if f.get("id") == "a1"]
        assert ack == {
            "type": "ack", "id": "a1", "run_id": run_id, "interaction_id": "int-c1",
            "created": True, "queued": False, "resumed": True,
            "settled": True, "approvals": [], "required_approvals": 1,
        }  # fmt: skip
        (resolved,) = [f for f in frames if f["type"] == "interrupt.resolved"]
        assert (resolved["answered_by"], resolved["via"], resolved["payload"]) == (
            "token", "web", {"answer": "gamma"}
        )  # fmt: skip  # who signed in at the handshake: never the frame's name


async def test_a_conflicting_answer_is_refused_and_a_bad_payload_lists_complaints(
    server: Server,
) -> None:
    run_id = await start(server, "approve: Ship?\ntext: Why?")
    async with client(server, run_id) as ws:
        answer = {"type": "answer", "run_id": run_id, "interaction_id": "int-c1"}
        await ws.send(json.dumps(answer | {"id": "x1", "payload": {"approved": "yes"}}))
        bad = await until(ws, {"id": "x1"})
        assert (bad["type"], bad["error"], bad["reason"]) == (
            "error", "invalid payload", "invalid_payload"
        )  # fmt: skip
        assert {"path": "approved", "message": "'yes' is not of type 'boolean'"} in bad[
            "complaints"
        ]
        await ws.send(json.dumps(answer | {"id": "x2", "payload": {"approved": True}}))
        ok = await until(ws, {"id": "x2"})
        assert (ok["type"], ok["resumed"], ok["queued"]) == ("ack", False, True)
        await ws.send(json.dumps(answer | {"id": "x2r", "payload": {"approved": True}}))
        replayed = await until(ws, {"id": "x2r"})  # it said queued, as if queued again
        assert (replayed["type"], replayed["created"], replayed["queued"]) == ("ack", False, False)
        await ws.send(json.dumps(answer | {"id": "x3", "payload": {"approved": False}}))
        refused = await until(ws, {"id": "x3"})
        assert (refused["type"], refused["error"], refused["reason"]) == (
            "error", "conflict", "already_answered"
        )  # fmt: skip
        decline = {"type": "decline", "id": "x4", "run_id": run_id, "interaction_id": "int-c2"}
        await ws.send(json.dumps(decline))
        assert (await until(ws, {"id": "x4"}))["resumed"] is True
        await until(ws, {"type": "run.status", "to": "finished"})


async def test_malformed_frames_are_refused_and_the_connection_stays(server: Server) -> None:
    async with client(server) as ws:
        for bad in ["not json", '{"type": "launch"}', '{"type": "answer", "id": "q"}', "[]"]:
            await ws.send(bad)
            refused = await frame(ws)
            assert (refused["type"], refused["error"]) == ("error", "invalid request")
            assert refused["complaints"]
        await ws.send(json.dumps({"type": "ping", "id": "p"}))
        assert await until(ws, {"type": "pong"}) == {"type": "pong", "id": "p"}


async def test_an_answer_by_a_name_no_store_keeps_is_refused_and_writes_nothing(
    server: Server,
) -> None:
    """``answered_by`` holding a NUL was refused only by the store, as an invalid payload; it
    is now a frame off the shape, naming the field, as REST and AG-UI refuse it."""
    run_id = await start(server, "text: Name?")
    async with client(server, run_id) as ws:
        answer = {"type": "answer", "id": "n1", "run_id": run_id, "interaction_id": "int-c1",
                  "payload": {"answer": "Zed"}, "answered_by": "ada\x00"}  # fmt: skip
        await ws.send(json.dumps(answer))
        refused = await until(ws, {"type": "error"})  # a frame off the shape: no id to echo
        assert refused["error"] == "invalid request", refused
        assert [c["path"].rsplit("/", 1)[-1] for c in refused["complaints"]] == ["answered_by"]
        assert "holds a NUL character" in refused["message"]
    with server.client() as http:
        (pending,) = http.get(f"/api/runs/{run_id}/interactions/pending").json()["interactions"]
    assert pending["id"] == "int-c1" and pending["answer"] is None


async def test_a_frame_over_the_limit_closes_the_connection(server: Server) -> None:
    async with client(server) as ws:
        await ws.send(json.dumps({"type": "ping", "id": "x" * (70 << 10)}))
        with pytest.raises(ConnectionClosed) as closed:
            await frame(ws)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({}, 401),
        ({"Authorization": "Bearer wrong"}, 401),
        ({"Authorization": "Basic abc"}, 401),
        ({"Origin": "https://evil.example"}, 403),
        ({"Origin": "http://127.0.0.1:1"}, 403),
    ],
)
async def test_the_handshake_is_refused(
    server: Server, headers: dict[str, str], status: int
) -> None:
    if "Origin" in headers:
        headers = headers | server.headers  # the right token, from the wrong page
    with pytest.raises(InvalidStatus) as refused:
        async with connect(server.ws_url, additional_headers=headers, proxy=None, open_timeout=10):
            pass
    assert refused.value.response.status_code == status
    body = json.loads(refused.value.response.body)
    assert body["error"] == ("unauthorized" if status == 401 else "forbidden")


async def test_a_browser_sends_the_token_as_a_subprotocol_from_the_servers_own_origin(
    server: Server,
) -> None:
    origin = server.url.rstrip("/")
    async with connect(
        server.ws_url,
        subprotocols=["pi-recipes.v1", f"bearer.{server.token}"],  # type: ignore[list-item]
        additional_headers={"Origin": origin},
        proxy=None,
        open_timeout=10,
    ) as ws:
        assert ws.subprotocol == "pi-recipes.v1", "the token is never echoed"
        assert (await frame(ws))["type"] == "hello"
    with pytest.raises(InvalidStatus) as refused:
        async with connect(
            server.ws_url,
            subprotocols=["pi-recipes.v1", "bearer.wrong"],  # type: ignore[list-item]
            proxy=None,
            open_timeout=10,
        ):
            pass
    assert refused.value.response.status_code == 401


def _frames(data: bytes) -> list[tuple[int, bytes]]:
    """(opcode, payload) of each unmasked server frame in ``data``."""
    out, i = [], 0
    while i + 2 <= len(data):
        opcode, size = data[i] & 0x0F, data[i + 1] & 0x7F
        i += 2
        if size == 126:
            size, i = int.from_bytes(data[i : i + 2], "big"), i + 2
        out.append((opcode, data[i : i + size]))
        i += size
    return out


async def test_pings_keep_clients_alive_and_close_one_that_does_not_answer(
    tmp_path: Path,
) -> None:
    with serving(tmp_path, args=("--ping-interval", "0.3")) as pinging:
        host, port = pinging.url.removeprefix("http://").rstrip("/").split(":")
        key = base64.b64encode(os.urandom(16)).decode()
        handshake = (
            f"GET /ws HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
            f"Authorization: Bearer {pinging.token}\r\n\r\n"
        )
        async with client(pinging) as alive, await anyio.connect_tcp(host, int(port)) as deaf:
            await deaf.send(handshake.encode())
            received = b""
            with anyio.fail_after(10):
                while True:  # never answers a ping: the server closes it
                    try:
                        received += await deaf.receive()
                    except anyio.EndOfStream:
                        break
            head, _, body = received.partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 101")
            frames = _frames(body)
            assert 0x9 in [op for op, _ in frames], "the server pinged"
            (close,) = [payload for op, payload in frames if op == 0x8]
            assert int.from_bytes(close[:2], "big") == 1011
            await alive.send(json.dumps({"type": "ping", "id": "still"}))  # it answered pings
            assert await until(alive, {"type": "pong"}) == {"type": "pong", "id": "still"}


async def test_one_run_subscription_sees_only_that_run(server: Server) -> None:
    first = await start(server, "text: One?")
    async with client(server, first) as ws:
        second = await start(server, "text: Two?")
        async with server.async_client() as http:
            for run_id in (second, first):
                await http.post(
                    f"/api/runs/{run_id}/interactions/int-c1/answer", json={"answer": "x"}
                )
        seen = await until(ws, {"type": "interrupt.resolved"})
        assert seen["run_id"] == first
        done = await until(ws, {"type": "run.status", "to": "finished"})
        assert done["run_id"] == first


async def test_an_answer_given_by_another_process_arrives_within_a_second(
    server: Server,
) -> None:
    run_id = await start(server, "text: Name?")
    async with client(server, run_id) as ws:
        answered = await anyio.to_thread.run_sync(
            lambda: pi("runs", "answer", run_id, "int-c1", "Zoe", "--by", "cli-user",
                       "--store", server.store, cwd=server.cwd)
        )  # fmt: skip
        given = time.monotonic()
        assert answered.returncode == 0, answered.stderr
        resolved = await until(ws, {"type": "interrupt.resolved"}, timeout=1.0)
        assert time.monotonic() - given < 1.0
        assert (resolved["answered_by"], resolved["via"]) == ("cli-user", "cli")


async def test_a_client_that_does_not_read_is_dropped_with_a_clear_close_code(
    server: Server,
) -> None:
    blob = base64.b64encode(os.urandom(24 << 10)).decode()  # 32 KiB that do not compress
    run_id = await start(server, f"text: Flood? {blob}")  # a question of 32 KiB
    count = 600  # ~19 MB: more than the client's buffer and the sockets hold
    dropped = "dropping a WebSocket client (4008): too slow"
    before = server.log.read_text().count(dropped)
    async with (
        client(server, max_queue=1) as slow,  # subscribed to all, then never reads
        client(server, run_id) as reader,
        await open_sqlite_store(server.store) as store,
    ):
        got = 0
        for start_at in range(0, count, 50):  # paced by the reader, which keeps up
            opened = ("interaction_requested", {"interaction_id": "int-c1"})
            await store.append_events(run_id, [opened] * 50)  # each a frame with the question
            with anyio.fail_after(30):
                while got < start_at + 50:  # it receives every frame
                    got += (await frame(reader, 30)).get("type") == "interrupt.opened"
        with anyio.fail_after(30):  # within a bound (a frame waits 10 s to leave at most)
            while True:  # the slow client still reads nothing; the server's log tells
                if server.log.read_text().count(dropped) > before:
                    break
                await anyio.sleep(0.05)
        with anyio.fail_after(30), pytest.raises(ConnectionClosed) as closed:
            while True:
                await slow.recv()
        assert closed.value.rcvd is not None
        assert closed.value.rcvd.code == 4008
        assert closed.value.rcvd.reason.startswith("too slow")
    async with server.async_client() as http:  # the server is fine
        await http.post(f"/api/runs/{run_id}/interactions/int-c1/answer", json={"answer": "y"})
        with httpx.Client(base_url=server.url, headers=server.headers) as sync:
            wait_for_status(sync, run_id, {"finished"})


async def test_the_token_never_reaches_the_servers_log(server: Server) -> None:
    async with client(server) as ws:  # header and subprotocol handshakes, then traffic
        await ws.send(json.dumps({"type": "ping"}))
        await until(ws, {"type": "pong"})
    log = server.log.read_text()
    assert '"WebSocket /ws" [accepted]' in log, "the access log is on"
    assert server.token not in log


async def test_a_binary_frame_is_utf8_json_and_one_that_is_not_changes_nothing(
    server: Server,
) -> None:
    run_id = await anyio.to_thread.run_sync(server.start_run, "text: Name?")
    answer = {"type": "answer", "run_id": run_id, "interaction_id": "int-c1"}
    async with client(server, run_id) as ws:
        latin1 = json.dumps(
            answer | {"id": "b1", "payload": {"answer": "café"}}, ensure_ascii=False
        )
        await ws.send(latin1.encode("latin-1"))  # a binary frame, not UTF-8
        refused = await frame(ws)
        assert (refused["type"], refused["error"]) == ("error", "invalid request")
        assert "Invalid JSON" in refused["message"]
        async with server.async_client() as http:
            pending = (await http.get(f"/api/runs/{run_id}/interactions/pending")).json()
        assert [i["id"] for i in pending["interactions"]] == ["int-c1"], "nothing was stored"
        utf8 = json.dumps(answer | {"id": "b2", "payload": {"answer": "café"}}, ensure_ascii=False)
        await ws.send(utf8.encode())
        assert (await until(ws, {"id": "b2"}))["type"] == "ack"
    with httpx.Client(base_url=server.url, headers=server.headers) as http:
        done = wait_for_status(http, run_id, {"finished"})
    assert done["text"] == "Done: Answer: café"


async def test_subscribing_to_an_unknown_run_is_refused_and_the_subscription_stays(
    server: Server,
) -> None:
    async with client(server) as ws:  # every run
        await ws.send(json.dumps({"type": "subscribe", "run_id": "client-run-1", "id": "s2"}))
        refused = await until(ws, {"id": "s2"})
        assert (refused["type"], refused["error"], refused["run_id"]) == (
            "error", "unknown run", "client-run-1"
        )  # fmt: skip
        run_id = await start(server, "text: Still subscribed?")
        assert (await until(ws, {"type": "run.status", "run_id": run_id}))["to"]


async def test_a_client_that_resets_its_connection_leaves_no_traceback(tmp_path: Path) -> None:
    """A client gone with a TCP reset while frames were on their way to it: each such send
    logged 'Exception in ASGI application' and a traceback (the send's disconnect escaped)."""
    with serving(tmp_path) as server:
        runs = [server.start_run("text: Name?") for _ in range(12)]
        for run_id in runs:
            async with client(server) as ws:
                await ws.send(json.dumps({"type": "answer", "id": "a", "run_id": run_id,
                                          "interaction_id": "int-c1",
                                          "payload": {"answer": "Zoe"}}))  # fmt: skip
                sock = ws.transport.get_extra_info("socket")
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                ws.transport.abort()  # a reset, at once, frames still coming
        with server.client() as http:
            for run_id in runs:
                assert wait_for_status(http, run_id, {"finished"})["status"] == "finished"
        log = server.log.read_text()
    assert "Traceback" not in log and "Exception in ASGI application" not in log, log[-3000:]
