"""``--otel`` of the commands, exported over OTLP/HTTP to a receiver on loopback.

``ccwire serve --otel``: each request served is a span, named and attributed as
OpenTelemetry's MCP conventions say, under the trace context the client sent in
``params._meta``; on stdio and over HTTP (stopped by SIGTERM, its spans exported
before it ends).  ``ccwire run --otel``: the session and its tool calls; ``run`` and
``batch`` join the trace of a ``TRACEPARENT`` they were started with.
(``ccwire batch --otel``: tests/e2e/test_otel_collector_e2e.py.)"""

from __future__ import annotations

import http.server
import json
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.jsonrpc import initialize, line, tools_call
from tests.mcp import test_serve_http_server as http_serving

trace_service = pytest.importorskip(
    "opentelemetry.proto.collector.trace.v1.trace_service_pb2", reason="needs ccwire[otel]"
)

ROOT = Path(__file__).resolve().parents[2]
SERVE = [sys.executable, "-m", "ccwire", "serve", "--otel"]
TARGET = "tests.fixtures.mcp_serve_server:server"
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


class Receiver(http.server.ThreadingHTTPServer):
    """An OTLP/HTTP endpoint keeping the spans it is sent (protobuf, as exported)."""

    def __init__(self) -> None:
        self.spans: list[Any] = []
        super().__init__(("127.0.0.1", 0), _Handler)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(http.server.BaseHTTPRequestHandler):
    server: Receiver

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if self.path == "/v1/traces":
            request = trace_service.ExportTraceServiceRequest()
            request.ParseFromString(body)
            for resource in request.resource_spans:
                for scope in resource.scope_spans:
                    self.server.spans.extend(scope.spans)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def env(endpoint: str) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)]),
        "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
        "OTEL_METRICS_EXPORTER": "none",
    }


def attrs(span: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in span.attributes:
        kind = item.value.WhichOneof("value")
        out[item.key] = getattr(item.value, kind) if kind else None
    return out


def serve_stdio(endpoint: str, messages: list[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
    """``ccwire serve --otel`` on stdio until stdin ends; its answers by id."""
    done = subprocess.run(
        [*SERVE, TARGET], input=b"".join(map(line, messages)), capture_output=True, cwd=ROOT,
        env=env(endpoint), timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()
    assert b"Traceback" not in done.stderr, done.stderr.decode()
    return {a["id"]: a for a in map(json.loads, done.stdout.splitlines())}


def test_each_request_is_a_span_under_the_client_trace(receiver: Receiver) -> None:
    call = tools_call(1, "add", {"a": 2, "b": 3.5})
    call["params"]["_meta"] = {"traceparent": f"00-{TRACE_ID}-{PARENT_ID}-01"}
    bad = tools_call("two", "add", {"a": "x"})  # the tool's arguments fail its schema
    missing = {"jsonrpc": "2.0", "id": 3, "method": "prompts/get", "params": {"name": "nope"}}
    answers = serve_stdio(receiver.endpoint, [initialize(), INITIALIZED, call, bad, missing])
    assert answers[1]["result"]["structuredContent"] == {"sum": 5.5}
    assert answers["two"]["result"]["isError"] is True
    code = str(answers[3]["error"]["code"])

    spans = {attrs(span)["jsonrpc.request.id"]: span for span in receiver.spans}
    assert sorted(s.name for s in spans.values()) == [
        "initialize",
        "prompts/get nope",
        "tools/call add",
        "tools/call add",
    ]  # fmt: skip  (the notification is no span)
    init = attrs(spans["0"])
    assert init["mcp.method.name"] == "initialize"
    assert init["mcp.protocol.version"] == "2025-06-18"
    assert init["network.transport"] == "pipe"

    ok = spans["1"]
    assert ok.trace_id.hex() == TRACE_ID and ok.parent_span_id.hex() == PARENT_ID
    assert ok.kind == ok.SPAN_KIND_SERVER
    assert attrs(ok)["gen_ai.tool.name"] == "add"
    assert attrs(ok)["gen_ai.operation.name"] == "execute_tool"
    assert "error.type" not in attrs(ok) and ok.status.code != ok.status.STATUS_CODE_ERROR

    failed = spans["two"]
    assert failed.trace_id.hex() != TRACE_ID  # no context sent: a trace of its own
    assert attrs(failed)["error.type"] == "tool_error"  # a successful JSON-RPC answer
    assert failed.status.code == failed.status.STATUS_CODE_ERROR

    prompt = spans["3"]
    assert attrs(prompt)["gen_ai.prompt.name"] == "nope"
    assert attrs(prompt)["error.type"] == attrs(prompt)["rpc.response.status_code"] == code
    assert prompt.status.code == prompt.status.STATUS_CODE_ERROR


def test_over_http_a_sigterm_exports_the_spans_before_the_end(
    receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(http_serving, "ENV", env(receiver.endpoint))
    with http_serving.server("--otel") as (proc, port):
        session = http_serving.open_session(port)
        status, _, body = http_serving.post(
            port, tools_call(7, "add", {"a": 1, "b": 2}), **{"mcp-session-id": session}
        )
        assert status == 200 and b'"sum":3' in body.replace(b" ", b"")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == -signal.SIGTERM  # ended as the signal ends it
    names = {span.name: attrs(span) for span in receiver.spans}
    assert names["tools/call add"]["network.transport"] == "tcp"
    assert "initialize" in names


def test_an_endpoint_that_is_down_does_not_hold_the_exit() -> None:
    """Nothing listens on the endpoint: the requests are answered, the exit is bounded
    (a few seconds, not the exporter's own retries), and one warning says so."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        endpoint = f"http://127.0.0.1:{s.getsockname()[1]}"  # bound, never listening
        messages = line(initialize()) + line(tools_call(1, "add", {"a": 1, "b": 2}))
        done = subprocess.run(
            [*SERVE, TARGET], input=messages, capture_output=True, cwd=ROOT, env=env(endpoint),
            timeout=60, check=False,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()
    assert json.loads(done.stdout.splitlines()[1])["result"]["structuredContent"] == {"sum": 3}
    assert done.stderr.decode().count("OpenTelemetry") == 1, done.stderr.decode()


def test_run_traces_its_session_and_tool_calls(receiver: Receiver, tmp_path: Path) -> None:
    script = tmp_path / "steps.json"
    script.write_text(json.dumps([
        {"tool_use": {"name": "mcp__calc__add", "input": {"a": 2, "b": 40}}},
        {"text": "the sum is {tool_results}"},
    ]))  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "ccwire", "run", "--otel", "--scripted", str(script), "--plain",
         "--tools", "tests.batch.calc_tools:server", "--allow", "add", "add them"],
        capture_output=True, cwd=tmp_path, env={**env(receiver.endpoint),
        "CCWIRE_OFFLINE_DIR": str(tmp_path / "offline"),
        "TRACEPARENT": f"00-{TRACE_ID}-{PARENT_ID}-01"}, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout.decode() + done.stderr.decode()
    assert b"the sum is 42" in done.stdout
    names = sorted(span.name for span in receiver.spans)
    assert names == ["execute_tool mcp__calc__add", "invoke_agent claude-code"], names
    by_name = {span.name: span for span in receiver.spans}
    session, call = by_name["invoke_agent claude-code"], by_name["execute_tool mcp__calc__add"]
    assert call.parent_span_id == session.span_id and call.trace_id == session.trace_id
    assert attrs(session)["gen_ai.operation.name"] == "invoke_agent"
    # the trace of the process that started it (a CI job's): OpenTelemetry's environment
    # variable carrier (the session began a trace of its own)
    assert session.trace_id.hex() == TRACE_ID and session.parent_span_id.hex() == PARENT_ID


def test_a_batch_joins_the_trace_its_process_was_started_in(
    receiver: Receiver, tmp_path: Path
) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text('{"id": "a", "prompt": "hi"}\n')
    done = subprocess.run(
        [sys.executable, "-m", "ccwire", "batch", "--otel", "--offline", "--plain", str(tasks),
         "-o", str(tmp_path / "out.jsonl")],
        capture_output=True, cwd=tmp_path, env={**env(receiver.endpoint),
        "CCWIRE_OFFLINE_DIR": str(tmp_path / "offline"),
        "TRACEPARENT": f"00-{TRACE_ID}-{PARENT_ID}-01"}, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout.decode() + done.stderr.decode()
    by_name = {span.name: span for span in receiver.spans}
    batch = by_name["ccwire.batch"]
    assert batch.trace_id.hex() == TRACE_ID and batch.parent_span_id.hex() == PARENT_ID
    assert {span.trace_id.hex() for span in receiver.spans} == {TRACE_ID}


def test_run_otel_cli_needs_otel() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ccwire", "run", "--otel-cli", "--offline", "hi"],
        capture_output=True, cwd=ROOT, env=env("http://127.0.0.1:9"), timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2 and b"--otel-cli needs --otel" in done.stderr


@pytest.mark.anyio
async def test_a_served_tool_that_raises_records_its_exception_on_the_request_span() -> None:
    # the span said `tool_error`, as for a tool that answered with an error result: what
    # the handler raised was in no span
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from ccwire import ToolError, create_sdk_mcp_server, tool
    from ccwire._app.serve_telemetry import TracedServer

    @tool("boom", "Fails", {})
    async def boom(args: dict[str, Any]) -> dict[str, Any]:
        raise LookupError("no such row for sk-ant-api03-Zq9xY8wV7uT6sR5q")

    @tool("refuse", "Says no", {})
    async def refuse(args: dict[str, Any]) -> dict[str, Any]:
        raise ToolError("not today")

    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    server = create_sdk_mcp_server("s", tools=[boom, refuse])["instance"]
    traced = TracedServer(server, "pipe", tracer_provider=provider, meter_provider=MeterProvider())
    for number, name in enumerate(("boom", "refuse")):
        answer = await traced.handle(tools_call(number, name, {}))
        assert answer is not None and answer["result"]["isError"] is True
    found = {s.name: s for s in spans.get_finished_spans()}
    failed, refused = found["tools/call boom"], found["tools/call refuse"]
    assert dict(failed.attributes or {})["error.type"] == "LookupError"
    assert failed.status.description == "no such row for ***"
    (raised,) = [dict(e.attributes or {}) for e in failed.events if e.name == "exception"]
    assert raised["exception.message"] == "no such row for ***"
    assert dict(refused.attributes or {})["error.type"] == "tool_error"  # its own answer
    assert [e.name for e in refused.events] == []
