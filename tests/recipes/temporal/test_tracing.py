"""Tracing on the Temporal engine: the workflow makes no span (its code is replayed), but each
leg stands for a trace context derived from the run, kept in the checkpoint as on every
engine, and carried in its activities' input: the worker's model and tool calls are spans of
one trace, across the pause."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from interactions.store import RunStatus
from recipes import tracing
from tests.recipes.temporal.conftest import RELEASE, Engine

pytestmark = pytest.mark.anyio


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.configure(provider)
    yield exporter
    tracing.configure(None)


async def test_a_workflow_s_activities_are_one_trace_across_its_pause(
    spans: InMemorySpanExporter, engine: Engine
) -> None:
    runner = engine.runner
    started = await runner.start(RELEASE, "Release v7.2.0")
    assert started.status is RunStatus.PAUSED_WAITING_HUMAN
    run = (await engine.store.snapshot(started.run_id)).run
    assert run is not None
    first = run.checkpoint["trace"]["traceparent"]
    await runner.answer(started.run_id, "int-call_channel", {"answer": "beta"}, resume=True)
    done = await runner.answer(started.run_id, "int-call_publish", {"approved": True}, resume=True)
    assert done.run is not None and done.run.status is RunStatus.FINISHED

    found = list(spans.get_finished_spans())
    assert not [s for s in found if s.name.startswith("leg ")], "no span inside the workflow"
    chats = [s for s in found if s.name.startswith("chat ")]
    tools = [s for s in found if s.name.startswith("execute_tool ")]
    assert len(chats) == 3 and len(tools) == 2
    assert len({s.context.trace_id for s in found}) == 1
    assert format(chats[0].context.trace_id, "032x") == first.split("-")[1]
    legs = [format(s.parent.span_id, "016x") for s in chats]  # type: ignore[union-attr]
    assert legs[0] == first.split("-")[2] and len(set(legs)) == 3, "one parent per leg"
    (ask,) = [e for e in tools[0].events if e.name == "ask"]
    assert ask.attributes is not None
    assert ask.attributes["pi_recipes.interaction.id"] == "int-call_channel"
