"""A batch as one trace: a ``ccwire.batch`` span, a ``ccwire.batch.task`` span per task,
and under each the spans of its sessions (``invoke_agent``, one per attempt); each
retry is a ``ccwire.batch.retry`` event on the task's span (the attempt that failed,
why, and the delay before the next).

Only a batch whose options carry a `Telemetry` imports OpenTelemetry; otherwise every
function here is a no-op. The batch span is current while the batch starts its
feeding task, so the local executor's tasks inherit it; the Ray executor sends its
context with each task (W3C ``traceparent``), and the worker opens the task's span
under it. A worker configures its OpenTelemetry once (``Telemetry.worker_setup``) and
exports what it recorded after each task, since an actor is killed, not shut down,
when the batch ends.

That export waits at most `FLUSH_SECONDS`: an endpoint that answers takes
milliseconds. One that does not (down, or unreachable from the worker) would hold
every task for the exporter's own timeout (10 s by default), so once a flush did not
finish in time the worker stops waiting: its spans stay queued in the application's
span processor (exported if the endpoint comes back, dropped when its queue is full),
and a flush is waited for again at most every `RETRY_DOWN_SECONDS`. Each task's
result tells the driver how many spans the worker ended for it and whether they were
exported (`take_export`), and the batch counts those that were not
(`BatchRun.spans_unexported`), warning once per worker.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import os
import random
import threading
import time
from collections.abc import Iterator, Mapping
from typing import Any

import anyio.to_thread

from .._conversation.options import ClaudeAgentOptions
from .._conversation.spare_pool import SparePool
from .._conversation.telemetry import Telemetry, flush_telemetry
from .._core.redact import redact_text
from .budget import CostBudget
from .errors import BatchConfigError
from .refs import resolve_reference
from .results import BatchResult, RetryPolicy
from .session import BatchEvent, Confirm, EventSink, Progress, emit, run_task
from .tasks import BatchTask
from .watchdog import LoopWatchdog

__all__ = [
    "FLUSH_SECONDS",
    "RETRY_DOWN_SECONDS",
    "BatchTracing",
    "portable_telemetry",
    "run_traced",
    "take_export",
]

logger = logging.getLogger("ccwire")

FLUSH_SECONDS = 1.0
"""How long a worker waits for its spans to be exported after each task."""
RETRY_DOWN_SECONDS = 30.0
"""Once a flush did not finish in time, how long a worker waits for none."""
_set_up: set[str] = set()  # the worker setups this process has run


class _SpanCount:
    """A span processor that counts the spans this process ends (a Ray worker's)."""

    def __init__(self) -> None:
        self.ended = 0
        self._lock = threading.Lock()

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        """Nothing to do."""

    def _on_ending(self, span: Any) -> None:
        """Nothing to do."""

    def on_end(self, span: Any) -> None:
        """Count it."""
        with self._lock:
            self.ended += 1

    def shutdown(self) -> None:
        """Nothing to do."""

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Nothing is held."""
        return True


class _WorkerExport:
    """What a Ray worker process knows of its exports (one per process)."""

    def __init__(self) -> None:
        self.count: _SpanCount | None = None
        self.reported = 0  # spans ended and reported so far
        self.down_since: float | None = None  # the last flush did not finish in time
        self.tried = 0.0  # when a flush was last waited for
        self.failures = 0
        self.reports: dict[str, dict[str, Any]] = {}  # by task id, for `take_export`

    def watch(self, telemetry: Telemetry) -> None:
        """Count the spans of the tracer provider set up here (once)."""
        if self.count is not None:
            return
        from opentelemetry import trace

        self.count = _SpanCount()
        provider = telemetry.tracer_provider or trace.get_tracer_provider()
        add = getattr(provider, "add_span_processor", None)
        if callable(add):
            try:
                add(self.count)
            except Exception:  # an application's provider that refuses it: no counts
                logger.debug("ccwire: cannot count the worker's spans", exc_info=True)

    def flush(self, telemetry: Telemetry, task_id: str) -> None:
        """Export what was recorded (bounded; not waited for while the endpoint is
        down), and note for `take_export` how it went (in a worker thread)."""
        ended = self.count.ended if self.count is not None else 0
        spans, self.reported = ended - self.reported, ended
        now = time.monotonic()
        waited = self.down_since is None or now - self.tried >= RETRY_DOWN_SECONDS
        exported = False
        if waited:
            self.tried = now
            exported = flush_telemetry(telemetry, FLUSH_SECONDS)
            self.down_since = None if exported else (self.down_since or now)
        first = waited and not exported and self.failures == 0
        if not exported:
            self.failures += 1
            if first:
                logger.warning(
                    "ccwire: this Ray worker (pid %d) could not export its spans within %g s: "
                    "is the OTLP endpoint up? Its spans are no longer waited for (dropped "
                    "unless it comes back)", os.getpid(), FLUSH_SECONDS,
                )  # fmt: skip
        self.reports[task_id] = {
            "spans": spans,
            "exported": exported,
            "first_failure": first,
            "worker": os.getpid(),
            "waited_s": FLUSH_SECONDS if waited else 0.0,
        }


_worker_export = _WorkerExport()


def take_export(task_id: str) -> dict[str, Any] | None:
    """How the export after task `task_id` went on this worker (once; `None` without
    telemetry): ``spans`` ended since the last report, ``exported`` (flushed in time),
    ``first_failure`` (this worker's first flush that was not), ``worker`` (its pid)."""
    return _worker_export.reports.pop(task_id, None)


class BatchTracing:
    """The span of one batch (a no-op without telemetry).

    Args:
        options: The batch options.
        executor: ``local`` or ``ray``.
        concurrency: Sessions at once.
    """

    def __init__(self, options: ClaudeAgentOptions, *, executor: str, concurrency: int) -> None:
        self._telemetry = options.telemetry
        self._attrs = {"ccwire.batch.executor": executor, "ccwire.batch.concurrency": concurrency}
        self._span: Any = None
        self.counts = {"ok": 0, "failed": 0}
        self.cost = 0.0

    def watch(self, sink: EventSink | None) -> EventSink | None:
        """`sink`, also counting finished results for the batch span."""
        if self._telemetry is None:
            return sink

        def on_event(event: BatchEvent) -> None:
            if event.kind == "finished" and event.result is not None:
                self.counts["ok" if event.result.ok else "failed"] += 1
                self.cost += event.result.cost_usd
            if sink is not None:
                sink(event)

        return on_event

    @contextlib.contextmanager
    def started(self) -> Iterator[None]:
        """Start the batch span and make it current inside the block."""
        if self._telemetry is None:
            yield
            return
        from opentelemetry import context, trace

        self._span = _start_span(self._telemetry, "ccwire.batch", attributes=self._attrs)
        token = context.attach(trace.set_span_in_context(self._span))
        try:
            yield
        finally:
            context.detach(token)

    def end(
        self,
        *,
        submitted: int,
        skipped: int,
        failure: BaseException | None,
        budget: CostBudget | None = None,
        stopped: bool = False,
    ) -> None:
        """End the batch span with what the batch did (``ccwire.batch.stopped``: it was
        stopped before its tasks were all run, by `BatchRun.stop`, a signal, or leaving
        its block early), and its budget's state: the budget, the cost recorded against
        it, earlier runs' included, and whether it was spent, which stopped the batch
        starting tasks."""
        span, self._span = self._span, None
        if span is None:
            return
        from opentelemetry.trace import Status, StatusCode

        from .._conversation.tracing import end_span, record_exception

        span.set_attributes({
            "ccwire.batch.submitted": submitted,
            "ccwire.batch.skipped": skipped,
            "ccwire.batch.ok": self.counts["ok"],
            "ccwire.batch.failed": self.counts["failed"],
            "ccwire.batch.stopped": stopped,
            "ccwire.usage.cost_usd": round(self.cost, 10),
        })  # fmt: skip
        if budget is not None:
            span.set_attributes({
                "ccwire.batch.budget.max_cost_usd": budget.max_cost_usd,
                "ccwire.batch.budget.spent_usd": round(budget.spent, 10),
                "ccwire.batch.budget.spent": budget.exhausted,
            })  # fmt: skip
        if failure is not None:
            kind, description = record_exception(span, failure)
            span.set_attribute("error.type", kind)
            span.set_status(Status(StatusCode.ERROR, description))
        end_span(span)

    def carrier(self) -> dict[str, str] | None:
        """The current trace context as W3C headers, for a task sent to a Ray worker."""
        if self._telemetry is None:
            return None
        from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

        headers: dict[str, str] = {}
        TraceContextTextMapPropagator().inject(headers)
        return headers


def portable_telemetry(telemetry: Telemetry | None) -> Telemetry | None:
    """The telemetry option as a Ray worker can receive it: without providers.

    Raises:
        BatchConfigError: It has no `Telemetry.worker_setup` to configure the workers.
    """
    if telemetry is None:
        return None
    if telemetry.worker_setup is None:
        raise BatchConfigError(
            "options.telemetry: with the Ray executor the workers configure OpenTelemetry "
            "themselves: set Telemetry(worker_setup='ccwire:setup_otlp') or your own function"
        )
    return dataclasses.replace(telemetry, tracer_provider=None, meter_provider=None)


async def run_traced(
    task: BatchTask,
    options: ClaudeAgentOptions,
    policy: RetryPolicy,
    *,
    events: EventSink | None = None,
    rng: random.Random | None = None,
    parent: Mapping[str, str] | None = None,
    worker: bool = False,
    attempts_before: int = 0,
    progress: Progress | None = None,
    confirm: Confirm | None = None,
    pool: SparePool | None = None,
    watchdog: LoopWatchdog | None = None,
) -> BatchResult:
    """`run_task` inside the task's span (just `run_task` without telemetry).

    Args:
        task: The task.
        options: The batch options.
        policy: The retry policy.
        events: Receives the task's events.
        rng: The backoff's random source.
        parent: The batch span's context, for a task that came from another process.
        worker: On a Ray worker: run `Telemetry.worker_setup` once per process first,
            and export what was recorded once the task is done.
        attempts_before: Attempts the task already had on a lost Ray node.
        progress: Told of each attempt's start, session id and first tool call.
        confirm: Awaited before an attempt acts (`run_task`).
        pool: Spare CLIs the sessions start on (`run_task`).
        watchdog: The watchdog of the loop it runs on (`run_task`).

    Returns:
        The task's result.

        A ``config`` failure when `Telemetry.worker_setup` fails on a worker.
    """
    run = functools.partial(
        run_task,
        task,
        options,
        policy,
        events=events,
        rng=rng,
        attempts_before=attempts_before,
        progress=progress,
        confirm=confirm,
        pool=pool,
        watchdog=watchdog,
    )
    telemetry = options.telemetry
    if telemetry is None:
        return await run()
    if worker and telemetry.worker_setup and telemetry.worker_setup not in _set_up:
        try:
            setup = resolve_reference(telemetry.worker_setup, "telemetry.worker_setup",
                                      where="on the Ray worker")  # fmt: skip
            setup()
        except Exception as exc:  # every task of this worker fails the same way
            return BatchResult(id=task.id, ok=False, is_error=True, error_kind="config",
                               error=redact_text(f"telemetry.worker_setup failed: {exc}"),
                               metadata=dict(task.metadata))  # fmt: skip
        _set_up.add(telemetry.worker_setup)
    if worker:
        _worker_export.watch(telemetry)
    from opentelemetry import context, trace
    from opentelemetry.trace import Status, StatusCode
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    from .._conversation.tracing import encodable, end_span

    ctx = TraceContextTextMapPropagator().extract(parent) if parent else None
    span = _start_span(
        telemetry,
        "ccwire.batch.task",
        context=ctx,
        attributes={"ccwire.batch.task_id": encodable(task.id)},
    )
    token = context.attach(trace.set_span_in_context(span))

    def on_event(event: BatchEvent) -> None:  # a retry is an event on the task's span
        if event.kind == "retry":
            span.add_event("ccwire.batch.retry", {
                "ccwire.batch.task.attempt": event.attempt,
                "ccwire.batch.retry.delay_s": event.delay,
                "ccwire.batch.retry.reason": _description(event.reason or ""),
            })  # fmt: skip
        emit(events, event)

    try:
        result = await run(events=on_event)
    except BaseException as exc:
        span.set_attribute("error.type", "cancelled" if not isinstance(exc, Exception) else
                           type(exc).__name__)  # fmt: skip
        span.set_status(Status(StatusCode.ERROR, "the task did not finish"))
        raise
    else:
        span.set_attributes({
            "ccwire.batch.task.ok": result.ok,
            "ccwire.batch.task.attempts": result.attempts,
            "ccwire.batch.task.tool_calls": result.tool_calls,
            "ccwire.batch.task.cost_usd": result.cost_usd,
        })  # fmt: skip
        if result.session_id:
            span.set_attribute("gen_ai.conversation.id", result.session_id)
        if not result.ok:
            span.set_attribute("error.type", result.error_kind or "error")
            span.set_status(Status(StatusCode.ERROR, _description(result.error or "")))
        return result
    finally:
        context.detach(token)
        end_span(span)
        if worker:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(_worker_export.flush, telemetry, task.id)


def _description(text: str) -> str:
    """A span status's description: ``text`` masked, clipped, and as UTF-8 can carry it
    (one that cannot fails the export of every span sent with it)."""
    from .._conversation.tracing import encodable

    return encodable(redact_text(text)[:500])


def _start_span(telemetry: Telemetry, name: str, **kwargs: Any) -> Any:
    """A span of ``telemetry``'s tracer; a non-recording one when the application's
    tracer provider or a span processor fails (logged: telemetry must not fail a batch)."""
    from opentelemetry import trace

    try:
        return _tracer(telemetry).start_span(name, **kwargs)
    except Exception:
        logger.exception("ccwire: telemetry could not start the %s span: it is not recorded", name)
        return trace.INVALID_SPAN


def _tracer(telemetry: Telemetry) -> Any:
    from opentelemetry import trace

    from .._version import __version__

    provider = telemetry.tracer_provider or trace.get_tracer_provider()
    return provider.get_tracer("ccwire", __version__)
