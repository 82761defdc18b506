"""What ``ccwire batch`` shows while it runs: a live rich panel, NDJSON events, or plain lines.

`BatchProgress` folds the batch's `BatchEvent`s into counters (done, failed,
running, retries, tokens, cost) that every display reads; ``rich`` is imported only
by `RichBatchDisplay`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import IO, Any

from .._batch.results import BatchResult
from .._batch.session import BatchEvent
from .io import json_for
from .render import format_duration

__all__ = [
    "BatchDisplay",
    "BatchProgress",
    "JsonBatchDisplay",
    "PlainBatchDisplay",
    "RichBatchDisplay",
    "failure_lines",
    "cost_text",
    "summary_lines",
]


@dataclass
class BatchProgress:
    """Running totals of one ``ccwire batch`` invocation.

    Attributes:
        total: Tasks this invocation has to run (finished ones excluded).
        skipped: Tasks skipped because the results file had them.
        prior_failed: Skipped tasks whose recorded result is a failure.
        malformed: Lines of the task file skipped as malformed (their tasks never run).
    """

    total: int
    skipped: int = 0
    prior_failed: int = 0
    malformed: int = 0
    done: int = 0
    failed: int = 0
    retries: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    cost_unknown: int = 0
    """Finished tasks whose cost is not (all) known (`BatchResult.cost_known`)."""
    timed_out: int = 0
    """Failed tasks stopped by their time limit (``error_kind="timeout"``)."""
    budget: dict[str, Any] | None = None
    """The batch's budget once it has run (``--max-cost-usd``; `None` without one):
    ``max_cost_usd``, ``spent_usd`` (the cost the results file records, earlier runs
    included), ``spent`` (whether that reached the budget, which stopped the batch),
    ``not_run`` and ``interrupted`` (the tasks it left without a result), and
    ``overshoot_usd`` (how far the recorded cost passed it)."""
    started_at: float = field(default_factory=time.monotonic)
    running: dict[str, tuple[float, int]] = field(default_factory=dict)
    failures: list[BatchResult] = field(default_factory=list)

    def on_event(self, event: BatchEvent) -> None:
        """Fold one event into the totals."""
        if event.kind == "started":
            self.running[event.task_id] = (time.monotonic(), event.attempt)
        elif event.kind == "retry":
            self.retries += 1
        elif event.kind == "finished" and event.result is not None:
            result = event.result
            self.running.pop(result.id, None)
            self.done += 1
            if not result.ok:
                self.failed += 1
                self.timed_out += result.error_kind == "timeout"
                if len(self.failures) < 1000:
                    self.failures.append(result)
            self.input_tokens += result.input_tokens
            self.output_tokens += result.output_tokens
            self.cost_usd += result.cost_usd
            self.cost_unknown += not result.cost_known

    @property
    def elapsed(self) -> float:
        """Seconds since the batch started."""
        return time.monotonic() - self.started_at

    @property
    def rate(self) -> float:
        """Finished tasks per second so far."""
        return self.done / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def eta(self) -> float | None:
        """Seconds until every task is done at the current rate (None before the first)."""
        left = self.total - self.done
        return left / self.rate if self.rate > 0 else None

    def slowest(self, count: int = 3) -> list[tuple[str, float, int]]:
        """The running tasks that started first: ``(id, seconds, attempt)``."""
        now = time.monotonic()
        items = list(self.running.items())  # read from the display's thread: copy first
        items.sort(key=lambda kv: kv[1][0])
        return [(tid, now - start, attempt) for tid, (start, attempt) in items[:count]]

    def lines(self) -> list[str]:
        """The status, in three short lines (counts; rate and ETA; tokens and cost)."""
        eta = format_duration(self.eta) if self.eta is not None else "-"
        return [
            f"done {self.done}/{self.total}  failed {self.failed}  running {len(self.running)}"
            f"  retries {self.retries}",
            f"rate {self.rate * 60:.1f}/min  ETA {eta}",
            f"tokens {self.input_tokens:,} in, {self.output_tokens:,} out"
            f"  cost {cost_text(self.cost_usd, self.cost_unknown)}",
        ]

    def summary(self) -> dict[str, Any]:
        """The totals as JSON."""
        return {
            "total": self.total,
            "done": self.done,
            "ok": self.done - self.failed,
            "failed": self.failed,
            "timed_out": self.timed_out,
            "skipped": self.skipped,
            "previously_failed": self.prior_failed,
            "malformed": self.malformed,
            "retries": self.retries,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": round(self.cost_usd, 6),
            "cost_unknown_tasks": self.cost_unknown,
            "elapsed_s": round(self.elapsed, 3),
            "rate_per_min": round(self.rate * 60, 2),
            "budget": None if self.budget is None else dict(self.budget),
        }


def cost_text(cost_usd: float, unknown: int) -> str:
    """A total cost, saying when part of it is unknown: ``$0.0100 + unknown (2 tasks
    crashed, lost or timed out)`` (never a known-looking total that
    leaves them out)."""
    text = f"${cost_usd:.4f}"
    if unknown:
        tasks = f"{unknown} task{'s' if unknown != 1 else ''}"
        text += f" + unknown ({tasks} crashed, lost or timed out)"
    return text


def summary_lines(progress: BatchProgress) -> list[tuple[str, str]]:
    """The rows of the end-of-batch summary table."""
    s = progress.summary()
    return [
        ("tasks run", f"{s['done']} of {s['total']}"),
        ("succeeded", str(s["ok"])),
        (
            "failed",
            f"{s['failed']} ({s['timed_out']} timed out)" if s["timed_out"] else str(s["failed"]),
        ),
        ("skipped (already done)", f"{s['skipped']} ({s['previously_failed']} had failed)"),
        ("malformed lines skipped", str(s["malformed"])),
        ("retries", str(s["retries"])),
        ("tokens", f"{s['input_tokens']:,} in, {s['output_tokens']:,} out"),
        ("cost", cost_text(s["cost_usd"], s["cost_unknown_tasks"])),
        ("wall time", format_duration(s["elapsed_s"])),
        ("rate", f"{s['rate_per_min']:.1f} tasks/min"),
        *_budget_lines(s["budget"]),
    ]


def _budget_lines(budget: dict[str, Any] | None) -> list[tuple[str, str]]:
    """The summary's budget row (none without a budget)."""
    if budget is None:
        return []
    text = f"${budget['spent_usd']:.4f} recorded of ${budget['max_cost_usd']:.4f}"
    if budget["spent"]:
        text += f": spent, {budget['not_run']} tasks not run"
        if budget["interrupted"]:
            text += f", {budget['interrupted']} interrupted"
    return [("budget", text)]


def failure_lines(result: BatchResult, *, verbose: bool) -> list[str]:
    """How a failed task is shown: one line; with `verbose`, its session id, the CLI's
    exit code and the end of its stderr (already bounded and masked) under it."""
    lines = [f"FAILED {result.id}: {result.error} (attempts: {result.attempts})"]
    if verbose:
        if result.session_id:
            lines.append(f"  session {result.session_id}")
        if result.exit_code is not None:
            lines.append(f"  exit code {result.exit_code}")
        if result.stderr:
            lines.append("  the CLI's stderr ended with:")
            lines.extend(f"  | {line}" for line in result.stderr.splitlines())
    return lines


class BatchDisplay:
    """Base display: shows nothing (subclasses override)."""

    def __init__(self, progress: BatchProgress) -> None:
        self.progress = progress

    def __enter__(self) -> BatchDisplay:
        """Start showing."""
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Stop showing."""

    def event(self, event: BatchEvent) -> None:
        """One batch event (the progress is already updated)."""

    def note(self, text: str) -> None:
        """A warning (already written to stderr; only the JSON display repeats it)."""

    def finish(self, *, interrupted: bool) -> None:
        """Show the summary."""


class JsonBatchDisplay(BatchDisplay):
    """NDJSON on stdout: one object per event, then ``summary``."""

    def __init__(self, progress: BatchProgress, out: IO[str]) -> None:
        super().__init__(progress)
        self._out = out

    def _write(self, obj: dict[str, Any]) -> None:
        self._out.write(json_for(self._out, obj, default=str) + "\n")
        self._out.flush()

    def __enter__(self) -> BatchDisplay:
        """Write the ``start`` event."""
        p = self.progress
        self._write({"event": "start", "total": p.total, "skipped": p.skipped})
        return self

    def event(self, event: BatchEvent) -> None:
        """Write ``task_started``, ``task_retry`` or ``task_finished``."""
        obj: dict[str, Any] = {"event": f"task_{event.kind}", "id": event.task_id}
        if event.kind == "retry":
            obj.update(attempt=event.attempt, delay_s=round(event.delay, 3), reason=event.reason)
        elif event.kind == "started":
            obj["attempt"] = event.attempt
        elif event.result is not None:
            r = event.result
            obj.update(
                ok=r.ok,
                attempts=r.attempts,
                duration_s=r.duration_s,
                error=r.error,
                done=self.progress.done,
                failed=self.progress.failed,
            )
            if not r.ok:
                obj.update(error_kind=r.error_kind, session_id=r.session_id,
                           exit_code=r.exit_code, stderr=r.stderr)  # fmt: skip
        self._write(obj)

    def note(self, text: str) -> None:
        """Write a ``warning`` event."""
        self._write({"event": "warning", "message": text})

    def finish(self, *, interrupted: bool) -> None:
        """Write the ``summary`` event."""
        self._write({"event": "summary", "interrupted": interrupted, **self.progress.summary()})


class PlainBatchDisplay(BatchDisplay):
    """Plain lines: one per failed task, then the summary (for logs and pipes)."""

    def __init__(self, progress: BatchProgress, out: IO[str], *, verbose: bool = False) -> None:
        super().__init__(progress)
        self._out = out
        self._verbose = verbose

    def event(self, event: BatchEvent) -> None:
        """Print failures as they happen."""
        r = event.result
        if event.kind == "finished" and r is not None and not r.ok:
            self._out.write(
                "".join(f"{line}\n" for line in failure_lines(r, verbose=self._verbose))
            )
            self._out.flush()

    def finish(self, *, interrupted: bool) -> None:
        """Print the summary as aligned lines."""
        if interrupted:
            self._out.write("interrupted\n")
        for name, value in summary_lines(self.progress):
            self._out.write(f"{name:<24} {value}\n")
        self._out.flush()


class RichBatchDisplay(BatchDisplay):
    """A live panel (counts, rate, ETA, tokens, cost, slowest tasks) and a summary table."""

    def __init__(
        self, progress: BatchProgress, out: IO[str], *, force: bool = False, verbose: bool = False
    ) -> None:
        from rich.console import Console

        super().__init__(progress)
        self._verbose = verbose
        self._console = Console(file=out, highlight=False, force_terminal=force or None)
        self._live: Any = None

    def __enter__(self) -> BatchDisplay:
        """Start the live panel."""
        from rich.live import Live

        self._live = Live(
            console=self._console,
            refresh_per_second=4,
            transient=True,
            get_renderable=self._panel,
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self._live.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Stop the live panel."""
        live, self._live = self._live, None
        if live is not None:
            live.stop()

    def _panel(self) -> Any:
        from rich.console import Group
        from rich.text import Text

        p = self.progress
        filled = int(40 * p.done / p.total) if p.total else 40
        bar = Text.assemble(("━" * filled, "green"), ("━" * (40 - filled), "grey37"))
        bar.append(f" {100 * p.done / p.total if p.total else 100:.0f}%")
        rows: list[Any] = [bar, *(Text(line) for line in p.lines())]
        for task_id, seconds, attempt in p.slowest():
            again = f" (attempt {attempt})" if attempt > 1 else ""
            rows.append(Text(f"  running {task_id}: {format_duration(seconds)}{again}", "dim"))
        return Group(*rows)

    def event(self, event: BatchEvent) -> None:
        """Print failures above the panel."""
        r = event.result
        if event.kind == "finished" and r is not None and not r.ok:
            from rich.text import Text

            first, *rest = failure_lines(r, verbose=self._verbose)
            self._console.print(Text.assemble(("FAILED", "red"), first.removeprefix("FAILED")))
            for line in rest:
                self._console.print(Text(line, "dim"))

    def finish(self, *, interrupted: bool) -> None:
        """Print the summary table."""
        from rich.table import Table

        title = "ccwire batch: interrupted" if interrupted else "ccwire batch"
        table = Table(title=title, show_header=False)
        table.add_column("", style="bold")
        table.add_column("")
        for name, value in summary_lines(self.progress):
            table.add_row(name, value)
        self._console.print(table)
