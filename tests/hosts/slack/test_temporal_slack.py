"""The Slack host on the Temporal engine: a mention starts a run on a worker, its questions
become cards through the engine's feed, clicks answer them, and the run ends in the thread."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from interactions.store import RunStatus
from tests.hosts.slack.harness import RELEASE, is_card, next_card, wait_status, world
from tests.hosts.slack.payloads import block_actions

pytest.importorskip("temporalio", reason="the temporal extra is not installed")

from recipes.temporal import EngineAddress, open_temporal_engine, running_worker

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # Temporal's SDK runs on asyncio


async def test_the_demo_on_the_temporal_engine(tmp_path: Path, temporal_server: str) -> None:
    address = EngineAddress(temporal_server, "default", f"slack-{uuid.uuid4().hex[:12]}")
    async with (
        running_worker(RELEASE, address),
        await open_temporal_engine(address.url()) as store,
        world(tmp_path, store=store) as w,
    ):
        await w.mention("<@UBOT> Release v1.4.0")
        run_id = await w.run_id()
        card = await w.fake.wait_for("chat.postMessage", is_card)
        await w.interact(block_actions(card, "pi_pick.1", user="UBOB", value="1"))
        updated = await w.fake.wait_for("chat.update", lambda c: c.args["ts"] == card.result["ts"])
        assert "Answered by <@UBOB>" in updated.text
        approval = await next_card(w.fake, card)
        await w.interact(block_actions(approval, "pi_approve", user="UALICE"))
        await wait_status(w.store, run_id, RunStatus.FINISHED)
        done = await w.fake.wait_for("chat.postMessage", lambda c: "Published" in c.text)
        assert done.args["thread_ts"] == "1699999999.000100"
