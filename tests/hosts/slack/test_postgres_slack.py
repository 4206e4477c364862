"""The Slack host on PostgreSQL: the whole flow, and a card that follows an answer written
through another connection (woken by the store's NOTIFY). Skips without a server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from interactions.store import RunStatus
from recipes.runs import Runner
from tests.hosts.slack.harness import is_card, next_card, wait_status, world
from tests.hosts.slack.payloads import block_actions
from tests.interactions.store.conftest import schema  # noqa: F401  (the fixture)
from tests.interactions.store.test_postgres import DSN

pytestmark = pytest.mark.anyio


@pytest.fixture
async def postgres(schema: str) -> AsyncIterator[object]:  # noqa: F811
    from interactions.store import open_postgres_store

    async with await open_postgres_store(DSN, schema=schema, poll_interval=600) as store:
        yield store


async def test_the_demo_on_postgres_and_an_answer_from_another_connection(
    tmp_path: Path,
    postgres: object,
    schema: str,  # noqa: F811
) -> None:
    from interactions.store import open_postgres_store

    async with world(tmp_path, store=postgres) as w:  # type: ignore[arg-type]
        await w.mention("<@UBOT> Release v1.4.0")
        run_id = await w.run_id()
        card = await w.fake.wait_for("chat.postMessage", is_card)
        async with await open_postgres_store(DSN, schema=schema, poll_interval=600) as other:
            await Runner(other, env={}, host="web").answer(
                run_id, "int-call_channel", {"answer": "Nightly"}, answered_by="bob"
            )
        updated = await w.fake.wait_for("chat.update", lambda c: c.args["ts"] == card.result["ts"])
        assert "Answered by bob via web: *Nightly*" in updated.text
        await wait_status(w.store, run_id, RunStatus.PAUSED_WAITING_HUMAN)
        await w.host.runner.resume_answered(run_id)
        approval = await next_card(w.fake, card)
        await w.interact(block_actions(approval, "pi_approve", user="UALICE"))
        await wait_status(w.store, run_id, RunStatus.FINISHED)
        done = await w.fake.wait_for("chat.postMessage", lambda c: "Published" in c.text)
        assert done.args["thread_ts"] == "1699999999.000100"
