"""A Ray worker's OpenTelemetry whose OTLP endpoint is down (``Telemetry(worker_setup=
"tests.batch.otel_down:setup")``): every export waits 60 s, then fails."""

from __future__ import annotations

import threading
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult


class DownEndpoint(SpanExporter):
    """An endpoint that never answers: an export waits for its timeout, then fails."""

    def __init__(self) -> None:
        self.gate = threading.Event()

    def export(self, spans: Any) -> SpanExportResult:
        self.gate.wait(60)
        return SpanExportResult.FAILURE

    def shutdown(self) -> None:
        self.gate.set()


def setup() -> None:
    """Set the worker's global tracer provider, exporting to `DownEndpoint`."""
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(DownEndpoint(), schedule_delay_millis=600_000))
    trace.set_tracer_provider(provider)
