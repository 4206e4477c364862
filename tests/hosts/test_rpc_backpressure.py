"""Backpressure: a client that stops reading slows the RPC host down; nothing is lost.

The server runs in-process over real OS pipes (the boundary whose buffer fills), with a model
that streams many deltas and counts how far it got.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from hosts._stdio import FdReceiveStream, FdSendStream
from hosts.rpc import RpcServer
from hosts.rpc._outbox import Outbox
from recipes import load_recipe
from recipes.messages import AssistantMessage
from recipes.models import Completed, ModelEvent, ModelRequest, TextDelta
from tests.hosts.rpc_client import TEST_RECIPE
from tests.hosts.rpc_recipe import PROGRESS_STEPS

pytestmark = pytest.mark.anyio

DELTAS = 2_000


class FloodModel:
    """Streams ``DELTAS`` one-character deltas as fast as it is let; counts them."""

    name = "flood:test"

    def __init__(self) -> None:
        self.streamed = 0

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        for _ in range(DELTAS):
            self.streamed += 1
            yield TextDelta(delta="x")
        yield Completed(message=AssistantMessage(text="x" * DELTAS))


async def until_stalled(count: Callable[[], int], *, quiet: float = 0.25) -> int:
    """``count()`` once it is above zero and has not moved for ``quiet`` seconds (the pipe's
    reader and writer are threads: a task waiting on one looks blocked while it works)."""
    last, still = -1, 0.0
    while True:
        await anyio.sleep(0.025)
        now = count()
        still = still + 0.025 if now > 0 and now == last else 0.0
        if still >= quiet:
            return now
        last = now


async def read_until_settled(fd: int) -> list[dict[str, Any]]:
    stream, buffer, records = FdReceiveStream(fd), b"", []
    while True:
        buffer += await stream.receive()
        *lines, buffer = buffer.split(b"\n")
        records += [json.loads(line) for line in lines]
        if records and records[-1]["type"] == "agent_settled":
            return records


@asynccontextmanager
async def serving(server: RpcServer, first: bytes) -> AsyncIterator[int]:
    """``server`` running over real OS pipes, sent ``first``: yields the descriptor its output
    is read from; on leaving, its input ends (it returns) and every pipe end is closed."""
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    try:
        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:
                tg.start_soon(server.run, FdReceiveStream(in_read), FdSendStream(out_write))
                await FdSendStream(in_write).send(first)
                yield out_read
                os.close(in_write)
                in_write = -1
    finally:
        for fd in (in_read, in_write, out_read, out_write):
            if fd >= 0:
                os.close(fd)


async def test_a_client_that_stops_reading_pauses_the_model_and_loses_nothing() -> None:
    model = FloodModel()
    server = RpcServer(load_recipe(TEST_RECIPE), model=model, outbox_capacity=16)
    async with serving(server, b'{"type":"prompt","message":"go"}\n') as output:
        # Nobody reads: the model streams until the pipe and the outbox are full.
        stalled_at = await until_stalled(lambda: model.streamed)
        assert 0 < stalled_at < DELTAS // 4  # the pipe and the outbox hold the rest
        records = await read_until_settled(output)  # the client reads again
    deltas = [
        r
        for r in records
        if r["type"] == "message_update" and r["assistantMessageEvent"]["type"] == "text_delta"
    ]
    assert len(deltas) == DELTAS and model.streamed == DELTAS
    assert records[-1] == {"type": "agent_settled", "aborted": False}


async def test_the_outbox_makes_producers_wait_past_its_capacity_and_keeps_order() -> None:
    outbox = Outbox(capacity=2)
    got: list[int] = []
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:

            async def produce() -> None:
                for n in range(5):
                    await outbox.put({"n": n})
                outbox.close()

            tg.start_soon(produce)
            await anyio.wait_all_tasks_blocked()
            assert len(outbox) == 2  # the producer waits for room
            outbox.post({"n": 99})  # a listener that cannot wait is never refused
            assert len(outbox) == 3
            assert [r["n"] for r in await outbox.get(2)] == [0, 1]
            while True:
                try:
                    got += [r["n"] for r in await outbox.get()]
                except anyio.EndOfStream:
                    break
    assert got == [99, 2, 3, 4]


async def test_a_tools_progress_to_a_client_that_lags_is_its_latest_not_every_step() -> None:
    """A tool's ``on_update`` cannot wait for room: its records were queued past the capacity
    without bound (a tool reporting fast to a client that stopped reading grew the host's
    memory without end). Past the capacity, a call's queued progress record now takes the
    latest progress instead: the client gets fewer, the last step among them, then the end."""
    server = RpcServer(load_recipe(TEST_RECIPE), outbox_capacity=16)
    async with serving(server, b'{"type":"prompt","message":"progress"}\n') as output:
        await anyio.sleep(1)  # nobody reads meanwhile: the tool reports every step
        records = await read_until_settled(output)
    steps = [
        r["partialResult"]["content"][0]["text"]
        for r in records
        if r["type"] == "tool_execution_update"
    ]
    assert 0 < len(steps) < PROGRESS_STEPS // 2
    assert steps[-1] == f"step {PROGRESS_STEPS}"
    assert [int(step.split()[1]) for step in steps] == sorted(int(s.split()[1]) for s in steps)
    end = next(r for r in records if r["type"] == "tool_execution_end")
    assert end["result"]["content"] == [{"type": "text", "text": "done"}]


async def test_past_its_capacity_the_outbox_keeps_one_record_per_key_in_its_place() -> None:
    outbox = Outbox(capacity=2)
    outbox.post({"n": 0}, key="a")
    outbox.post({"n": 1})
    for n in range(2, 1000):
        outbox.post({"n": n}, key="a")  # past the capacity: replaces {"n": 0}, in its place
    assert len(outbox) == 2
    assert [r["n"] for r in await outbox.get(2)] == [999, 1]
    outbox.post({"n": 1000}, key="a")  # nothing of "a" queued now: it queues
    outbox.post({"n": 1001}, key="a")  # below the capacity: it queues too
    assert [r["n"] for r in await outbox.get(5)] == [1000, 1001]
