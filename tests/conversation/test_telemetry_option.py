"""The `Telemetry` option's checks, `setup_otlp` (the global providers it installs export
over OTLP/HTTP, here to a loopback receiver the test runs), `flush_telemetry` and
`close_telemetry` (both bounded, also when the receiver never answers)."""

from __future__ import annotations

import http.server
import re
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from ccwire import MissingExtraError, Telemetry, setup_otlp
from ccwire._conversation.telemetry import close_telemetry, flush_telemetry

pytest.importorskip("opentelemetry.exporter.otlp.proto.http", reason="needs ccwire[otel]")

from opentelemetry import metrics, trace
from opentelemetry.metrics import _internal as metrics_state
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.util._once import Once


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"agent_name": ""}, "agent_name must be a non-empty string"),
        ({"attributes": {"ok": 1, "bad": [1]}}, "attributes must map names to str"),
        ({"attributes": [("a", "b")]}, "attributes must map names to str"),
        ({"worker_setup": "ccwire.setup_otlp"}, "worker_setup must be 'package.module:function'"),
        ({"worker_setup": 3}, "worker_setup must be 'package.module:function'"),
    ],
)
def test_a_malformed_telemetry_option_is_a_type_error(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(TypeError, match=message):
        Telemetry(**fields)


class Receiver:
    """An OTLP/HTTP endpoint on loopback: keeps the body of each request by path."""

    def __init__(self) -> None:
        got: list[tuple[str, bytes]] = []
        self.answering = answering = threading.Event()  # cleared: it never answers
        answering.set()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                got.append((self.path, body))
                answering.wait(30)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.got = got
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    def close(self) -> None:
        self.answering.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(10)


@pytest.fixture
def global_otel(monkeypatch: pytest.MonkeyPatch) -> Iterator[Receiver]:
    """OpenTelemetry's global providers unset for the test (as in a fresh process), the
    OTLP variables aimed at a loopback receiver; afterwards the providers the test set
    are shut down and the globals restored (as OpenTelemetry's own test utilities do)."""
    receiver = Receiver()
    for name in ("OTEL_SERVICE_NAME", "OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
    saved = [
        (trace, name, getattr(trace, name))
        for name in ("_TRACER_PROVIDER_SET_ONCE", "_TRACER_PROVIDER", "_PROXY_TRACER_PROVIDER")
    ] + [
        (metrics_state, name, getattr(metrics_state, name))
        for name in ("_METER_PROVIDER_SET_ONCE", "_METER_PROVIDER", "_PROXY_METER_PROVIDER")
    ]
    trace._TRACER_PROVIDER_SET_ONCE = Once()
    trace._TRACER_PROVIDER = None
    trace._PROXY_TRACER_PROVIDER = trace.ProxyTracerProvider()
    metrics_state._METER_PROVIDER_SET_ONCE = Once()
    metrics_state._METER_PROVIDER = None
    metrics_state._PROXY_METER_PROVIDER = metrics_state._ProxyMeterProvider()
    try:
        yield receiver
    finally:
        for provider in (trace._TRACER_PROVIDER, metrics_state._METER_PROVIDER):
            shutdown = getattr(provider, "shutdown", None)
            if callable(shutdown):
                shutdown()
        for module, name, value in saved:
            setattr(module, name, value)
        receiver.close()


def test_setup_otlp_exports_traces_and_metrics_over_otlp_http(global_otel: Receiver) -> None:
    setup_otlp(service_name="ccwire-test")
    tracer_provider = trace.get_tracer_provider()
    meter_provider = metrics.get_meter_provider()
    setup_otlp(service_name="another")  # providers already set are kept
    assert trace.get_tracer_provider() is tracer_provider
    assert metrics.get_meter_provider() is meter_provider

    with trace.get_tracer("t").start_as_current_span("a unit of work"):
        metrics.get_meter("t").create_counter("things").add(3)
    flush_telemetry(Telemetry(), timeout=10)

    paths = sorted({path for path, _ in global_otel.got})
    assert paths == ["/v1/metrics", "/v1/traces"]
    request = ExportTraceServiceRequest()
    request.ParseFromString(next(body for path, body in global_otel.got if path == "/v1/traces"))
    (resource_spans,) = request.resource_spans
    resource = {a.key: a.value.string_value for a in resource_spans.resource.attributes}
    assert resource["service.name"] == "ccwire-test"
    assert [s.name for ss in resource_spans.scope_spans for s in ss.spans] == ["a unit of work"]


def test_setup_otlp_leaves_out_a_signal_whose_exporter_is_none(
    global_otel: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", " None ")
    monkeypatch.setenv("OTEL_SERVICE_NAME", "from-env")
    setup_otlp()
    assert not hasattr(trace.get_tracer_provider(), "force_flush")  # still the API's proxy
    meter_provider = metrics.get_meter_provider()
    assert hasattr(meter_provider, "force_flush")
    assert meter_provider._sdk_config.resource.attributes["service.name"] == "from-env"  # type: ignore[attr-defined]
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "otlp")
    setup_otlp()  # now the traces; the meter provider set before stays
    assert hasattr(trace.get_tracer_provider(), "force_flush")
    assert metrics.get_meter_provider() is meter_provider


class FlushRecorder:
    """A provider's flushing side: records each call, or fails like a broken exporter."""

    def __init__(self, fails: bool = False) -> None:
        self.fails = fails
        self.calls: list[int] = []

    def force_flush(self, timeout_millis: int) -> bool:
        self.calls.append(timeout_millis)
        if self.fails:
            raise ConnectionError("collector unreachable")
        return True


def test_flush_telemetry_flushes_each_provider_and_survives_a_failing_one() -> None:
    broken, meters = FlushRecorder(fails=True), FlushRecorder()
    flush_telemetry(Telemetry(tracer_provider=broken, meter_provider=meters), timeout=2.5)
    assert broken.calls == [2500]
    assert meters.calls == [2500]  # reached after the tracer provider failed


def test_flushing_and_closing_are_bounded_when_the_endpoint_never_answers(
    global_otel: Receiver,
) -> None:
    global_otel.answering.clear()  # the exporter waits its whole 10 s export timeout
    setup_otlp()
    with trace.get_tracer("t").start_as_current_span("a unit of work"):
        metrics.get_meter("t").create_counter("things").add(3)
    started = time.monotonic()
    assert flush_telemetry(Telemetry(), timeout=0.3) is False
    assert close_telemetry(0.3) is False
    assert time.monotonic() - started < 2  # not the SDK's 10 s per export, 30 s per provider
    assert global_otel.got  # it was trying


def test_setup_otlp_without_the_otlp_exporter_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # as if `ccwire[otel]` were not installed: the exporter cannot be imported
    monkeypatch.setitem(sys.modules, "opentelemetry.exporter.otlp.proto.http.trace_exporter", None)
    with pytest.raises(MissingExtraError, match=re.escape("pip install 'ccwire[otel]'")) as caught:
        setup_otlp()
    assert caught.value.extra == "otel"
