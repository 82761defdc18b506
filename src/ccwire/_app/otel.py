"""``--otel`` of the commands (``run``, ``batch``, ``serve``): OTLP export set up at
the start, OpenTelemetry's export errors shown as one warning, and the last spans
exported at the end, bounded (an endpoint that is down does not hold the exit).

Nothing here imports OpenTelemetry: `setup_otlp` and `close_telemetry` do, when called.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator, Mapping
from typing import Final

from .._conversation.telemetry import Telemetry, close_telemetry, env_parent, setup_otlp
from .._core.redact import redact_text
from .loaders import UsageError

__all__ = ["EXIT_SECONDS", "exporting", "start_otel", "under_parent"]

logger = logging.getLogger("ccwire")

EXIT_SECONDS: Final = 3.0
"""What exporting the last spans and metrics may take at the end of a command."""


def start_otel(otel: bool, otel_cli: bool, *, worker_setup: str | None = None) -> Telemetry | None:
    """With ``--otel``: OTLP export set up here; the `Telemetry` option to run with
    (``--otel-cli``: the CLI's own spans join the trace; ``worker_setup``: what Ray
    workers call to set up theirs).

    Raises:
        UsageError: ``--otel-cli`` without ``--otel``, or OpenTelemetry is not installed.
    """
    if not otel:
        if otel_cli:
            raise UsageError("--otel-cli needs --otel")
        return None
    try:
        setup_otlp()
    except ImportError as exc:
        raise UsageError(str(exc)) from None
    return Telemetry(cli_traces=otel_cli, worker_setup=worker_setup)


@contextlib.contextmanager
def under_parent(telemetry: Telemetry | None, environ: Mapping[str, str]) -> Iterator[None]:
    """With ``telemetry``: inside it, the trace context this process was started with
    (``TRACEPARENT``, ``TRACESTATE``: `env_parent`) is the current one, so the
    command's spans join that trace; without ``telemetry`` nothing changes.

    Args:
        telemetry: The command's `Telemetry` (`start_otel`), `None` without ``--otel``.
        environ: This process's environment.
    """
    if telemetry is None:
        yield
        return
    with env_parent(environ):
        yield


class _ExportErrors(logging.Handler):
    """OpenTelemetry's export errors (its exporter logs each retry and each lost
    export): the first becomes one ``ccwire`` warning, the others are dropped."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.seen = False
        self.running_on = False  # exports still run on at exit (in daemon threads)

    def emit(self, record: logging.LogRecord) -> None:
        if self.seen:
            return
        self.seen = True
        try:
            text = redact_text(record.getMessage())[:300]
        except Exception:  # a record that cannot be formatted is still an export error
            text = str(record.msg)[:300]
        logger.warning(
            "ccwire: OpenTelemetry could not export: %s (further export errors not shown)", text
        )


@contextlib.contextmanager
def exporting(telemetry: Telemetry | None) -> Iterator[Callable[[], None]]:
    """While in it, with ``telemetry``: OpenTelemetry's own log records shown as at most
    one warning; at its end the last spans and metrics exported and OpenTelemetry shut
    down, in at most `EXIT_SECONDS`. What it yields does that end earlier (once): for a
    command that a signal ends before it leaves the block. Without ``telemetry``:
    nothing (what it yields does nothing)."""
    if telemetry is None:
        yield lambda: None
        return
    handler = _ExportErrors()
    otel = logging.getLogger("opentelemetry")
    propagate = otel.propagate
    otel.addHandler(handler)
    otel.propagate = False
    closed: list[bool] = []

    def close() -> None:
        if closed:
            return
        closed.append(True)
        if close_telemetry(EXIT_SECONDS):
            return
        handler.running_on = True
        if not handler.seen:
            handler.seen = True
            logger.warning(
                "ccwire: OpenTelemetry did not finish exporting within %g s: the rest of "
                "the trace is dropped (is the OTLP endpoint up?)",
                EXIT_SECONDS,
            )

    try:
        yield close
    finally:
        try:
            close()
        finally:
            if not handler.running_on:  # else it keeps their last errors quiet till the exit
                otel.removeHandler(handler)
                otel.propagate = propagate
