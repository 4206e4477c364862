"""The hub's fan-out: frames reach their subscribers; a client whose outbox is full is dropped
with the close code for slow clients, and the others go on."""

from __future__ import annotations

import json
from collections.abc import Iterator

import anyio
import pytest

from hosts.web._frames import CLOSE_TOO_SLOW, PongFrame
from hosts.web._hub import ALL_RUNS, Client, Hub, pump

pytestmark = pytest.mark.anyio


@pytest.fixture
def hub() -> Iterator[Hub]:
    made = Hub()
    yield made
    for client in list(made.clients):
        made.leave(client)


def subscribed(hub: Hub, subscription: str | None, buffer: int = 4) -> Client:
    client = Client(buffer)
    client.subscription = subscription
    hub.join(client)
    return client


async def test_frames_reach_their_subscribers_only(hub: Hub) -> None:
    every, one, none = subscribed(hub, ALL_RUNS), subscribed(hub, "run-1"), subscribed(hub, None)
    assert hub.publish("run-1", PongFrame(id="a")) == 2
    assert hub.publish("run-2", PongFrame(id="b")) == 1
    assert [json.loads(every.outbox.receive_nowait())["id"] for _ in range(2)] == ["a", "b"]
    assert json.loads(one.outbox.receive_nowait())["id"] == "a"
    with pytest.raises(anyio.WouldBlock):
        none.outbox.receive_nowait()


async def test_a_full_outbox_drops_that_client_only(hub: Hub) -> None:
    slow, fine = subscribed(hub, ALL_RUNS, buffer=2), subscribed(hub, ALL_RUNS, buffer=8)
    for n in range(3):
        hub.publish("run-1", PongFrame(id=str(n)))
    assert slow.dropped is not None and slow.dropped[0] == CLOSE_TOO_SLOW
    assert fine.dropped is None
    assert hub.publish("run-1", PongFrame(id="after")) == 1


async def test_a_frame_that_cannot_leave_in_time_drops_the_client() -> None:
    client = Client(4)
    client.send(PongFrame())

    async def stuck(text: str) -> None:
        await anyio.sleep_forever()

    with anyio.fail_after(5):
        await pump(client, stuck, send_timeout=0.05)
    assert client.dropped is not None and client.dropped[0] == CLOSE_TOO_SLOW
    assert "waited" in client.dropped[1]
    client.close()


async def test_pump_sends_in_order_and_nothing_after_a_drop() -> None:
    client = Client(8)
    sent: list[str] = []
    three = anyio.Event()

    async def send(text: str) -> None:
        sent.append(json.loads(text)["id"])
        if len(sent) == 3:
            three.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: pump(client, send, send_timeout=1))
        for n in range(3):
            client.send(PongFrame(id=str(n)))
        with anyio.fail_after(5):
            await three.wait()
        client.drop(CLOSE_TOO_SLOW, "too slow")
        assert not client.send(PongFrame(id="late"))
    assert sent == ["0", "1", "2"]
    client.close()
