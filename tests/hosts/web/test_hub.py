"""The hub's fan-out: frames reach their subscribers; a burst overfills an outbox for a moment
and the queued deltas of one message coalesce; a client that stays behind, or falls far
behind, is dropped with the close code for slow clients, and the others go on."""

from __future__ import annotations

import json
from collections.abc import Iterator

import anyio
import pytest

from hosts.web._frames import CLOSE_TOO_SLOW, PongFrame, RunEventFrame
from hosts.web._hub import ALL_RUNS, COALESCED_TEXT, OUTBOX_BYTES, OVERFILL, Client, Hub, pump

pytestmark = pytest.mark.anyio


@pytest.fixture
def hub() -> Iterator[Hub]:
    made = Hub()
    yield made
    for client in list(made.clients):
        made.leave(client)


class Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def subscribed(
    hub: Hub, subscription: str | None, buffer: int = 4, clock: Clock | None = None
) -> Client:
    client = Client(buffer, grace=10, clock=clock or Clock())
    client.subscription = subscription
    hub.join(client)
    return client


async def test_frames_reach_their_subscribers_only(hub: Hub) -> None:
    every, one, none = subscribed(hub, ALL_RUNS), subscribed(hub, "run-1"), subscribed(hub, None)
    assert hub.publish("run-1", PongFrame(id="a")) == 2
    assert hub.publish("run-2", PongFrame(id="b")) == 1
    assert [json.loads(every.take_nowait())["id"] for _ in range(2)] == ["a", "b"]
    assert json.loads(one.take_nowait())["id"] == "a"
    with pytest.raises(anyio.WouldBlock):
        none.take_nowait()


def delta(text: str, message: str = "m1", run_id: str = "run-1") -> RunEventFrame:
    event = {"type": "TEXT_MESSAGE_CONTENT", "messageId": message, "delta": text}
    return RunEventFrame(run_id=run_id, event=event, live=True)


async def test_queued_deltas_of_one_message_coalesce_in_order(hub: Hub) -> None:
    client = subscribed(hub, ALL_RUNS, buffer=4)
    for n in range(1_000):
        hub.publish("run-1", delta(f"{n} "))
    hub.publish("run-1", delta("other", message="m2"))
    hub.publish("run-1", PongFrame(id="p"))
    hub.publish("run-1", delta("again "))  # after another frame: a frame of its own
    frames = [json.loads(client.take_nowait()) for _ in range(len(client))]
    assert client.dropped is None
    assert [f["event"]["delta"] if f["type"] == "run.event" else f["id"] for f in frames] == [
        "".join(f"{n} " for n in range(1_000)), "other", "p", "again "
    ]  # fmt: skip
    assert frames[0]["event"] == {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1",
                                  "delta": frames[0]["event"]["delta"]}  # fmt: skip


async def test_a_coalesced_frame_stays_small(hub: Hub) -> None:
    client = subscribed(hub, ALL_RUNS, buffer=64)
    for _ in range(100):
        hub.publish("run-1", delta("x" * 1_000))
    sizes = [len(json.loads(client.take_nowait())["event"]["delta"]) for _ in range(len(client))]
    assert sum(sizes) == 100_000 and max(sizes) <= COALESCED_TEXT


async def test_a_burst_overfills_an_outbox_for_a_moment(hub: Hub) -> None:
    clock = Clock()
    client = subscribed(hub, ALL_RUNS, buffer=2, clock=clock)
    for n in range(2 * OVERFILL - 1):  # distinct frames, faster than any sender
        assert hub.publish("run-1", PongFrame(id=str(n))) == 1
    clock.now += 9  # within the grace
    assert hub.publish("run-1", PongFrame(id="last")) == 1
    taken = [json.loads(client.take_nowait())["id"] for _ in range(len(client))]
    assert client.dropped is None
    assert taken == [str(n) for n in range(2 * OVERFILL - 1)] + ["last"]
    clock.now += 60  # drained meanwhile: the clock of the overfill starts again
    for n in range(3):
        assert hub.publish("run-1", PongFrame(id=str(n))) == 1
    assert client.dropped is None


async def test_a_client_that_stays_behind_is_dropped_that_one_only(hub: Hub) -> None:
    clock = Clock()
    slow = subscribed(hub, ALL_RUNS, buffer=2, clock=clock)
    fine = subscribed(hub, ALL_RUNS, buffer=8, clock=clock)
    for n in range(3):
        hub.publish("run-1", PongFrame(id=str(n)))
    fine.take_nowait(), fine.take_nowait(), fine.take_nowait()  # fmt: skip
    clock.now += 11  # over its buffer for longer than the grace
    assert hub.publish("run-1", PongFrame(id="after")) == 1
    assert slow.dropped is not None and slow.dropped[0] == CLOSE_TOO_SLOW
    assert slow.dropped[1] == "too slow: its frames were not read for 10 s"
    assert fine.dropped is None and len(slow) == 0


async def test_a_client_far_behind_is_dropped_at_once(hub: Hub) -> None:
    client = subscribed(hub, ALL_RUNS, buffer=2)
    for n in range(2 * OVERFILL + 1):
        hub.publish("run-1", PongFrame(id=str(n)))
    assert client.dropped is not None and client.dropped[0] == CLOSE_TOO_SLOW
    assert client.dropped[1] == f"too slow: {2 * OVERFILL} frames were not read"


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


async def test_a_client_holding_too_much_text_is_dropped_at_once(hub: Hub) -> None:
    client = subscribed(hub, ALL_RUNS, buffer=4096)
    big = delta("x" * COALESCED_TEXT)
    for _ in range(OUTBOX_BYTES // COALESCED_TEXT):
        hub.publish("run-1", big)
    assert client.dropped is None
    hub.publish("run-1", delta("x"))
    assert client.dropped is not None and client.dropped[0] == CLOSE_TOO_SLOW
    assert client.dropped[1].endswith("bytes of frames were not read")
