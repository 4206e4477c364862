"""Whether this process traces, and with what: read once from the ``OTEL_*`` variables, or set
by :func:`configure`. Nothing of OpenTelemetry is imported until tracing is on."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from recipes.tracing._ref import TraceRef

__all__ = ["CAPTURE_CONTENT", "SCOPE", "configure", "enabled", "tracer_provider"]

logger = logging.getLogger("recipes.tracing")

CAPTURE_CONTENT = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""The variable that lets model-call spans carry the messages' text (``true``): off, they
never do (the GenAI semantic conventions' opt-in)."""

SCOPE = "pi-recipes"
"""The instrumentation scope of every span and instrument (and the default service name)."""


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
        return None  # replayed code: a span made there would be made again on each replay
    return _state  # type: ignore[no-any-return]


def _in_workflow() -> bool:
    workflow = sys.modules.get("temporalio.workflow")
    return workflow is not None and bool(workflow.in_workflow())


def _off() -> bool:
    """Whether this process was found not to trace (read once, by the first call)."""
    return _state is None


def enabled() -> bool:
    """Whether this process traces its runs (see :mod:`recipes.tracing`)."""
    return _on() is not None


def tracer_provider() -> Any | None:
    """The tracer provider this process's runs are traced with (``None``: tracing is off), for
    a host that instruments its own framework (the web host's FastAPI spans)."""
    tracing = _on()
    return None if tracing is None else tracing.provider
