"""The host kit's reminder sweep on real stores, with its clock injected: it writes what is
due as events of the run, the kit's reader reads them as ``QuestionReminded``, and a webhook
receiver (real HTTP, signatures verified) gets ``interaction.reminded`` and
``interaction.escalated``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest

from hosts._kit import (
    QuestionReminded,
    Reader,
    Webhook,
    WebhookSecret,
    delivering,
    sweep_reminders,
)
from interactions.store import MemoryStore, SQLiteStore, Store
from recipes.runs import Runner
from tests.hosts.kit.webhook_receiver import Receiver
from tests.recipes.runs.conftest import postgres_store

pytestmark = pytest.mark.anyio

RECIPE = str(Path(__file__).parents[2] / "recipes" / "runs" / "reminders_recipe.py")
SECRET = "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
REMINDED = ("interaction_reminded", "interaction_escalated")
FAST: dict[str, Any] = {"backoff": (0.01, 0.05), "renew_every": 0.05, "timeout": 2.0}


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    if request.param == "memory":
        async with MemoryStore() as memory:
            yield memory
    elif request.param == "sqlite":
        async with SQLiteStore(tmp_path / "state.db", poll_interval=0.02) as sqlite:
            yield sqlite
    else:
        async with postgres_store("the kit's reminder tests") as pg:
            yield pg


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    got = Receiver(SECRET)
    yield got
    got.close()


class Clock:
    """The sweep's "now": moves only when the test moves it."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


async def _reminded(store: Store, run_id: str, after: int, types: int) -> list[str]:
    """Wait (bounded) until the run has ``types`` reminder events after seq ``after``."""
    seen: list[str] = []
    with anyio.fail_after(20):
        while len(seen) < types:
            events = await store.wait_for_events(run_id, after_seq=after, timeout=5)
            after = events[-1].seq if events else after
            seen += [e.type for e in events if e.type in REMINDED]
    return seen


async def test_the_sweep_reminds_and_escalates_and_a_webhook_hears_it(
    store: Store, tmp_path: Path, receiver: Receiver
) -> None:
    runner = Runner(store, cwd=tmp_path, env={})
    hook = [Webhook(receiver.url, WebhookSecret(SECRET))]
    async with delivering(store, hook, **FAST), anyio.create_task_group() as sweeps:
        started = await runner.start(RECIPE, "release it")
        (gate,) = started.interrupts
        asked = (await store.get_interaction(started.run_id, gate.id)).requested_at
        last = (await store.list_events(started.run_id))[-1].seq
        clock = Clock(asked + timedelta(minutes=59))
        sweeps.start_soon(sweep_reminders, store, 0.01, clock)
        await receiver.wait(received=1)  # interaction.opened: nothing else is due yet
        clock.now = asked + timedelta(hours=1)
        assert await _reminded(store, started.run_id, last, 1) == ["interaction_reminded"]
        clock.now = asked + timedelta(hours=4)
        seen = await _reminded(store, started.run_id, last, 3)
        assert seen == ["interaction_reminded", "interaction_escalated", "interaction_reminded"]
        await receiver.wait(received=4)
        sweeps.cancel_scope.cancel()
    posted = [(r.body["type"], r.body["data"]) for r in receiver.received]
    assert all(r.signed for r in receiver.received)
    assert posted[1:] == [
        ("interaction.reminded", {"interaction_id": gate.id, "count": 1, "approvers": ["ada"]}),
        ("interaction.escalated", {"interaction_id": gate.id, "added": ["group:oncall"],
                                   "approvers": ["ada", "group:oncall"]}),
        ("interaction.reminded", {"interaction_id": gate.id, "count": 4,
                                  "approvers": ["ada", "group:oncall"]}),
    ]  # fmt: skip
    events = await store.list_events(started.run_id)
    news = [await Reader(store).read(e) for e in events if e.type == "interaction_escalated"]
    assert news and isinstance(news[0], QuestionReminded)
    assert (news[0].escalated, news[0].added) == (True, ("group:oncall",))
