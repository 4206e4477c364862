"""The web host's send path: whatever a route or a WebSocket handler sends, a credential of the
environment leaves as ``***`` (a JSON body with its length set again, an event stream piece by
piece, a WebSocket frame), and a body with none is sent untouched."""

from __future__ import annotations

from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route, WebSocketRoute
from starlette.testclient import TestClient
from starlette.websockets import WebSocket

from hosts.web._scrub import Scrubbed
from interactions.secrets import Secrets

KEY = "sk-proj-WEBLEAK0123456789abcdefZq9W"


async def as_json(request: Request) -> Response:
    return JSONResponse({"error": f"the gateway refused {KEY}", "escaped": "\\u0073k"})


async def as_events(request: Request) -> Response:
    async def events() -> AsyncIterator[str]:
        yield f"data: {KEY}\n\n"
        yield "data: fine\n\n"

    return StreamingResponse(events(), media_type="text/event-stream")


async def as_page(request: Request) -> Response:
    return PlainTextResponse("nothing secret here")


async def frames(ws: WebSocket) -> None:
    await ws.accept()
    await ws.send_text(f'{{"delta": "{KEY}"}}')
    await ws.send_bytes(KEY.encode())
    await ws.close()


def _client() -> TestClient:
    app = Starlette(routes=[
        Route("/json", as_json), Route("/events", as_events), Route("/page", as_page),
        WebSocketRoute("/ws", frames),
    ])  # fmt: skip
    return TestClient(Scrubbed(app, secrets=Secrets.from_env({"OPENAI_API_KEY": KEY})))


def test_every_body_and_frame_leaves_scrubbed() -> None:
    with _client() as client:
        body = client.get("/json")
        assert body.json() == {"error": "the gateway refused ***", "escaped": "\\u0073k"}
        assert body.headers["content-length"] == str(len(body.content))
        assert client.get("/events").text == "data: ***\n\ndata: fine\n\n"
        page = client.get("/page")
        assert page.text == "nothing secret here"
        with client.websocket_connect("/ws") as ws:
            assert ws.receive_text() == '{"delta": "***"}'
            assert ws.receive_bytes() == b"***"
