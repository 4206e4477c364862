"""A local OTLP/HTTP receiver for tests: an HTTP server that takes what an exporter sends to
``/v1/traces`` (protobuf, maybe gzipped), decodes it with opentelemetry-proto and keeps the
spans; ``/v1/metrics`` and ``/v1/logs`` are accepted and counted."""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


@dataclass
class ReceivedSpan:
    """One span as it arrived: ids in hex, attributes as plain values."""

    name: str
    trace_id: str
    span_id: str
    parent_span_id: str
    start: int
    end: int
    attributes: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]]
    links: list[tuple[str, str]]
    """(trace id, span id) of each span it links to."""
    service: str


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in any_value.array_value.values]
    return getattr(any_value, kind) if kind else None


def _attributes(pairs: Any) -> dict[str, Any]:
    return {kv.key: _value(kv.value) for kv in pairs}


@dataclass
class Receiver:
    """What the receiver got; ``endpoint`` is its base URL (``OTEL_EXPORTER_OTLP_ENDPOINT``)."""

    endpoint: str = ""
    spans: list[ReceivedSpan] = field(default_factory=list)
    other: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self, body: bytes) -> None:
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        for resource_spans in request.resource_spans:
            service = _attributes(resource_spans.resource.attributes).get("service.name", "")
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    found = ReceivedSpan(
                        name=span.name,
                        trace_id=span.trace_id.hex(),
                        span_id=span.span_id.hex(),
                        parent_span_id=span.parent_span_id.hex(),
                        start=span.start_time_unix_nano,
                        end=span.end_time_unix_nano,
                        attributes=_attributes(span.attributes),
                        events=[(e.name, _attributes(e.attributes)) for e in span.events],
                        links=[(k.trace_id.hex(), k.span_id.hex()) for k in span.links],
                        service=service,
                    )
                    with self.lock:
                        self.spans.append(found)

    def named(self, prefix: str) -> list[ReceivedSpan]:
        with self.lock:
            return [s for s in self.spans if s.name.startswith(prefix)]


@contextmanager
def otlp_receiver() -> Iterator[Receiver]:
    """Serve a :class:`Receiver` on a free local port while the block runs."""
    received = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            if self.path == "/v1/traces":
                received.take(body)
                reply = ExportTraceServiceResponse().SerializeToString()
            else:
                with received.lock:
                    received.other[self.path] = received.other.get(self.path, 0) + 1
                reply = b""
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    received.endpoint = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield received
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
