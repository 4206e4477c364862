"""A Slack host wired to the fake Slack, over a real SQLite store, for the tests: in Socket Mode
(the fake's WebSocket) and/or serving its HTTP endpoints with uvicorn on a real socket."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
import uvicorn

from hosts.slack import (
    SlackConfig,
    SlackHost,
    SlackOut,
    slack_asgi_app,
    socket_mode,
    web_client,
)
from hosts.slack._client import DEFAULT_TIMEOUT, slack_session
from interactions.store import EventRecord, RunStatus, Store, open_sqlite_store
from recipes.runs import runner_for
from tests.hosts.slack.fake_slack import (
    APP_TOKEN,
    BOT_TOKEN,
    SIGNING_SECRET,
    WAIT,
    Call,
    FakeSlack,
    fake_slack,
)
from tests.hosts.slack.payloads import app_mention, form_body, signed

ROOT = Path(__file__).resolve().parents[3]
RELEASE = str(ROOT / "examples" / "release.py")
PROMPT = "Let me ask where to publish."  # the release recipe's first reply, before its card
RECIPES = str(Path(__file__).with_name("recipes_for_slack.py"))


@dataclass
class World:
    fake: FakeSlack
    store: Store
    host: SlackHost
    db: Path
    http: httpx.AsyncClient | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    async def mention(self, text: str, **kwargs: Any) -> dict[str, Any]:
        """Mention the app over Socket Mode; return the ack."""
        return await self.fake.send_envelope("events_api", app_mention(text, **kwargs))

    async def interact(self, payload: dict[str, Any]) -> dict[str, Any]:
        """Send an interactivity payload over Socket Mode; return the ack."""
        return await self.fake.send_envelope("interactive", payload)

    async def post(self, path: str, body: bytes, headers: dict[str, str]) -> httpx.Response:
        assert self.http is not None, "start the world with http=True"
        return await self.http.post(path, content=body, headers=headers)

    async def post_interaction(self, payload: dict[str, Any]) -> httpx.Response:
        body = form_body(payload)
        headers = {"Content-Type": "application/x-www-form-urlencoded", **signed(body)}
        return await self.post("/slack/interactivity", body, headers)

    async def run_id(self, after: int = 0) -> str:
        """The id of the first run created (after feed cursor ``after``), once it exists."""
        with anyio.fail_after(WAIT):
            async with self.store.watch(after=after) as feed:
                async for event in feed:
                    if event.type == "run_created":
                        return event.run_id
        raise AssertionError("the feed ended")


def is_card(call: Call) -> bool:
    """Whether a recorded call posts a card (a message with controls)."""
    return any(b["type"] == "actions" for b in call.args.get("blocks") or [])


async def next_card(fake: FakeSlack, *seen: Call) -> Call:
    """The first posted card that is none of ``seen``."""
    return await fake.wait_for("chat.postMessage", lambda c: is_card(c) and c not in seen)


async def wait_status(store: Store, run_id: str, *statuses: RunStatus) -> None:
    """Wait (bounded) until the run is in one of ``statuses``."""
    seen = 0
    with anyio.fail_after(WAIT):
        while (await store.get_run(run_id)).status not in statuses:
            events = await store.wait_for_events(run_id, after_seq=seen, timeout=WAIT)
            seen = events[-1].seq if events else seen


async def wait_event(store: Store, run_id: str, type: str, count: int = 1) -> list[EventRecord]:
    """Wait (bounded) until the run has ``count`` events of ``type``; return them."""
    seen = 0
    with anyio.fail_after(WAIT):
        while len(found := await events_of(store, run_id, type)) < count:
            events = await store.wait_for_events(run_id, after_seq=seen, timeout=WAIT)
            seen = events[-1].seq if events else seen
    return found


async def events_of(store: Store, run_id: str, type: str) -> list[EventRecord]:
    return [e for e in await store.list_events(run_id) if e.type == type]


async def payload_of(store: Store, answered: EventRecord) -> object:
    """The payload an ``interaction_answered`` event stands for (the interaction's row holds it)."""
    record = await store.get_interaction(answered.run_id, str(answered.data["interaction_id"]))
    return record.answer.payload if record.answer else None


@asynccontextmanager
async def world(
    tmp_path: Path,
    *,
    recipe: str = RELEASE,
    socket_mode_on: bool = True,
    http: bool = False,
    store: Store | None = None,
    **config: Any,
) -> AsyncIterator[World]:
    """A running Slack host on the fake, and the fake; Socket Mode connected unless told
    otherwise, its HTTP endpoints served by uvicorn on 127.0.0.1 when ``http``."""
    async with AsyncExitStack() as stack:
        fake = await stack.enter_async_context(fake_slack())
        db = tmp_path / "state.db"
        if store is None:  # a SQLite file, unless the test brings its store
            store = await stack.enter_async_context(await open_sqlite_store(db))
        timeout = int(config.pop("client_timeout", DEFAULT_TIMEOUT))
        session = await stack.enter_async_context(slack_session(timeout))  # as serve opens it
        client = web_client(BOT_TOKEN, session, api_url=fake.api_url, timeout=timeout)
        settings = {"expire_every": 3600.0} | config
        runner = runner_for(store, env={}, host="slack", cwd=ROOT)
        host = SlackHost(SlackConfig(recipe=recipe, **settings), runner, SlackOut(client))
        await stack.enter_async_context(host.running())
        if socket_mode_on:
            await stack.enter_async_context(socket_mode(host, APP_TOKEN, client))
        found = World(fake=fake, store=store, host=host, db=db)
        if http:
            found.http = await stack.enter_async_context(_serve_http(host))
        yield found


@asynccontextmanager
async def _serve_http(host: SlackHost) -> AsyncIterator[httpx.AsyncClient]:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)  # connections queue until uvicorn accepts: no wait for it to start
    port = listener.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(slack_asgi_app(host, SIGNING_SECRET), lifespan="off", log_level="warning")
    )
    async with anyio.create_task_group() as group:
        group.start_soon(server.serve, [listener])
        async with httpx.AsyncClient(
            base_url=f"http://127.0.0.1:{port}", timeout=WAIT, trust_env=False
        ) as client:
            yield client
        server.should_exit = True
