"""The server's store feed: every store event becomes the frames the page's clients get, in
commit order; an event this server cannot show is skipped, never a feed stuck on it."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from hosts.web._feed import Feed
from hosts.web._hub import ALL_RUNS, Client, Hub
from interactions.store import EventRecord, InteractionRecord, MemoryStore, RunRecord
from interactions.testing.store_conformance import new_run
from recipes.runs import Claim, Runner, RunResult, RunView, Surface
from recipes.runs.agui import LEG_ENDED
from recipes.runs.drivers import register_driver

pytestmark = pytest.mark.anyio


class _Unshowable:
    """A run driver (the public extension point) with a bug: its legs' events cannot be
    rebuilt."""

    async def prepare(self, runner: Runner, run: RunRecord) -> None:
        return None

    async def proceed(self, runner: Runner, claim: Claim, surface: Surface) -> RunResult:
        raise NotImplementedError

    async def retry(self, runner: Runner, claim: Claim, surface: Surface) -> RunResult:
        raise NotImplementedError

    def view(self, run: RunRecord) -> RunView:
        return RunView()

    def leg_events(
        self, run: RunRecord, leg: EventRecord, interactions: dict[str, InteractionRecord]
    ) -> list[Any]:
        raise TypeError("this driver's leg record reader has a bug")


async def test_an_event_no_driver_can_show_is_skipped_and_the_feed_goes_on() -> None:
    """Before, the feed followed the store again from the event that failed, failed again, for
    ever: no page heard of anything after it."""
    register_driver("unshowable", _Unshowable())
    hub, client = Hub(), Client(buffer=64)
    client.subscription = ALL_RUNS
    hub.join(client)
    async with MemoryStore() as store, anyio.create_task_group() as tg:
        await tg.start(Feed(store, hub).run)
        bad = await store.create_run(new_run(kind="unshowable"))
        await store.append_events(bad.id, [(LEG_ENDED, {"run": "leg-1"})])
        good = await store.create_run(new_run())
        with anyio.fail_after(10):
            while (text := await client.take()) is not None:
                frame = json.loads(text)
                if frame.get("run", {}).get("id") == good.id:
                    break
        tg.cancel_scope.cancel()
    hub.leave(client)  # closes its outbox
