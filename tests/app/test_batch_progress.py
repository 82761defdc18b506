"""What `ccwire batch` shows while it runs, fed the batch's events directly: the totals
every display reads, a failure's lines, and the plain, JSON and live (rich) displays."""

from __future__ import annotations

import io
import json
import re

from rich.console import Console

from ccwire._app.batch_progress import (
    BatchProgress,
    JsonBatchDisplay,
    PlainBatchDisplay,
    RichBatchDisplay,
    failure_lines,
)
from ccwire._batch.session import BatchEvent
from ccwire.batch import BatchResult

OK = BatchResult(id="t1", ok=True, result="fine", cost_usd=0.25,
                 usage={"input_tokens": 1200, "output_tokens": 30})  # fmt: skip
CRASHED = BatchResult(
    id="t2", ok=False, error="the CLI stopped", error_kind="crash", attempts=2,
    session_id="s-2", exit_code=137, stderr="Killed\nout of memory", cost_known=False,
)  # fmt: skip


def feed(progress: BatchProgress, *displays: object) -> None:
    """The events of a batch of three: t1 succeeds, t2 fails after a retry, t3 runs."""
    events = [
        BatchEvent("started", "t1"),
        BatchEvent("started", "t2"),
        BatchEvent("retry", "t2", attempt=1, delay=0.5, reason="start"),
        BatchEvent("started", "t2", attempt=2),
        BatchEvent("finished", "t1", result=OK),
        BatchEvent("finished", "t2", attempt=2, result=CRASHED),
        BatchEvent("started", "t3", attempt=2),
    ]
    for event in events:
        progress.on_event(event)
        for display in displays:
            display.event(event)  # type: ignore[attr-defined]


def test_the_totals_fold_every_event() -> None:
    progress = BatchProgress(total=3, skipped=1, prior_failed=1, malformed=2)
    feed(progress)
    assert (progress.done, progress.failed, progress.retries) == (2, 1, 1)
    assert progress.failures == [CRASHED]
    assert [task for task, _, _ in progress.slowest()] == ["t3"]
    assert progress.slowest()[0][2] == 2  # its attempt
    counts, rate, cost = progress.lines()
    assert counts == "done 2/3  failed 1  running 1  retries 1"
    assert rate.startswith("rate ") and "ETA " in rate
    # the crashed task's cost is unknown, not $0: the total says so
    assert (
        cost
        == "tokens 1,200 in, 30 out  cost $0.2500 + unknown (1 task crashed, lost or timed out)"
    )
    summary = progress.summary()
    assert summary["cost_unknown_tasks"] == 1
    assert {k: summary[k] for k in ("total", "done", "ok", "failed", "skipped",
                                    "previously_failed", "malformed", "retries")} == {
        "total": 3, "done": 2, "ok": 1, "failed": 1, "skipped": 1,
        "previously_failed": 1, "malformed": 2, "retries": 1,
    }  # fmt: skip


def test_before_any_task_finished_there_is_no_eta() -> None:
    progress = BatchProgress(total=3)
    assert progress.eta is None
    assert progress.lines()[1].endswith("ETA -")


def test_a_failure_in_one_line_or_with_its_evidence() -> None:
    assert failure_lines(CRASHED, verbose=False) == ["FAILED t2: the CLI stopped (attempts: 2)"]
    assert failure_lines(CRASHED, verbose=True) == [
        "FAILED t2: the CLI stopped (attempts: 2)",
        "  session s-2",
        "  exit code 137",
        "  the CLI's stderr ended with:",
        "  | Killed",
        "  | out of memory",
    ]


def test_plain_lines_show_failures_then_the_summary() -> None:
    out = io.StringIO()
    progress = BatchProgress(total=3)
    display = PlainBatchDisplay(progress, out, verbose=True)
    with display:
        feed(progress, display)
        display.finish(interrupted=True)
    lines = out.getvalue().splitlines()
    assert lines[:4] == ["FAILED t2: the CLI stopped (attempts: 2)", "  session s-2",
                         "  exit code 137", "  the CLI's stderr ended with:"]  # fmt: skip
    assert "interrupted" in lines
    assert "tasks run                2 of 3" in lines
    assert "failed                   1" in lines


def test_tasks_that_ran_out_of_time_are_counted() -> None:
    out = io.StringIO()
    progress = BatchProgress(total=2)
    display = PlainBatchDisplay(progress, out)
    slow = BatchResult(id="slow", ok=False, error_kind="timeout", cost_known=False,
                       error="the task did not finish within its time limit of 5 s")  # fmt: skip
    for result in (slow, CRASHED):
        event = BatchEvent("finished", result.id, result=result)
        progress.on_event(event)
        display.event(event)
    display.finish(interrupted=False)
    lines = out.getvalue().splitlines()
    assert (
        lines[0]
        == "FAILED slow: the task did not finish within its time limit of 5 s (attempts: 1)"
    )
    assert "failed                   2 (1 timed out)" in lines
    assert (progress.summary()["failed"], progress.summary()["timed_out"]) == (2, 1)


def test_json_events_for_each_kind() -> None:
    out = io.StringIO()
    progress = BatchProgress(total=3, skipped=1)
    display = JsonBatchDisplay(progress, out)
    with display:
        feed(progress, display)
        display.note("line 4: not valid JSON; skipped")
        display.finish(interrupted=False)
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    assert events[0] == {"event": "start", "total": 3, "skipped": 1}
    retry = next(e for e in events if e["event"] == "task_retry")
    assert retry == {"event": "task_retry", "id": "t2", "attempt": 1, "delay_s": 0.5,
                     "reason": "start"}  # fmt: skip
    failed = next(e for e in events if e["event"] == "task_finished" and not e["ok"])
    assert (failed["error_kind"], failed["exit_code"], failed["session_id"]) == (
        "crash",
        137,
        "s-2",
    )
    assert {"event": "warning", "message": "line 4: not valid JSON; skipped"} in events
    assert events[-1]["event"] == "summary" and events[-1]["done"] == 2


def test_the_live_panel_and_its_summary_table() -> None:
    out = io.StringIO()
    progress = BatchProgress(total=3)
    display = RichBatchDisplay(progress, out, force=True, verbose=True)
    with display:
        feed(progress, display)
        shown = io.StringIO()
        Console(file=shown, width=100, color_system=None).print(display._panel())
        display.finish(interrupted=True)
    panel = shown.getvalue()
    assert "67%" in panel  # 2 of 3 done
    assert "done 2/3  failed 1  running 1  retries 1" in panel
    assert "running t3: " in panel and "(attempt 2)" in panel
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue())  # the terminal's codes
    assert "FAILED t2: the CLI stopped (attempts: 2)" in text
    assert "exit code 137" in text
    assert "ccwire batch: interrupted" in text
    assert "tasks run" in text and "2 of 3" in text


def test_an_empty_batch_is_a_full_bar() -> None:
    shown = io.StringIO()
    display = RichBatchDisplay(BatchProgress(total=0), io.StringIO())
    Console(file=shown, width=100, color_system=None).print(display._panel())
    assert "100%" in shown.getvalue()
