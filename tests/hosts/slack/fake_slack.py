"""A local fake of the Slack we talk to: the Web API methods the host calls, and a Socket Mode
WebSocket that sends envelopes and records acks. A real aiohttp server on 127.0.0.1; every call
is recorded; waits are bounded."""

from __future__ import annotations

import itertools
import json
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
from aiohttp import WSMsgType, web

BOT_TOKEN = "xoxb-test-bot-0123456789"
APP_TOKEN = "xapp-test-app-0123456789"
SIGNING_SECRET = "test-signing-secret-0123456789"
BOT_USER = "UBOT"
WAIT = 10.0
UNAVAILABLE = "upstream unavailable"


@dataclass(frozen=True)
class Call:
    """One Web API call: the method, its arguments (JSON body, form or query) and headers."""

    method: str
    args: dict[str, Any]
    headers: dict[str, str]
    at: float
    result: dict[str, Any]

    @property
    def text(self) -> str:
        """Everything shown: the ``text`` and the blocks' JSON, for assertions."""
        return json.dumps(
            {"text": self.args.get("text"), "blocks": self.args.get("blocks")}, ensure_ascii=False
        )


@dataclass
class FakeSlack:
    """Records calls; ``members``/``groups`` answer membership lookups; ``rate_limit`` makes
    the next call of each named method answer 429 with ``Retry-After``; ``refuse`` makes the
    next call of each named method answer ``ok: false`` with the error given; ``stall`` makes
    the next call of each named method wait that many seconds before it answers (or until the
    fake stops); ``members_page`` is how many members a page of ``conversations.members``
    lists; ``unavailable`` makes the next that many calls of each named method answer
    HTTP 503 with a ``text/plain`` body, as a proxy in front of Slack does (``UNAVAILABLE``);
    ``rate_limit_in`` makes every call of a method in a channel (``(method, channel)``) answer
    429 with that ``Retry-After``, as a busy channel does, until the entry is removed;
    ``hold`` keeps every call of a method in a channel (``(method, channel)``) waiting until
    :meth:`release` (or a bounded wait) lets it go on."""

    members: dict[str, list[str]] = field(default_factory=dict)
    groups: dict[str, list[str]] = field(default_factory=dict)
    rate_limit: dict[str, int] = field(default_factory=dict)
    rate_limit_in: dict[tuple[str, str], int] = field(default_factory=dict)
    hold: set[tuple[str, str]] = field(default_factory=set)
    members_page: int = 1000
    refuse: dict[str, str] = field(default_factory=dict)
    stall: dict[str, float] = field(default_factory=dict)
    unavailable: dict[str, int] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    acks: dict[str, dict[str, Any]] = field(default_factory=dict)
    port: int = 0
    _tick: anyio.Event = field(default_factory=anyio.Event)
    _stopping: anyio.Event = field(default_factory=anyio.Event)
    _ts: Any = field(default_factory=lambda: itertools.count(1))
    _sockets: list[web.WebSocketResponse] = field(default_factory=list)

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/"

    def _changed(self) -> None:
        self._tick.set()
        self._tick = anyio.Event()

    def _ts_next(self) -> str:
        return f"1700000000.{next(self._ts):06d}"

    # ------------------------------------------------------------------ Web API

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        args: dict[str, Any] = dict(request.query)
        if request.content_type == "application/json":
            args.update(await request.json())
        elif request.can_read_body:
            args.update(await request.post())
        if method in self.stall:
            with anyio.move_on_after(self.stall.pop(method)):
                await self._stopping.wait()
        with anyio.move_on_after(WAIT):
            while (method, args.get("channel")) in self.hold and not self._stopping.is_set():
                tick = self._tick
                await tick.wait()
        status, headers = 200, {}
        token = request.headers.get("Authorization", "").removeprefix("Bearer ")
        wanted = APP_TOKEN if method == "apps.connections.open" else BOT_TOKEN
        if self.unavailable.get(method):
            self.unavailable[method] -= 1
            status = 503  # recorded as if Slack had said so; answered in plain text
            result: dict[str, Any] = {"ok": False, "error": f"HTTP 503: {UNAVAILABLE}"}
        elif self.rate_limit.get(method) or (method, args.get("channel")) in self.rate_limit_in:
            busy = (method, args.get("channel"))
            wait = self.rate_limit.pop(method, None) or self.rate_limit_in[busy]
            status, headers = 429, {"Retry-After": str(wait)}
            result = {"ok": False, "error": "ratelimited"}
        elif token != wanted:
            result = {"ok": False, "error": "invalid_auth"}
        elif method in self.refuse:
            result = {"ok": False, "error": self.refuse.pop(method)}
        else:
            result = self._answer(method, args)
        self.calls.append(Call(method, args, dict(request.headers), anyio.current_time(), result))
        self._changed()
        if status == 503:
            return web.Response(status=status, text=UNAVAILABLE, content_type="text/plain")
        return web.json_response(result, status=status, headers=headers)

    def _answer(self, method: str, args: dict[str, Any]) -> dict[str, Any]:
        if method == "auth.test":
            return {"ok": True, "user": "pibot", "user_id": BOT_USER, "team": "Test Team"}
        if method == "chat.postMessage":
            return {"ok": True, "channel": args.get("channel"), "ts": self._ts_next()}
        if method == "chat.update":
            return {"ok": True, "channel": args.get("channel"), "ts": args.get("ts")}
        if method == "chat.postEphemeral":
            return {"ok": True, "message_ts": self._ts_next()}
        if method == "views.open":
            return {"ok": True, "view": {"id": f"V{uuid.uuid4().hex[:8].upper()}"}}
        if method == "apps.connections.open":
            return {"ok": True, "url": f"ws://127.0.0.1:{self.port}/link"}
        if method == "conversations.members":
            everyone = self.members.get(str(args.get("channel")), [])
            start = int(args.get("cursor") or 0)
            end = start + self.members_page
            return {
                "ok": True,
                "members": everyone[start:end],
                "response_metadata": {"next_cursor": str(end) if end < len(everyone) else ""},
            }
        if method == "usergroups.users.list":
            return {"ok": True, "users": self.groups.get(str(args.get("usergroup")), [])}
        return {"ok": False, "error": "unknown_method"}

    @property
    def hook_url(self) -> str:
        """A ``response_url`` on this fake: what is sent there is recorded as ``response_url``."""
        return f"http://127.0.0.1:{self.port}/hooks/commands/T1/1/x"

    async def _hook(self, request: web.Request) -> web.Response:
        args: dict[str, Any] = await request.json()
        at = anyio.current_time()
        self.calls.append(Call("response_url", args, dict(request.headers), at, {"ok": True}))
        self._changed()
        return web.Response(text="ok")

    def release(self, method: str, channel: str) -> None:
        """Let the calls of ``method`` in ``channel`` that ``hold`` keeps waiting go on."""
        self.hold.discard((method, channel))
        self._changed()

    def of(self, method: str) -> list[Call]:
        return [c for c in self.calls if c.method == method]

    async def wait_for(
        self, method: str, predicate: Callable[[Call], bool] = lambda c: True, *, after: int = 0
    ) -> Call:
        """The first call of ``method`` (from the ``after``-th call on) matching ``predicate``;
        fails after a bounded wait."""
        with anyio.fail_after(WAIT):
            while True:
                tick = self._tick
                for call in self.calls[after:]:
                    if call.method == method and predicate(call):
                        return call
                await tick.wait()

    # ------------------------------------------------------------------ Socket Mode

    async def _link(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self._sockets.append(ws)
        await ws.send_json({"type": "hello", "num_connections": 1})
        self._changed()
        async for message in ws:
            if message.type == WSMsgType.TEXT:
                data = json.loads(message.data)
                self.acks[str(data.get("envelope_id"))] = data
                self._changed()
        self._sockets.remove(ws)
        return ws

    async def send_envelope(
        self, type: str, payload: dict[str, Any], *, retry_attempt: int | None = None
    ) -> dict[str, Any]:
        """Send an envelope over the Socket Mode connection; return the client's ack."""
        envelope_id = f"env-{uuid.uuid4().hex[:12]}"
        envelope: dict[str, Any] = {
            "envelope_id": envelope_id,
            "type": type,
            "payload": payload,
            "accepts_response_payload": type != "events_api",
        }
        if retry_attempt is not None:
            envelope |= {"retry_attempt": retry_attempt, "retry_reason": "timeout"}
        with anyio.fail_after(WAIT):
            while not self._sockets:
                tick = self._tick
                await tick.wait()
            await self._sockets[-1].send_json(envelope)
            while envelope_id not in self.acks:
                tick = self._tick
                await tick.wait()
        return self.acks[envelope_id]


@asynccontextmanager
async def fake_slack() -> AsyncIterator[FakeSlack]:
    """Serve a :class:`FakeSlack` on 127.0.0.1 (a free port) for the block."""
    fake = FakeSlack()
    app = web.Application()
    app.router.add_post("/api/{method}", fake._api)
    app.router.add_get("/api/{method}", fake._api)
    app.router.add_get("/link", fake._link)
    app.router.add_post("/hooks/{path:.*}", fake._hook)
    runner = web.AppRunner(app, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    fake.port = runner.addresses[0][1]
    try:
        yield fake
    finally:
        fake._stopping.set()  # a stalled call answers now: nothing waits out its stall
        fake._changed()  # nor a held one
        for ws in list(fake._sockets):
            await ws.close()
        await runner.cleanup()
