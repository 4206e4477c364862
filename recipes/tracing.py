"""Tracing and metrics: a run's whole life as one OpenTelemetry trace, across its pauses.

Off by default. It turns on, once per process, when the standard ``OTEL_*`` variables ask for
traces (``OTEL_TRACES_EXPORTER`` other than ``none``, or ``OTEL_EXPORTER_OTLP_ENDPOINT`` /
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` set) and ``OTEL_SDK_DISABLED`` is not ``true``, and the
SDK is installed (``pip install 'pi-recipes[otel]'``); or when an application hands its own
providers to :func:`configure`. Off, every call here is a cheap no-op and nothing of
OpenTelemetry is imported.

What is traced (span names, attributes: ``docs/tracing.md``): each leg of a run (its parent is
the context the run's previous leg stored in its checkpoint, so that a paused run's trace
continues in whichever process resumes it), each model call (the GenAI semantic conventions'
``chat`` span: model, tokens, finish reason; the messages only when
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` is ``true``), each tool call (with its
asks as events), each wait for a person (a span from the question's ``requested_at`` to its
``answered_at``, as the store holds them), each graph node and each route fallback.

Inside a Temporal workflow every call is a no-op: workflow code is replayed, and a span made
there would be made again on every replay.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
import time
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from interactions.store import InteractionRecord, RunRecord, Store

if TYPE_CHECKING:
    from recipes.messages import AssistantMessage, ToolCall
    from recipes.models._base import ModelRequest

__all__ = [
    "CAPTURE_CONTENT",
    "SCOPE",
    "Call",
    "Leg",
    "TraceRef",
    "carried",
    "carrying",
    "configure",
    "enabled",
    "event",
    "leg",
    "model_call",
    "model_done",
    "node",
    "tool_asks",
    "tool_call",
    "tracer_provider",
]

logger = logging.getLogger("recipes.tracing")

CAPTURE_CONTENT = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""The variable that lets model-call spans carry the messages' text (``true``): off, they
never do (the GenAI semantic conventions' opt-in)."""

SCOPE = "pi-recipes"
"""The instrumentation scope of every span and instrument (and the default service name)."""


class TraceRef(BaseModel):
    """Where a run's trace stands, kept in its checkpoint when a leg ends: the W3C
    ``traceparent`` (and ``tracestate``) of that leg's span, and when it ended (the waits the
    next leg shows are the questions answered after it)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    traceparent: str
    tracestate: str | None = None
    at: datetime


# ---------------------------------------------------------------------------- configuration


def _wants_traces(env: Mapping[str, str]) -> bool:
    """Whether ``env`` asks for traces the standard way (see the module docstring)."""
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporter = env.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if exporter:
        return exporter != "none"
    return bool(
        env.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip()
        or env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").strip()
    )


class _Tracing:
    """The process's tracer, meter and instruments (built only when tracing is on)."""

    def __init__(self, tracer_provider: Any, meter_provider: Any | None) -> None:
        from opentelemetry import metrics, trace
        from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

        self.trace = trace
        self.provider = tracer_provider
        self.tracer = tracer_provider.get_tracer(SCOPE)
        meter = (meter_provider or metrics.get_meter_provider()).get_meter(SCOPE)
        self.propagator = TraceContextTextMapPropagator()
        self.legs = meter.create_counter("pi_recipes.legs", "{leg}", "Legs of runs, by outcome")
        self.model_calls = meter.create_counter("pi_recipes.model.calls", "{call}", "Model calls")
        self.tokens = meter.create_histogram(
            "gen_ai.client.token.usage", "{token}", "Tokens used per model call"
        )
        self.model_duration = meter.create_histogram(
            "gen_ai.client.operation.duration", "s", "Duration of model calls"
        )
        self.open = meter.create_up_down_counter(
            "pi_recipes.interactions.open", "{interaction}", "Questions waiting for a person"
        )
        self.to_answer = meter.create_histogram(
            "pi_recipes.interaction.time_to_answer", "s", "From a question to its answer"
        )
        self.store_duration = meter.create_histogram(
            "pi_recipes.store.duration", "s", "Store writes that end a leg"
        )

    def parent_of(self, ref: TraceRef) -> Any:
        carrier = {"traceparent": ref.traceparent}
        if ref.tracestate:
            carrier["tracestate"] = ref.tracestate
        return self.propagator.extract(carrier)

    def ref_of(self, span: Any, at: datetime) -> TraceRef | None:
        carrier: dict[str, str] = {}
        self.propagator.inject(carrier, self.trace.set_span_in_context(span))
        if "traceparent" not in carrier:
            return None
        return TraceRef(
            traceparent=carrier["traceparent"], tracestate=carrier.get("tracestate"), at=at
        )


_UNSET: Any = object()
_state: Any = _UNSET
"""``None`` (off), a :class:`_Tracing` (on), or unset until the first call reads the
environment."""


def _from_environment() -> _Tracing | None:
    if not _wants_traces(os.environ):
        return None
    try:
        from opentelemetry import metrics, trace
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        logger.warning(
            "OTEL_* asks for traces but the OpenTelemetry SDK is not installed: "
            "pip install 'pi-recipes[otel]'; tracing stays off"
        )
        return None
    resource = Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME", SCOPE)})
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):  # the application set up none of its own
        provider = TracerProvider(resource=resource)  # sampling: OTEL_TRACES_SAMPLER[_ARG]
        for exporter in _span_exporters(os.environ):
            provider.add_span_processor(BatchSpanProcessor(exporter))
        trace.set_tracer_provider(provider)
    meter_provider = metrics.get_meter_provider()
    if not isinstance(meter_provider, MeterProvider):
        readers = _metric_readers(os.environ)
        meter_provider = MeterProvider(resource=resource, metric_readers=readers)
        metrics.set_meter_provider(meter_provider)
    return _Tracing(provider, meter_provider)


def _span_exporters(env: Mapping[str, str]) -> list[Any]:
    names = [n.strip().lower() for n in env.get("OTEL_TRACES_EXPORTER", "otlp").split(",")]
    found: list[Any] = []
    for name in names:
        if name == "otlp":
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            found.append(OTLPSpanExporter())  # endpoint, headers: OTEL_EXPORTER_OTLP_*
        elif name == "console":
            from opentelemetry.sdk.trace.export import ConsoleSpanExporter

            found.append(ConsoleSpanExporter())
        elif name and name != "none":
            logger.warning("OTEL_TRACES_EXPORTER names %r, which pi-recipes does not know", name)
    return found


def _metric_readers(env: Mapping[str, str]) -> list[Any]:
    name = env.get("OTEL_METRICS_EXPORTER", "otlp").strip().lower()
    if name != "otlp":
        return []
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

    return [PeriodicExportingMetricReader(OTLPMetricExporter())]


def configure(tracer_provider: Any | None, meter_provider: Any | None = None) -> None:
    """Trace this process's runs with ``tracer_provider`` (and record metrics with
    ``meter_provider``, else OpenTelemetry's global one); ``None`` turns tracing off. For an
    application that sets up OpenTelemetry itself, and for tests (an in-memory exporter). The
    environment is not read once this was called."""
    global _state
    _state = None if tracer_provider is None else _Tracing(tracer_provider, meter_provider)


def _on() -> _Tracing | None:
    global _state
    if _state is _UNSET:
        _state = _from_environment()
    if _state is None:
        return None
    if _in_workflow():
        return None  # replayed code: see the module docstring
    return _state  # type: ignore[no-any-return]


_carried: ContextVar[str | None] = ContextVar("pi_recipes_trace_carried", default=None)
"""The ``traceparent`` a leg stands for where no span can be made (inside a workflow)."""


def _in_workflow() -> bool:
    workflow = sys.modules.get("temporalio.workflow")
    return workflow is not None and bool(workflow.in_workflow())


def carried() -> str | None:
    """Inside a Temporal workflow's leg, the ``traceparent`` the leg stands for (derived from
    the run: the same on every replay), for the activities' input: their spans are its
    children (:func:`carrying`). ``None`` elsewhere."""
    return _carried.get()


@contextmanager
def carrying(traceparent: str | None) -> Iterator[None]:
    """Make ``traceparent`` (an activity's input: :func:`carried`) the current context while
    the block runs, so that its spans join the run's trace; nothing when tracing is off."""
    tracing = _on()
    if tracing is None or traceparent is None:
        yield
        return
    from opentelemetry import context

    token = context.attach(tracing.propagator.extract({"traceparent": traceparent}))
    try:
        yield
    finally:
        context.detach(token)


def _derived(run_id: str, number: int, stored: TraceRef | None) -> str:
    """A leg's ``traceparent`` computed from the run (no span, no randomness, no clock): the
    stored trace's id and flags (else ids hashed from the run's), a span id hashed from the
    run and the leg's number."""
    if stored is not None and len(parts := stored.traceparent.split("-")) == 4:
        trace_id, flags = parts[1], parts[3]
    else:
        trace_id, flags = hashlib.sha256(f"pi-recipes:{run_id}".encode()).hexdigest()[:32], "01"
    span_id = hashlib.sha256(f"pi-recipes:{run_id}:{number}".encode()).hexdigest()[:16]
    return f"00-{trace_id}-{span_id}-{flags}"


def enabled() -> bool:
    """Whether this process traces its runs (see the module docstring)."""
    return _on() is not None


def tracer_provider() -> Any | None:
    """The tracer provider this process's runs are traced with (``None``: tracing is off), for
    a host that instruments its own framework (the web host's FastAPI spans)."""
    tracing = _on()
    return None if tracing is None else tracing.provider


# ---------------------------------------------------------------------------- legs


class Leg:
    """One leg's span, as :func:`leg` hands it out: say how the leg ended, then keep
    :meth:`ref` in the checkpoint."""

    def __init__(
        self,
        tracing: _Tracing | None,
        span: Any,
        stored: TraceRef | None,
        derived: str | None = None,
    ) -> None:
        self._tracing, self._span, self._stored = tracing, span, stored
        self._derived = derived
        self.outcome = "error"

    def ended(self, status: str, *, interactions: Sequence[str] = ()) -> None:
        """The leg ended in ``status`` (a run status), pausing on ``interactions``."""
        self.outcome = status
        if self._span is not None:
            self._span.set_attribute("pi_recipes.leg.status", status)
            if interactions:
                self._span.set_attribute("pi_recipes.interaction.ids", list(interactions))
                self._tracing.open.add(len(interactions))  # type: ignore[union-attr]

    def ref(self, at: datetime) -> TraceRef | None:
        """What the checkpoint keeps of the trace: this leg's context (the run's previous one,
        unchanged, when tracing is off here)."""
        if self._derived is not None:
            return TraceRef(traceparent=self._derived, at=at)
        if self._tracing is None:
            return self._stored
        return self._tracing.ref_of(self._span, at) or self._stored

    def store_write(self, seconds: float) -> None:
        """The leg's closing write took ``seconds``."""
        if self._tracing is not None:
            self._tracing.store_duration.record(seconds, {"operation": "close_leg"})


@asynccontextmanager
async def leg(
    store: Store,
    run: RunRecord,
    *,
    number: int,
    stored: TraceRef | None,
    interactions: Sequence[InteractionRecord] | None = None,
) -> AsyncIterator[Leg]:
    """A span for leg ``number`` of ``run``, current while the leg runs.

    Its parent is ``stored`` (the context the run's previous leg kept) when there is one: the
    run's trace goes on, in whatever process this is; the context current here (a web
    request's span) is then a link. A run's first leg is a child of the current context. The
    waits for a person since the previous leg (``interactions`` answered after ``stored.at``,
    read from ``store`` when not given) are spans of their own, under the previous leg, from
    each question's ``requested_at`` to its ``answered_at``.
    """
    tracing = _on()
    if tracing is None:
        if _state is None or not _in_workflow():
            yield Leg(None, None, stored)
            return
        derived = _derived(run.id, number, stored)  # a workflow's leg: see carried()
        token = _carried.set(derived)
        try:
            yield Leg(None, None, stored, derived)
        finally:
            _carried.reset(token)
        return
    otel = tracing.trace
    attributes = {
        "pi_recipes.run.id": run.id,
        "pi_recipes.run.kind": run.kind,
        "pi_recipes.leg.number": number,
        "gen_ai.conversation.id": run.thread_id,
        "pi_recipes.thread.id": run.thread_id,
    }
    links = []
    if stored is not None:
        parent = tracing.parent_of(stored)
        here = otel.get_current_span().get_span_context()
        if here.is_valid:
            links.append(otel.Link(here))
        await _waits(tracing, store, run, stored, parent, interactions)
    else:
        parent = None
    span = tracing.tracer.start_span(
        f"leg {run.kind}", context=parent, attributes=attributes, links=links
    )
    handle = Leg(tracing, span, stored)
    try:
        with otel.use_span(span, end_on_exit=False, record_exception=True):
            yield handle
    finally:
        span.end()
        tracing.legs.add(1, {"pi_recipes.run.kind": run.kind, "outcome": handle.outcome})


async def _waits(
    tracing: _Tracing,
    store: Store,
    run: RunRecord,
    stored: TraceRef,
    parent: Any,
    interactions: Sequence[InteractionRecord] | None,
) -> None:
    if interactions is None:
        interactions = await store.list_interactions(run.id)
    for record in interactions:
        if record.answered_at is None or record.answered_at < stored.at:
            continue
        answer = record.answer
        status = answer.status if answer is not None else "resolved"
        via = (answer.via if answer is not None else None) or "unknown"
        waited = (record.answered_at - record.requested_at).total_seconds()
        span = tracing.tracer.start_span(
            "wait for a person",
            context=parent,
            start_time=_ns(record.requested_at),
            attributes={
                "pi_recipes.run.id": run.id,
                "pi_recipes.interaction.id": record.id,
                "pi_recipes.interaction.kind": record.kind or "question",
                "pi_recipes.interaction.status": status,
                "pi_recipes.interaction.via": via,
                "pi_recipes.interaction.wait_seconds": waited,
                "gen_ai.tool.call.id": record.tool_call_id,
            },
        )
        span.end(end_time=_ns(record.answered_at))
        tracing.open.add(-1)
        tracing.to_answer.record(waited, {"pi_recipes.interaction.via": via, "status": status})


def _ns(moment: datetime) -> int:
    return int(moment.timestamp() * 1_000_000_000)


# ---------------------------------------------------------------------------- inside a leg


class Call:
    """A model call's, a tool call's or a node's span, as a context manager that makes it
    current (nothing at all when tracing is off)."""

    __slots__ = ("_manager", "_span", "_tracing", "started")

    def __init__(
        self, tracing: _Tracing | None, name: str = "", attributes: Mapping[str, Any] = {}
    ) -> None:
        self._tracing, self._span, self.started = tracing, None, 0.0
        self._manager = (
            None
            if tracing is None
            else tracing.tracer.start_as_current_span(name, attributes=attributes)
        )

    def __enter__(self) -> Call:
        if self._manager is not None:
            self._span = self._manager.__enter__()
            self.started = time.monotonic()
        return self

    def __exit__(self, *raised: Any) -> None:
        if self._manager is not None:
            self._manager.__exit__(*raised)

    def set(self, name: str, value: Any) -> None:
        """Set attribute ``name`` on the span (nothing when tracing is off)."""
        if self._span is not None:
            self._span.set_attribute(name, value)


_OFF = Call(None)


def model_call(model_name: str, request: ModelRequest) -> Call:
    """A GenAI ``chat`` span around one model call (``with``); hand the message to
    :func:`model_done`."""
    tracing = _on()
    if tracing is None:
        return _OFF
    provider, _, model = model_name.partition(":")
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": provider,
        "gen_ai.request.model": model or model_name,
    }
    if _capture():
        attributes["gen_ai.input.messages"] = json.dumps(
            [_message_content(m) for m in request.messages]
        )
        if request.instructions:
            attributes["gen_ai.system_instructions"] = json.dumps(
                [{"type": "text", "content": request.instructions}]
            )
    return Call(tracing, f"chat {model or model_name}", attributes)


def model_done(call: Call, message: AssistantMessage, model_name: str) -> None:
    """Note the completed ``message`` on ``call``'s span, and count the call and its tokens."""
    tracing, span = call._tracing, call._span
    if tracing is None or span is None:
        return
    provider, _, model = model_name.partition(":")
    usage = message.usage
    if message.model:
        span.set_attribute("gen_ai.response.model", message.model)
    if message.stop_reason:
        span.set_attribute("gen_ai.response.finish_reasons", [message.stop_reason])
    kinds = {"gen_ai.provider.name": provider, "gen_ai.request.model": model or model_name}
    if usage is not None:
        span.set_attribute("gen_ai.usage.input_tokens", usage.input_tokens)
        span.set_attribute("gen_ai.usage.output_tokens", usage.output_tokens)
        tracing.tokens.record(usage.input_tokens, {**kinds, "gen_ai.token.type": "input"})
        tracing.tokens.record(usage.output_tokens, {**kinds, "gen_ai.token.type": "output"})
    if _capture():
        span.set_attribute("gen_ai.output.messages", json.dumps([_message_content(message)]))
    tracing.model_calls.add(1, kinds)
    tracing.model_duration.record(time.monotonic() - call.started, kinds)


def _capture() -> bool:
    return os.environ.get(CAPTURE_CONTENT, "").strip().lower() == "true"


def _message_content(message: Any) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    for part in getattr(message, "content", None) or ():
        text = getattr(part, "text", None)
        if text is not None:
            parts.append({"type": "text", "content": text})
    if isinstance(getattr(message, "text", None), str) and message.text:
        parts.append({"type": "text", "content": message.text})
    for call in getattr(message, "tool_calls", None) or ():
        parts.append({"type": "tool_call", "id": call.id, "name": call.name})
    return {"role": message.role, "parts": parts}


def tool_call(call: ToolCall) -> Call:
    """A GenAI ``execute_tool`` span around one tool call (``with``)."""
    tracing = _on()
    if tracing is None:
        return _OFF
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": call.name,
        "gen_ai.tool.call.id": call.id,
        "gen_ai.tool.type": "function",
    }
    return Call(tracing, f"execute_tool {call.name}", attributes)


def tool_asks(asked: Sequence[Any]) -> None:
    """Add the asks a tool call made (their interrupts, each with its outcome) to the current
    span, one ``ask`` event each: its interaction id, reason and outcome (``awaiting_user``:
    the run pauses on it; its wait shows when the run resumes)."""
    if not asked or _on() is None:
        return
    from opentelemetry import trace

    span = trace.get_current_span()
    for interrupt in asked:
        outcome = getattr(interrupt.outcome, "type", None) or "awaiting_user"
        span.add_event(
            "ask",
            {
                "pi_recipes.interaction.id": interrupt.id,
                "pi_recipes.ask.reason": str(interrupt.reason),
                "pi_recipes.ask.outcome": outcome,
            },
        )
        if outcome == "awaiting_user":
            span.set_attribute("pi_recipes.ask.paused", True)


def node(name: str, kind: str, visit: int, branch: str) -> Call:
    """A span around one graph node's execution (``with``)."""
    tracing = _on()
    if tracing is None:
        return _OFF
    attributes = {
        "pi_recipes.node.id": name,
        "pi_recipes.node.kind": kind,
        "pi_recipes.node.visit": visit,
        "pi_recipes.node.branch": branch,
    }
    return Call(tracing, f"node {name}", attributes)


def event(name: str, attributes: Mapping[str, Any]) -> None:
    """Add event ``name`` to the current span (a route fallback); values that are not a
    string, a number or a bool are left out."""
    if _on() is None:
        return
    from opentelemetry import trace

    kept = {k: v for k, v in attributes.items() if isinstance(v, str | bool | int | float)}
    trace.get_current_span().add_event(name, kept)
