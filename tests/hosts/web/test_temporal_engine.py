"""The web host on the Temporal engine (``serve --engine``): runs started over REST pause on a
worker in another process, answers given over REST reach the WebSocket clients through the
engine's feed, and the run goes on to its end."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hosts.web.server import RELEASE, Server, serving, wait_for_status
from tests.hosts.web.test_ws import client, start, until

pytest.importorskip("temporalio", reason="the temporal extra is not installed")

from recipes.temporal import EngineAddress
from tests.recipes.temporal.workers import worker_process

pytestmark = pytest.mark.anyio


@pytest.fixture
def server(temporal_server: str, tmp_path: Path) -> Iterator[Server]:
    address = EngineAddress(temporal_server, "default", f"web-{uuid.uuid4().hex[:12]}")
    with worker_process(RELEASE, address), serving(tmp_path, store=address.url(),
                                                   recipe=RELEASE) as running:  # fmt: skip
        yield running


async def test_answers_over_rest_reach_the_page_and_the_run_ends(server: Server) -> None:
    async with client(server) as ws, server.async_client() as http:
        run_id = await start(server, "Release v2.0.0")
        opened = await until(ws, {"type": "interrupt.opened", "run_id": run_id}, timeout=30)
        assert opened["interaction"]["id"] == "int-call_channel"
        answer = f"/api/runs/{run_id}/interactions/int-call_channel/answer"
        reply = await http.post(answer, json={"answer": "beta", "answered_by": "ada"})
        assert reply.status_code == 200, reply.text
        resolved = await until(ws, {"type": "interrupt.resolved", "run_id": run_id}, 30)
        assert resolved["answered_by"] == "token"  # who signed in, not the body's name
        again = await http.post(answer, json={"answer": "stable"})
        assert again.status_code == 409, again.text
        # the host continued the run on the workers; its next question reaches the page
        await until(ws, {"type": "interrupt.opened", "run_id": run_id}, timeout=30)
        publish = f"/api/runs/{run_id}/interactions/int-call_publish/answer"
        reply = await http.post(publish, json={"approved": True})
        assert reply.status_code == 200, reply.text
    with server.client() as http:
        done = wait_for_status(http, run_id, {"finished"}, timeout=30)
        assert done["text"] == "Published v2.0.0. Approved."
