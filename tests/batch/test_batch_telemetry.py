"""A batch as one trace on the local executor, with the fake CLI (``fake_cli.py``): the
batch span and its counts, a task span per task over its sessions' spans, a failed, a
stopped and a cancelled task, a batch that fails; and the Ray worker's side of
`run_traced` (its setup run once per process, what it recorded exported after each
task), run here in-process. The whole flow on a Ray cluster, exported to a collector,
is in ``tests/e2e/test_otel_collector_e2e.py``."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.to_thread
import pytest

from ccwire import ClaudeAgentOptions, Telemetry
from ccwire._batch import telemetry as batch_telemetry
from ccwire._batch.ray_executor import portable_options
from ccwire._batch.telemetry import FLUSH_SECONDS, BatchTracing, run_traced, take_export
from ccwire.batch import (
    BatchConfigError,
    BatchError,
    BatchEvent,
    BatchState,
    BatchTask,
    RetryPolicy,
    run_batch,
)

from .conftest import FakeOptions, Holds

pytest.importorskip("opentelemetry.sdk.trace", reason="needs ccwire[otel]")

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    SimpleSpanProcessor,
)
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from tests.fixtures.failing_otel import FailingProcessor, FailingProvider

from .otel_down import DownEndpoint

pytestmark = pytest.mark.anyio
LIMIT = 60  # seconds any one batch may take here


@dataclass
class Spans:
    exporter: InMemorySpanExporter
    provider: TracerProvider

    def named(self, name: str) -> list[ReadableSpan]:
        return [s for s in self.exporter.get_finished_spans() if s.name == name]

    def children(self, parent: ReadableSpan, name: str) -> list[ReadableSpan]:
        return [
            s
            for s in self.named(name)
            if s.parent is not None and s.parent.span_id == parent.context.span_id
        ]


@pytest.fixture
def spans() -> Iterator[Spans]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield Spans(exporter, provider)
    provider.shutdown()


def attrs_of(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


async def test_a_batch_is_one_trace_with_a_span_per_task_over_its_sessions(
    fake_options: FakeOptions, spans: Spans
) -> None:
    events: list[BatchEvent] = []
    tasks = [{"id": "fine", "prompt": "echo ok"}, {"id": "boom", "prompt": "crash now"}]
    options = fake_options(telemetry=Telemetry(tracer_provider=spans.provider))
    with anyio.fail_after(LIMIT):
        async with run_batch(
            tasks, options=options, retries=0, events=events.append, concurrency=2
        ) as run:
            got = {r.id: r for r in await run.collect()}
    assert run.state is BatchState.COMPLETED
    # the caller's event sink still sees every event
    assert sorted(e.task_id for e in events if e.kind == "finished") == ["boom", "fine"]

    (batch,) = spans.named("ccwire.batch")
    assert batch.parent is None
    assert attrs_of(batch) == {
        "ccwire.batch.executor": "local",
        "ccwire.batch.concurrency": 2,
        "ccwire.batch.submitted": 2,
        "ccwire.batch.skipped": 0,
        "ccwire.batch.ok": 1,
        "ccwire.batch.failed": 1,
        "ccwire.batch.stopped": False,
        "ccwire.usage.cost_usd": pytest.approx(got["fine"].cost_usd + got["boom"].cost_usd),
    }
    assert batch.status.status_code is StatusCode.UNSET  # failed tasks do not fail a batch
    task_spans = {
        attrs_of(s)["ccwire.batch.task_id"]: s for s in spans.children(batch, "ccwire.batch.task")
    }
    assert sorted(task_spans) == ["boom", "fine"]
    fine, boom = task_spans["fine"], task_spans["boom"]
    assert attrs_of(fine)["ccwire.batch.task.ok"] is True
    assert attrs_of(fine)["gen_ai.conversation.id"] == got["fine"].session_id
    assert fine.status.status_code is StatusCode.UNSET
    assert attrs_of(boom)["ccwire.batch.task.ok"] is False
    assert attrs_of(boom)["error.type"] == "crash"
    assert boom.status.status_code is StatusCode.ERROR
    assert boom.status.description == got["boom"].error
    for task in (fine, boom):  # each session (one attempt here) under its task
        assert len(spans.children(task, "invoke_agent claude-code")) == 1


async def test_a_spent_budget_is_on_the_batch_span(fake_options: FakeOptions, spans: Spans) -> None:
    # the span of a batch its budget stopped looked like that of a batch that ran all
    tasks = [{"id": "p", "prompt": "pay 0.01 p"}, {"id": "a", "prompt": "echo a"}]
    options = fake_options(telemetry=Telemetry(tracer_provider=spans.provider))
    with anyio.fail_after(LIMIT):
        async with run_batch(tasks, options=options, max_cost_usd=0.005, concurrency=1) as run:
            got = await run.collect()
    assert [r.id for r in got] == ["p"]
    (batch,) = spans.named("ccwire.batch")
    attrs = attrs_of(batch)
    assert attrs["ccwire.batch.budget.max_cost_usd"] == 0.005
    assert attrs["ccwire.batch.budget.spent_usd"] == pytest.approx(got[0].cost_usd)
    assert attrs["ccwire.batch.budget.spent"] is True


async def test_a_stopped_task_is_cancelled_on_its_span(
    fake_options: FakeOptions, holds: Holds, spans: Spans
) -> None:
    options = fake_options(telemetry=Telemetry(tracer_provider=spans.provider))
    with anyio.fail_after(LIMIT):
        async with run_batch([{"id": "slow", "prompt": "hold on"}], options=options) as run:
            await anyio.to_thread.run_sync(holds.wait_for, 1)  # the session is running
            run.stop()
            assert [r async for r in run] == []
    assert run.state is BatchState.STOPPED
    (task,) = spans.named("ccwire.batch.task")
    assert attrs_of(task)["error.type"] == "cancelled"
    assert task.status.description == "the task did not finish"
    (batch,) = spans.named("ccwire.batch")
    assert attrs_of(batch)["ccwire.batch.submitted"] == 1
    assert attrs_of(batch)["ccwire.batch.ok"] == attrs_of(batch)["ccwire.batch.failed"] == 0
    # it said nothing more: a batch stopped looked like one that had run all its tasks
    assert attrs_of(batch)["ccwire.batch.stopped"] is True


async def test_a_batch_that_fails_is_an_error_on_its_span(
    fake_options: FakeOptions, spans: Spans
) -> None:
    options = fake_options(telemetry=Telemetry(tracer_provider=spans.provider))
    run = run_batch([{"id": "a", "prompt": "echo a"}], options=options, output="/dev/full")
    with anyio.fail_after(LIMIT), pytest.raises(BatchError, match="/dev/full"):
        async with run as results:
            await results.collect()
    (batch,) = spans.named("ccwire.batch")
    assert batch.status.status_code is StatusCode.ERROR
    assert "/dev/full" in (batch.status.description or "")
    assert attrs_of(batch)["error.type"] == type(run.error).__name__
    # the exception is recorded too (it was not: the span said only its first line)
    (raised,) = [dict(e.attributes or {}) for e in batch.events if e.name == "exception"]
    assert str(raised["exception.type"]).endswith(type(run.error).__name__)
    assert "/dev/full" in str(raised["exception.message"])
    assert "Traceback" in str(raised["exception.stacktrace"])


def test_the_ray_executor_needs_a_worker_setup_and_ships_no_provider(spans: Spans) -> None:
    with pytest.raises(BatchConfigError, match="worker_setup='ccwire:setup_otlp'"):
        portable_options(ClaudeAgentOptions(telemetry=Telemetry(tracer_provider=spans.provider)))
    shipped = portable_options(
        ClaudeAgentOptions(
            telemetry=Telemetry(
                tracer_provider=spans.provider, worker_setup="ccwire:setup_otlp", agent_name="a"
            )
        )
    )
    assert shipped.telemetry == Telemetry(worker_setup="ccwire:setup_otlp", agent_name="a")
    assert shipped.telemetry.tracer_provider is None
    assert portable_options(ClaudeAgentOptions()).telemetry is None


# ------------------------------------------------------------- the Ray worker's side

SETUPS: list[str] = []


def record_setup() -> None:
    """A `Telemetry.worker_setup` (by reference): counts its runs."""
    SETUPS.append("ran")


def failing_setup() -> None:
    """A `Telemetry.worker_setup` whose exporter cannot be configured."""
    raise RuntimeError("no collector at api_key=sk-ant-api03-Zq9xY8wV7uT6sR5q")


# A worker is a Ray actor, which runs asyncio; the setup runs once per process, so
# one backend only.
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_worker_sets_up_once_and_exports_after_each_task(
    fake_options: FakeOptions,
) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    # batched: nothing is exported before a flush (within the test)
    provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=600_000))
    telemetry = Telemetry(tracer_provider=provider, worker_setup=f"{__name__}:record_setup")
    options = fake_options(telemetry=telemetry)
    # the driver's side: the batch span, and its context as sent with each task
    driver = BatchTracing(options, executor="ray", concurrency=1)
    with driver.started():
        parent = driver.carrier()
    assert parent is not None and set(parent) == {"traceparent"}
    assert BatchTracing(ClaudeAgentOptions(), executor="ray", concurrency=1).carrier() is None
    try:
        for n, expected in ((1, 1), (2, 2)):
            with anyio.fail_after(LIMIT):
                result = await run_traced(
                    BatchTask(id=f"t{n}", prompt=f"echo {n}"),
                    options,
                    RetryPolicy(max_attempts=1),
                    parent=parent,
                    worker=True,
                )
            assert result.ok
            tasks = [s for s in exporter.get_finished_spans() if s.name == "ccwire.batch.task"]
            assert len(tasks) == expected  # exported when the task was done
        assert SETUPS == ["ran"]
        driver.end(submitted=2, skipped=0, failure=None)
        provider.force_flush()
        (batch,) = [s for s in exporter.get_finished_spans() if s.name == "ccwire.batch"]
        for task in tasks:  # under the driver's batch span, as if from another process
            assert task.parent is not None and task.parent.span_id == batch.context.span_id
            assert task.context.trace_id == batch.context.trace_id
    finally:
        provider.shutdown()


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_worker_whose_setup_fails_fails_each_task_as_config(tmp_path: Any) -> None:
    options = ClaudeAgentOptions(
        cli_path=str(tmp_path / "never-started"),
        telemetry=Telemetry(worker_setup=f"{__name__}:failing_setup"),
    )
    for n in (1, 2):  # every task of the worker, the same way
        result = await run_traced(
            BatchTask(id=f"t{n}", prompt="x", metadata={"n": n}),
            options,
            RetryPolicy(max_attempts=1),
            worker=True,
        )
        assert (result.id, result.ok, result.error_kind) == (f"t{n}", False, "config")
        assert result.metadata == {"n": n}
        assert result.error is not None
        assert result.error.startswith("telemetry.worker_setup failed: no collector at")
        assert "sk-ant-api03" not in result.error
    missing = ClaudeAgentOptions(telemetry=Telemetry(worker_setup=f"{__name__}:no_such"))
    result = await run_traced(BatchTask(id="t", prompt="x"), missing, RetryPolicy(), worker=True)
    assert result.error_kind == "config" and "no_such" in (result.error or "")
    assert trace.get_current_span() is trace.INVALID_SPAN  # no context left attached


@pytest.mark.parametrize("failing", ["start", "end", "provider"])
async def test_a_failing_span_processor_or_tracer_provider_does_not_fail_the_batch(
    fake_options: FakeOptions, spans: Spans, failing: str
) -> None:
    provider: Any = spans.provider
    if failing == "provider":
        provider = FailingProvider()
    else:
        provider.add_span_processor(FailingProcessor(failing))  # after the exporter's
    options = fake_options(telemetry=Telemetry(tracer_provider=provider))
    with anyio.fail_after(LIMIT):
        async with run_batch([{"id": "a", "prompt": "echo ok"}], options=options) as run:
            (result,) = await run.collect()
    assert run.state is BatchState.COMPLETED and result.ok
    names = sorted(s.name for s in spans.exporter.get_finished_spans())
    if failing == "end":  # each span still ended
        assert names == ["ccwire.batch", "ccwire.batch.task", "invoke_agent claude-code"]
    else:  # nothing recorded, the batch ran on
        assert names == []


def no_setup() -> None:
    """A worker setup that leaves the test's provider as it is."""


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_worker_waits_once_for_an_endpoint_that_is_down_and_counts_its_spans(
    fake_options: FakeOptions, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # each task's flush waited the exporter's whole timeout (10 s, then 3 s) for an
    # endpoint that was down; now the first waits a second, the next ones not at all,
    # the worker warns once, and the driver counts the spans that were not exported
    monkeypatch.setattr(batch_telemetry, "_worker_export", batch_telemetry._WorkerExport())
    endpoint = DownEndpoint()
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(endpoint, schedule_delay_millis=600_000))
    telemetry = Telemetry(tracer_provider=provider, worker_setup=f"{__name__}:no_setup")
    options = fake_options(telemetry=telemetry)
    reports: list[dict[str, Any]] = []
    try:
        for n in range(4):
            with anyio.fail_after(LIMIT):
                result = await run_traced(BatchTask(id=f"t{n}", prompt=f"echo {n}"), options,
                                          RetryPolicy(max_attempts=1), worker=True)  # fmt: skip
            assert result.ok
            report = take_export(f"t{n}")
            assert report is not None
            reports.append(report)
    finally:
        endpoint.gate.set()
        provider.shutdown()
    assert [(r["exported"], r["first_failure"]) for r in reports] == [
        (False, True), (False, False), (False, False), (False, False)
    ]  # fmt: skip
    assert [r["waited_s"] for r in reports] == [FLUSH_SECONDS, 0, 0, 0]  # waited once
    assert all(r["spans"] >= 2 for r in reports)  # the task's span and its session's
    warned = [r for r in caplog.records if "could not export its spans" in r.getMessage()]
    assert len(warned) == 1
    # the driver's side: the spans counted, one warning for the worker
    caplog.clear()
    run = run_batch([])
    for report in reports:
        run.note_export(report)
    assert run.spans_unexported == sum(r["spans"] for r in reports)
    assert len([r for r in caplog.records if "Ray worker" in r.getMessage()]) == 1


async def test_text_utf8_cannot_carry_is_exported_not_the_export_failed(
    fake_options: FakeOptions, spans: Spans
) -> None:
    # a task id or an error with a lone surrogate (a "\ud800" escape in JSON): the OTLP
    # exporter dropped the attribute, and a status description with one failed the
    # export of every span sent with it (UnicodeEncodeError)
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    async def odd(client: Any) -> None:
        raise ValueError("half \ud800 a pair")

    odd.batch_id = "odd \ud800 id"  # type: ignore[attr-defined]
    options = fake_options(telemetry=Telemetry(tracer_provider=spans.provider))
    with anyio.fail_after(LIMIT):
        async with run_batch([odd], options=options, retries=0) as run:
            (result,) = await run.collect()
    assert result.error_kind == "exception"
    (task,) = spans.named("ccwire.batch.task")
    assert attrs_of(task)["ccwire.batch.task_id"] == "odd ? id"
    assert task.status.description == "ValueError: half ? a pair"
    encoded = encode_spans(spans.exporter.get_finished_spans()).SerializeToString()
    assert b"odd ? id" in encoded and b"half ? a pair" in encoded


async def test_each_retry_is_an_event_on_the_task_span(
    fake_options: FakeOptions, spans: Spans, tmp_path: Any
) -> None:
    # a task's attempts were sessions side by side under its span: nothing said that
    # the later ones were retries, after which failure, nor how long the task waited
    gone = tmp_path / "gone-cli"
    gone.write_text("#!/bin/sh\necho 'cannot start' >&2\nexit 1\n")
    gone.chmod(0o755)
    options = fake_options(telemetry=Telemetry(tracer_provider=spans.provider))
    options = dataclasses.replace(options, cli_path=str(gone))
    policy = RetryPolicy(max_attempts=3, base_delay=0.01, max_delay=0.02)
    with anyio.fail_after(LIMIT):
        async with run_batch([{"id": "t", "prompt": "echo"}], options=options,
                             retries=policy) as run:  # fmt: skip
            (result,) = await run.collect()
    assert (result.ok, result.error_kind, result.attempts) == (False, "start", 3)
    (task,) = spans.named("ccwire.batch.task")
    retries: list[dict[str, Any]] = [
        dict(e.attributes or {}) for e in task.events if e.name == "ccwire.batch.retry"
    ]
    assert [r["ccwire.batch.task.attempt"] for r in retries] == [1, 2]
    assert all(0 < r["ccwire.batch.retry.delay_s"] <= 0.02 for r in retries)
    assert all(r["ccwire.batch.retry.reason"] for r in retries)
    assert len(spans.children(task, "invoke_agent claude-code")) == 3
