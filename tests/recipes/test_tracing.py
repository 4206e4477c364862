"""Tracing in-process: a run paused in one runner and resumed by another, on one store, is one
trace whose spans name the legs, the model calls, the tool calls, their asks and the wait."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from ag_ui.core import ResumeEntry
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from interactions.store import RunStatus, Store, open_sqlite_store
from recipes import tracing
from recipes.runs import Runner
from tests.recipes.runs.conftest import RELEASE, postgres_stores

pytestmark = pytest.mark.anyio


class Traced:
    """What the test's providers got."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.metrics = InMemoryMetricReader()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        tracing.configure(provider, MeterProvider(metric_readers=[self.metrics]))

    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def named(self, prefix: str) -> list[ReadableSpan]:
        return [s for s in self.spans() if s.name.startswith(prefix)]

    def metric(self, name: str) -> list[object]:
        data = self.metrics.get_metrics_data()
        assert data is not None
        return [
            point
            for resource in data.resource_metrics
            for scope in resource.scope_metrics
            for metric in scope.metrics
            if metric.name == name
            for point in metric.data.data_points
        ]


@pytest.fixture
def traced() -> Iterator[Traced]:
    found = Traced()
    yield found
    tracing.configure(None)


@pytest.fixture(params=["sqlite", "postgres"])
async def two_stores(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[Store, Store]]:
    """Two store instances on one database, as two processes would hold them."""
    if request.param == "sqlite":
        async with (
            await open_sqlite_store(tmp_path / "state.db") as one,
            await open_sqlite_store(tmp_path / "state.db") as two,
        ):
            yield one, two
    else:
        async with postgres_stores("the tracing tests", 2) as (one, two):
            yield one, two


def entry(interrupt_id: str, payload: object) -> ResumeEntry:
    return ResumeEntry(interrupt_id=interrupt_id, status="resolved", payload=payload)  # type: ignore[arg-type]


async def test_a_paused_run_resumed_elsewhere_is_one_trace(
    traced: Traced, two_stores: tuple[Store, Store]
) -> None:
    first, second = two_stores
    paused = await Runner(first, env={}, host="cli").start(RELEASE, "Release v1.4.0")
    assert paused.status is RunStatus.PAUSED_WAITING_HUMAN
    (leg1,) = traced.named("leg ")
    stored = (await first.get_run(paused.run_id)).checkpoint["trace"]
    assert stored["traceparent"].split("-")[2] == format(leg1.context.span_id, "016x")

    other = Runner(second, env={}, host="web")
    await other.resume(paused.run_id, [entry("int-call_channel", {"answer": "beta"})])
    done = await other.resume(paused.run_id, [entry("int-call_publish", {"approved": True})])
    assert done.status is RunStatus.FINISHED

    spans = traced.spans()
    assert len({s.context.trace_id for s in spans}) == 1, [s.name for s in spans]
    legs = traced.named("leg ")
    assert [s.attributes["pi_recipes.leg.number"] for s in legs] == [1, 2, 3]
    assert [s.attributes["pi_recipes.leg.status"] for s in legs] == [
        "paused_waiting_human", "paused_waiting_human", "finished",
    ]  # fmt: skip
    assert {s.attributes["pi_recipes.run.id"] for s in legs} == {paused.run_id}
    # each leg continues the one before it
    assert legs[1].parent.span_id == legs[0].context.span_id
    assert legs[2].parent.span_id == legs[1].context.span_id
    assert legs[0].parent is None

    chats = traced.named("chat ")
    assert chats and all(s.attributes["gen_ai.operation.name"] == "chat" for s in chats)
    assert all("gen_ai.input.messages" not in s.attributes for s in chats)  # no content capture
    tools = traced.named("execute_tool ")
    asked = [e for s in tools for e in s.events if e.name == "ask"]
    assert [e.attributes["pi_recipes.interaction.id"] for e in asked] == [
        "int-call_channel", "int-call_publish",
    ]  # fmt: skip
    assert {e.attributes["pi_recipes.ask.outcome"] for e in asked} == {"awaiting_user"}

    waits = traced.named("wait for a person")
    records = {r.id: r for r in await second.list_interactions(paused.run_id)}
    assert [w.attributes["pi_recipes.interaction.id"] for w in waits] == [
        "int-call_channel", "int-call_publish",
    ]  # fmt: skip
    for wait, parent in zip(waits, legs[:2], strict=True):
        record = records[str(wait.attributes["pi_recipes.interaction.id"])]
        assert record.answered_at is not None
        assert wait.start_time == int(record.requested_at.timestamp() * 1e9)
        assert wait.end_time == int(record.answered_at.timestamp() * 1e9)
        assert wait.attributes["pi_recipes.interaction.via"] == "web"
        assert wait.parent is not None and wait.parent.span_id == parent.context.span_id

    assert len(traced.metric("pi_recipes.interaction.time_to_answer")) == 1  # one series
    legs_counted = traced.metric("pi_recipes.legs")
    assert sum(p.value for p in legs_counted) == 3  # type: ignore[attr-defined]


async def test_content_capture_is_opt_in(
    traced: Traced, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(tracing.CAPTURE_CONTENT, "true")
    async with await open_sqlite_store(tmp_path / "state.db") as store:
        await Runner(store, env={}).start(RELEASE, "Release v1.4.0")
    (chat, *_) = traced.named("chat ")
    assert "Release v1.4.0" in str(chat.attributes["gen_ai.input.messages"])


async def test_off_a_run_keeps_no_trace(tmp_path: Path) -> None:
    tracing.configure(None)
    async with await open_sqlite_store(tmp_path / "state.db") as store:
        paused = await Runner(store, env={}).start(RELEASE, "Release v1.4.0")
        assert "trace" not in (await store.get_run(paused.run_id)).checkpoint


async def test_a_graph_run_traces_its_nodes_across_its_pause(
    traced: Traced, tmp_path: Path
) -> None:
    from recipes.graph import start_graph
    from recipes.messages import AssistantMessage
    from recipes.models import ScriptedModel
    from tests.recipes.graph.flows import PLAIN_FLOW, write_flow

    flow = write_flow(tmp_path, PLAIN_FLOW)
    model = ScriptedModel([AssistantMessage(text='{"draft": "faster resume"}')])
    async with await open_sqlite_store(tmp_path / "state.db") as store:
        runner = Runner(store, env={}, model=model, cwd=tmp_path)
        paused = await start_graph(runner, flow, vars={"audience": "ops"})
        assert paused.status is RunStatus.PAUSED_WAITING_HUMAN
        done = await runner.answer(paused.run_id, "int-approve.1", {"approved": True}, resume=True)
    assert done.run.status is RunStatus.FINISHED  # type: ignore[union-attr]
    spans = traced.spans()
    assert len({s.context.trace_id for s in spans}) == 1
    legs = traced.named("leg graph")
    assert len(legs) == 2 and legs[1].parent.span_id == legs[0].context.span_id  # type: ignore[union-attr]
    nodes = [s for s in spans if s.name.startswith("node ")]
    assert [s.attributes["pi_recipes.node.id"] for s in nodes] == ["draft", "approve", "approve",
                                                                   "publish"]  # fmt: skip
    assert [s.attributes["pi_recipes.node.status"] for s in nodes][:2] == ["finished", "paused"]
    assert {n.parent.span_id for n in nodes[:2]} == {legs[0].context.span_id}  # type: ignore[union-attr]
    (wait,) = traced.named("wait for a person")
    assert wait.attributes["pi_recipes.interaction.id"] == "int-approve.1"
    assert traced.named("chat ")[0].parent.span_id == nodes[0].context.span_id  # type: ignore[union-attr]


async def test_a_route_fallback_is_an_event_of_its_node(traced: Traced, tmp_path: Path) -> None:
    from recipes.graph import start_graph
    from tests.hosts.fake_providers import fake_providers, usage_window
    from tests.recipes.graph.fallback_flows import write_plan_phase

    flow = write_plan_phase(tmp_path)
    with fake_providers() as fake:
        fake.queue("openai", usage_window(reset="2s"))
        async with await open_sqlite_store(tmp_path / "state.db") as store:
            runner = Runner(store, env=fake.env(), cwd=tmp_path)
            done = await start_graph(runner, flow, vars={"plan_review_policy": "skip"})
    assert done.status is RunStatus.FINISHED
    (review,) = [s for s in traced.named("node ") if s.name == "node plan_review"]
    (fallback,) = [e for e in review.events if e.name == "route_fallback"]
    assert fallback.attributes["reason"] == "usage_window"  # type: ignore[index]
    assert fallback.attributes["to_action"] == "skip"  # type: ignore[index]
