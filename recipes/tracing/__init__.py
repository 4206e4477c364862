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

from recipes.tracing._calls import (
    Call,
    event,
    model_call,
    model_done,
    node,
    tool_asks,
    tool_call,
)
from recipes.tracing._config import (
    CAPTURE_CONTENT,
    SCOPE,
    configure,
    enabled,
    tracer_provider,
)
from recipes.tracing._legs import Leg, carried, carrying, leg
from recipes.tracing._ref import TraceRef

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
