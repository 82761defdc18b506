"""``Telemetry``: the option that turns on OpenTelemetry traces and metrics for a session.

This module only holds the configuration; nothing here imports OpenTelemetry. A
session whose options carry a `Telemetry` loads the instrumentation (``tracing``) when
it connects; a session without one pays nothing.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from .._core.errors import MissingExtraError, OptionsError

__all__ = [
    "DEFAULT_AGENT_NAME",
    "otel_missing",
    "Telemetry",
    "close_telemetry",
    "env_parent",
    "flush_telemetry",
    "setup_otlp",
]

logger = logging.getLogger("ccwire")

DEFAULT_AGENT_NAME = "claude-code"
"""The ``gen_ai.agent.name`` of a session unless `Telemetry.agent_name` says otherwise."""


@dataclass(frozen=True)
class Telemetry:
    """OpenTelemetry traces and metrics of every session started with these options.

    Needs ``pip install 'ccwire[otel]'``. Each session (one CLI process) is one
    ``invoke_agent`` span, a child of the span current when it connects; each tool
    call the model makes, built in or in-process, is an ``execute_tool`` span under it
    (a subagent's tool calls under the subagent's own call); permission and hook
    decisions are events on the tool's span; tokens and cost are attributes of the
    session's span and points of the ``gen_ai.client.token.usage``,
    ``gen_ai.client.operation.duration`` and ``ccwire.client.cost`` metrics, one per
    turn. The CLI gets the session's trace context (``TRACEPARENT``), so its own
    spans, when it exports them (`cli_traces`), join the same trace.

    ```python
    from ccwire import ClaudeAgentOptions, Telemetry

    options = ClaudeAgentOptions(telemetry=Telemetry())  # the global providers
    ```

    Prompts, answers and tool arguments and results are not recorded unless
    `record_content` is set; secrets are masked in everything recorded, whatever the
    setting (`ccwire.redact_secrets`).

    Attributes:
        tracer_provider: The `TracerProvider` to use. Default `None`: the global one
            (``opentelemetry.trace.get_tracer_provider()``) at the time each session
            connects, so a provider configured later is picked up.
        meter_provider: The `MeterProvider` to use. Default `None`: the global one.
        record_content: Also record the prompts, the final answers, and each tool
            call's arguments and result (``gen_ai.input.messages``,
            ``gen_ai.output.messages``, ``gen_ai.tool.call.arguments``,
            ``gen_ai.tool.call.result``, a subagent's ``gen_ai.agent.description``),
            with secrets masked. Default `False`.
        agent_name: The ``gen_ai.agent.name`` of the sessions. Default
            ``"claude-code"``.
        attributes: More attributes for every session span (and its metric points).
        cli_traces: Also turn on the CLI's own trace export (it sets
            ``CLAUDE_CODE_ENABLE_TELEMETRY``, ``CLAUDE_CODE_ENHANCED_TELEMETRY_BETA`` and
            ``OTEL_TRACES_EXPORTER=otlp`` for the CLI): its spans (each interaction,
            model request and tool run) become children of the session's span. Where
            they go is set by the ``OTEL_EXPORTER_OTLP_*`` variables the CLI inherits.
            They carry no content: the CLI's ``OTEL_LOG_USER_PROMPTS``,
            ``OTEL_LOG_ASSISTANT_RESPONSES``, ``OTEL_LOG_TOOL_CONTENT``,
            ``OTEL_LOG_TOOL_DETAILS`` and ``OTEL_LOG_RAW_API_BODIES`` are set to ``0``
            (unless ``ClaudeAgentOptions.env`` sets them). Default `False`.
        worker_setup: A function by reference (``package.module:function``) that
            configures OpenTelemetry in a process where sessions run for a batch on
            Ray (the providers of this process cannot travel there); called once per
            worker process. ``"ccwire:setup_otlp"`` exports over OTLP/HTTP as the
            ``OTEL_EXPORTER_OTLP_*`` variables say. Required with the Ray executor.
    """

    tracer_provider: Any = field(default=None, compare=False)
    meter_provider: Any = field(default=None, compare=False)
    record_content: bool = False
    agent_name: str = DEFAULT_AGENT_NAME
    attributes: Mapping[str, str | bool | int | float] = field(default_factory=dict)
    cli_traces: bool = False
    worker_setup: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.agent_name, str) or not self.agent_name:
            raise OptionsError("Telemetry.agent_name must be a non-empty string")
        if not isinstance(self.attributes, Mapping) or not all(
            isinstance(k, str) and isinstance(v, (str, bool, int, float))
            for k, v in self.attributes.items()
        ):
            raise OptionsError("Telemetry.attributes must map names to str, bool, int or float")
        if self.worker_setup is not None and (
            not isinstance(self.worker_setup, str) or ":" not in self.worker_setup
        ):
            raise OptionsError("Telemetry.worker_setup must be 'package.module:function'")


def otel_missing() -> MissingExtraError:
    """The error for telemetry without the ``otel`` extra."""
    return MissingExtraError("telemetry", "OpenTelemetry", "otel")


def setup_otlp(*, service_name: str | None = None) -> None:
    """Export this process's traces and metrics over OTLP/HTTP (``pip install 'ccwire[otel]'``).

    Sets the global tracer and meter providers of OpenTelemetry, with a batch span
    processor and a periodic metric reader whose exporters read the standard
    ``OTEL_EXPORTER_OTLP_*`` variables (endpoint default ``http://localhost:4318``);
    ``OTEL_TRACES_EXPORTER=none`` or ``OTEL_METRICS_EXPORTER=none`` leaves that signal
    out. Providers already set globally are kept. Use it as
    ``Telemetry(worker_setup="ccwire:setup_otlp")`` for batches on Ray.

    Args:
        service_name: The ``service.name`` resource attribute (default:
            ``OTEL_SERVICE_NAME``, else ``ccwire``).

    Raises:
        MissingExtraError: The OpenTelemetry SDK or its OTLP/HTTP exporter is not
            installed (``pip install 'ccwire[otel]'``).
    """
    try:
        from opentelemetry import metrics, trace
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as exc:
        raise otel_missing() from exc

    name = service_name or os.environ.get("OTEL_SERVICE_NAME") or "ccwire"
    resource = Resource.create({"service.name": name})
    wanted = {kind: os.environ.get(f"OTEL_{kind.upper()}_EXPORTER", "otlp").strip().lower()
              for kind in ("traces", "metrics")}  # fmt: skip
    if wanted["traces"] != "none" and not hasattr(trace.get_tracer_provider(), "force_flush"):
        provider = TracerProvider(resource=resource)  # (the API's proxy has no force_flush)
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        trace.set_tracer_provider(provider)
    if wanted["metrics"] != "none" and not hasattr(metrics.get_meter_provider(), "force_flush"):
        reader = PeriodicExportingMetricReader(OTLPMetricExporter())
        metrics.set_meter_provider(MeterProvider(resource=resource, metric_readers=[reader]))


def flush_telemetry(telemetry: Telemetry, timeout: float = 10.0) -> bool:
    """Export what the providers of ``telemetry`` still hold, waiting at most ``timeout``
    seconds in all (the SDK's ``force_flush`` does not honour its own timeout: an
    exporter whose endpoint is down or never answers retries for its whole export
    timeout, per batch; what is not exported in time is left to it, in the background).

    Args:
        telemetry: The option whose providers (or the global ones) to flush.
        timeout: Seconds the flush may take in all.

    Returns:
        Whether every provider was flushed in time (an exporter that fails counts as
        flushed: nothing more would come of waiting).
    """
    from opentelemetry import metrics, trace

    providers = (
        telemetry.tracer_provider or trace.get_tracer_provider(),
        telemetry.meter_provider or metrics.get_meter_provider(),
    )
    millis = int(timeout * 1000)
    calls: list[Callable[[], object]] = []
    for provider in providers:
        flush = getattr(provider, "force_flush", None)
        if callable(flush):
            calls.append(functools.partial(flush, millis))
    return _bounded(calls, timeout)


@contextlib.contextmanager
def env_parent(environ: Mapping[str, str]) -> Iterator[None]:
    """Inside it, the trace context of ``TRACEPARENT`` and ``TRACESTATE`` in
    ``environ`` (OpenTelemetry's environment variable carriers, which a CI job or a
    traced parent process sets) is the current one; without them (or with a value that
    is not valid) nothing changes.

    Args:
        environ: This process's environment.
    """
    parent = environ.get("TRACEPARENT")
    if not parent:
        yield
        return
    from opentelemetry import context
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    carrier = {"traceparent": parent}
    if environ.get("TRACESTATE"):
        carrier["tracestate"] = environ["TRACESTATE"]
    token = context.attach(TraceContextTextMapPropagator().extract(carrier))
    try:
        yield
    finally:
        context.detach(token)


def close_telemetry(timeout: float) -> bool:
    """Flush and shut down the global providers (`setup_otlp`'s), waiting at most
    ``timeout`` seconds in all: the end of a program (``ccwire batch --otel``), which
    must not wait on an OTLP endpoint that is down or never answers (the SDK's own
    shutdown at exit waits up to 30 s per provider, and exports the metrics once more).

    Args:
        timeout: Seconds it may take in all.

    Returns:
        Whether both were shut down in time (what is left runs on in daemon threads,
        which end with the process; a provider's shutdown at exit then has nothing to do).
    """
    from opentelemetry import metrics, trace

    calls: list[Callable[[], object]] = []
    tracer_provider = trace.get_tracer_provider()
    if callable(getattr(tracer_provider, "force_flush", None)):  # the SDK's, not the proxy
        calls.append(tracer_provider.shutdown)  # type: ignore[attr-defined]
    meter_provider = metrics.get_meter_provider()
    if callable(getattr(meter_provider, "force_flush", None)):
        # bounded by the SDK itself: its reader's final export is cut at the deadline
        calls.append(functools.partial(meter_provider.shutdown, timeout_millis=timeout * 1000))  # type: ignore[attr-defined]
    return _bounded(calls, timeout)


def _bounded(calls: list[Callable[[], object]], timeout: float) -> bool:
    """Run ``calls`` at once, each in a daemon thread; wait for them at most ``timeout``
    seconds in all. An exception is logged (an exporter that fails must not fail the
    caller). Whether all ended in time."""
    deadline = time.monotonic() + timeout

    def run(call: Callable[[], object]) -> None:
        try:
            call()
        except Exception:
            logger.warning("ccwire: exporting telemetry failed", exc_info=True)

    threads = [
        threading.Thread(target=run, args=(c,), name="ccwire telemetry", daemon=True) for c in calls
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    return not any(t.is_alive() for t in threads)
