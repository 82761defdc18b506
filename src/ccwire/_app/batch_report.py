"""``ccwire batch report``: a batch's results file as one self-contained HTML page.

The page is made of inline SVG charts drawn here (no JavaScript library, nothing
fetched: it opens offline from a ``file://`` URL): task durations, cost and tokens per
task, tool calls per task, and results by kind of failure; then the slowest and the
most expensive tasks, each linked to its session's transcript page (the page of
``ccwire show --html``, written beside the report when the transcript is on this
machine). Every bar carries its task id and value (``data-id``, ``data-value``) and a
tooltip.

A results file may hold several results of one task (``--rerun-failed``): the last
one counts, as for resuming. Lines that hold no readable result are counted and named
on the page, never dropped unsaid.

``--json`` prints the same numbers as one JSON object (`summarize`, its keys in
`SUMMARY_KEYS`), for scripts and CI checks.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import secrets
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import IO, Any

from .._batch.output import read_results_counted
from .._batch.results import BatchResult
from .batch_progress import cost_text
from .errors import UsageError
from .html import page_bytes, render_html
from .transcript_view import load_session_view

__all__ = [
    "MAX_BARS",
    "SUMMARY_KEYS",
    "SUMMARY_VERSION",
    "TOP",
    "add_latest",
    "percentiles",
    "read_latest",
    "refuse_overwriting",
    "Superseded",
    "render_report",
    "report_command",
    "report_view",
    "summarize",
    "write_report",
]

MAX_BARS = 120
"""Up to this many tasks a chart has one bar per task; past it, a histogram."""

TOP = 10
"""Rows of the slowest and most expensive tables."""

_BINS = 20
_WIDTH = 860
_BAR_AREA = 600  # the width of the bars in a per-task chart
_ROW = 18  # the height of one bar's row
_PALETTE = {"input": "#4c78a8", "output": "#f58518"}
_KIND_COLOURS = {"ok": "#54a24b", "api": "#e45756", "model": "#b279a2", "start": "#9d755d",
                 "crash": "#e45756", "exception": "#ff9da6", "config": "#bab0ac",
                 "lost": "#eeca3b", "timeout": "#f58518"}  # fmt: skip


@dataclass
class Superseded:
    """The results of a results file that a later result of their task replaced
    (``--rerun-failed``): the report shows each task's last result, but what the
    earlier ones cost was spent too (a ``--max-cost-usd`` budget counts it).

    Attributes:
        results: How many.
        cost_usd: What they cost (of those whose cost is known).
    """

    results: int = 0
    cost_usd: float = 0.0

    def add(self, result: BatchResult) -> None:
        """Count ``result``, replaced by a later one."""
        self.results += 1
        self.cost_usd += result.cost_usd


def read_latest(
    path: str | Path, superseded: Superseded | None = None
) -> tuple[list[BatchResult], int]:
    """The last result of each task in a results file, in the order tasks last
    finished, each cut to what the report shows (`report_view`), and how many lines
    held no readable result; the results a later one replaced are counted in
    ``superseded``.

    The file is read one line at a time, so what is held grows with the tasks, not with
    the file (a task's answer text may be megabytes)."""
    reading = read_results_counted(path)
    latest: dict[str, BatchResult] = {}
    for result in reading:
        add_latest(latest, result, superseded)
    return list(latest.values()), reading.skipped


def add_latest(
    latest: dict[str, BatchResult], result: BatchResult, superseded: Superseded | None = None
) -> None:
    """Make ``result`` (as `report_view`) the last one of its task in ``latest`` (the one
    it replaces counted in ``superseded``)."""
    earlier = latest.pop(result.id, None)
    if earlier is not None and superseded is not None:
        superseded.add(earlier)
    latest[result.id] = report_view(result)


def report_view(result: BatchResult) -> BatchResult:
    """``result`` with only the fields the report shows (its texts and output dropped)."""
    return BatchResult(
        id=result.id,
        ok=result.ok,
        session_id=result.session_id,
        num_turns=result.num_turns,
        tool_calls=result.tool_calls,
        cost_usd=result.cost_usd,
        cost_known=result.cost_known,
        usage={k: result.usage[k] for k in _TOKEN_KEYS if k in result.usage},
        duration_s=result.duration_s,
        blocked_s=result.blocked_s,
        attempts=result.attempts,
        error_kind=result.error_kind,
    )


_TOKEN_KEYS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
               "output_tokens")  # fmt: skip


def report_command(args: argparse.Namespace, out: IO[str], err: IO[str] | None = None) -> int:
    """Run ``ccwire batch report``; returns the exit code.

    Args:
        args: The parsed arguments.
        out: Standard output: the JSON summary with ``--json``, else what was written.
        err: Where notes go when ``out`` holds the JSON (default: nowhere).

    Raises:
        UsageError: Neither ``--html`` nor ``--json``; the results file does not exist,
            or is a directory.
        OSError: The report cannot be written.
    """
    if not args.html and not args.json:
        raise UsageError("batch report: give --html OUT.html, --json, or both")
    if not Path(args.results).exists():  # a mistyped name is not an empty batch
        raise UsageError(f"batch report: the results file {args.results!r} does not exist")
    if Path(args.results).is_dir():  # nor is a folder
        raise UsageError(f"batch report: {args.results!r} is a directory, not a results file")
    if args.html:
        refuse_overwriting(args.html, results_file=args.results)
    superseded = Superseded()
    results, skipped = read_latest(args.results, superseded)
    notes = err if args.json else out
    if args.html:
        pages = write_report(results, Path(args.html), source=str(args.results),
                             transcripts=not args.no_transcripts, skipped=skipped,
                             superseded=superseded)  # fmt: skip
        if notes is not None:
            notes.write(f"wrote {args.html} ({len(results)} tasks, {pages} transcript pages)\n")
    if skipped and notes is not None:
        notes.write(f"ccwire: {_skipped_text(skipped)} in {args.results}\n")
    if args.json:
        summary = summarize(
            results, source=str(args.results), skipped=skipped, superseded=superseded
        )
        # strict JSON: a NaN or an infinity is a ValueError here, never printed
        text = json.dumps(summary, ensure_ascii=False, indent=2, allow_nan=False)
        out.write(_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "\n")
    return 0


# text UTF-8 cannot carry (a task id from a "\ud800" escape); only inside JSON strings
_SURROGATE = re.compile("[\ud800-\udfff]")


def _skipped_text(skipped: int) -> str:
    return f"{skipped} unreadable line{'s' if skipped != 1 else ''} skipped"


# ----------------------------------------------------------------------- summary

SUMMARY_VERSION = 1
"""The ``version`` of `summarize`'s object: it grows by new keys only, and a change
to the meaning of a key raises it."""

SUMMARY_KEYS = (
    "version", "source", "tasks", "ok", "failed", "skipped_lines", "by_kind", "cost_usd",
    "cost_unknown_tasks", "input_tokens", "output_tokens", "tool_calls", "duration_s",
    "percentiles", "slowest", "costliest", "overflowed", "blocked_tasks", "blocked",
    "attempts", "retries", "retried_tasks", "superseded_results", "spent_usd",
)  # fmt: skip
"""The keys of `summarize`'s object, in order."""

_QUANTILES = (("p50", 0.5), ("p90", 0.9), ("p95", 0.95), ("p99", 0.99))


def percentiles(values: Sequence[float]) -> dict[str, float] | None:
    """``min``, ``p50``, ``p90``, ``p95``, ``p99`` and ``max`` of ``values`` (linear
    between the two nearest values); None for no values, the value itself for one."""
    if not values:
        return None
    ordered = sorted(values)
    out = {"min": ordered[0]}
    for name, q in _QUANTILES:
        at = q * (len(ordered) - 1)
        low = math.floor(at)
        high = min(low + 1, len(ordered) - 1)
        out[name] = ordered[low] + (ordered[high] - ordered[low]) * (at - low)
    out["max"] = ordered[-1]
    return out


def summarize(
    results: Sequence[BatchResult],
    *,
    source: str,
    skipped: int = 0,
    superseded: Superseded | None = None,
) -> dict[str, Any]:
    """The report's numbers as one JSON-ready object (``ccwire batch report --json``).

    Keys (`SUMMARY_KEYS`): ``version`` (`SUMMARY_VERSION`), ``source`` (the results
    file), ``tasks``, ``ok``, ``failed``, ``skipped_lines`` (lines with no readable
    result), ``by_kind`` (``ok`` and each kind of failure: count), the totals
    ``cost_usd`` (of the tasks whose cost is known), ``cost_unknown_tasks`` (tasks that
    crashed, were lost or timed out mid-turn: `BatchResult.cost_known`), ``input_tokens``,
    ``output_tokens``, ``tool_calls``, ``duration_s``;
    ``percentiles``: for ``duration_s``, ``cost_usd``, ``tokens`` and ``tool_calls``
    over the tasks, `percentiles` (``null`` with no task); ``slowest`` and
    ``costliest``: up to `TOP` tasks each (``id``, ``ok``, ``error_kind``,
    ``duration_s``, ``cost_usd``, ``session_id``); ``overflowed``: the totals
    (``cost_usd``, ``duration_s``) too large for a float (each task's value is finite,
    but a sum can pass 1.8e308): those totals are ``null``, the list says why (empty
    normally); ``blocked_tasks``: how many tasks blocked the event loop they ran on
    (synchronous code in a task function: `BatchResult.blocked_s`), and ``blocked``:
    up to `TOP` of them, the longest first (``id``, ``ok``, ``error_kind``,
    ``blocked_s``); ``attempts``: the attempts the tasks' results ran (`BatchResult.attempts`),
    ``retries``: those past each task's first, ``retried_tasks``: the tasks that had
    more than one; ``superseded_results``: the results a later result of their task
    replaced (``--rerun-failed``), and ``spent_usd``: what every result of the file cost,
    those included (what a ``--max-cost-usd`` budget counts; ``cost_usd`` is of the last
    results only), ``null`` when too large for a float. Every number is finite: the
    object is strict JSON.

    Args:
        results: One result per task.
        source: The results file.
        skipped: Lines of the file that held no readable result.
        superseded: The results later ones replaced (none by default).

    Returns:
        The summary.
    """
    counts = Counter("ok" if r.ok else (r.error_kind or "unknown") for r in results)
    totals = _totals(results, superseded)

    def row(r: BatchResult) -> dict[str, Any]:
        return {"id": r.id, "ok": r.ok, "error_kind": r.error_kind, "duration_s": r.duration_s,
                "cost_usd": r.cost_usd, "session_id": r.session_id}  # fmt: skip

    return {
        "version": SUMMARY_VERSION,
        "source": source,
        "tasks": totals["tasks"],
        "ok": totals["ok"],
        "failed": totals["failed"],
        "skipped_lines": skipped,
        "by_kind": dict(sorted(counts.items(), key=lambda kv: (kv[0] != "ok", -kv[1], kv[0]))),
        "cost_usd": _rounded(totals["cost_usd"], 10),
        "cost_unknown_tasks": totals["cost_unknown_tasks"],
        "input_tokens": totals["input_tokens"],
        "output_tokens": totals["output_tokens"],
        "tool_calls": totals["tool_calls"],
        "duration_s": _rounded(totals["duration_s"], 6),
        "percentiles": {
            "duration_s": percentiles([r.duration_s for r in results]),
            "cost_usd": percentiles([r.cost_usd for r in results]),
            "tokens": percentiles([float(r.input_tokens + r.output_tokens) for r in results]),
            "tool_calls": percentiles([float(r.tool_calls) for r in results]),
        },
        "slowest": [row(r) for r in _slowest(results)],
        "costliest": [row(r) for r in _costliest(results)],
        "overflowed": [key for key in _FLOAT_TOTALS if totals[key] is None]
        + (["spent_usd"] if totals["superseded_results"] and totals["spent_usd"] is None else []),
        "blocked_tasks": sum(1 for r in results if r.blocked_s > 0),
        "blocked": [_blocked_row(r) for r in _blocking(results)],
        "attempts": totals["attempts"],
        "retries": totals["retries"],
        "retried_tasks": totals["retried_tasks"],
        "superseded_results": totals["superseded_results"],
        "spent_usd": _rounded(totals["spent_usd"], 10),
    }


def _rounded(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


_FLOAT_TOTALS = ("cost_usd", "duration_s")  # the sums that can overflow a float


def _finite_sum(values: Iterable[float]) -> float | None:
    """The sum of `values` (each finite), or `None` when it is too large for a float."""
    total = sum(values)
    return total if math.isfinite(total) else None


def _totals(results: Sequence[BatchResult], superseded: Superseded | None) -> dict[str, Any]:
    """The totals over the tasks, for the page's cards and `summarize`; a float total
    that overflows (`_FLOAT_TOTALS`) is `None`."""
    ok = sum(1 for r in results if r.ok)
    cost = _finite_sum(r.cost_usd for r in results)
    earlier = superseded or Superseded()
    spent = None if cost is None else _finite_sum((cost, earlier.cost_usd))
    return {
        "tasks": len(results),
        "ok": ok,
        "failed": len(results) - ok,
        "cost_usd": cost,
        "cost_unknown_tasks": sum(1 for r in results if not r.cost_known),
        "input_tokens": sum(r.input_tokens for r in results),
        "output_tokens": sum(r.output_tokens for r in results),
        "tool_calls": sum(r.tool_calls for r in results),
        "duration_s": _finite_sum(r.duration_s for r in results),
        "attempts": sum(r.attempts for r in results),
        "retries": sum(max(0, r.attempts - 1) for r in results),
        "retried_tasks": sum(1 for r in results if r.attempts > 1),
        "superseded_results": earlier.results,
        "spent_usd": spent,
    }


def write_report(
    results: Sequence[BatchResult],
    target: Path,
    *,
    source: str,
    transcripts: bool = True,
    refresh: int | None = None,
    skipped: int = 0,
    superseded: Superseded | None = None,
    unfinished: tuple[int, str] | None = None,
) -> int:
    """Write the report (and the transcript pages it links to) next to each other.

    Args:
        results: One result per task.
        target: The HTML file to write.
        source: The results file, named on the page.
        transcripts: Write the linked sessions' pages (``<target stem>_sessions/``).
        refresh: Reload the page every this many seconds (a batch still running).
        skipped: Lines of the results file that held no readable result.
        superseded: The results later ones replaced.
        unfinished: The tasks the batch left without a result, and why (`render_report`).

    Returns:
        How many transcript pages were written.
    """
    links: dict[str, str] = {}
    if transcripts:
        folder = target.with_name(f"{target.stem}_sessions")
        for result in [*_slowest(results), *_costliest(results)]:
            sid = result.session_id
            if sid is None or sid in links:
                continue
            view = load_session_view(sid)
            if view is None:
                continue
            folder.mkdir(parents=True, exist_ok=True)
            _write_page(folder / f"{sid}.html", page_bytes(render_html(view)))
            links[sid] = f"{folder.name}/{sid}.html"
    page = render_report(results, source=source, links=links, refresh=refresh, skipped=skipped,
                         superseded=superseded, unfinished=unfinished)  # fmt: skip
    _write_page(target, page_bytes(page))
    return len(links)


def refuse_overwriting(page: str, **files: str) -> None:
    """Refuse a report page path that names one of `files` (the results file, the task
    file; the same file by another path or link too): the page replaced it.

    Args:
        page: The report page to write.
        **files: What each file is (``results_file="out.jsonl"``).

    Raises:
        UsageError: `page` names one of them.
    """
    for what, path in files.items():
        same = os.path.realpath(page) == os.path.realpath(path)
        with contextlib.suppress(OSError):  # (a missing one: only the paths can tell)
            same = same or os.path.samefile(page, path)
        if same:
            raise UsageError(
                f"the report page {page!r} is the {what.replace('_', ' ')}: writing the "
                "page would replace it; give the report another file (OUT.html)"
            )


def _write_page(target: Path, data: bytes) -> None:
    """Write ``data`` to ``target`` whole: through a file of its own, flushed to disk and
    renamed over it (a live view, or a writer killed midway, never leaves a half-written
    page), next to the file a link names (the link stays). The file is new and of a
    unique name: a fixed one (``report.html.tmp``) was written through when a file of
    that name already stood there (a link to another file: that file was overwritten,
    and the link put in the page's place), and two writers of one page (a running
    batch's ``--report`` and a ``batch report``) wrote into each other's file. A target
    that is no regular file (a FIFO, a terminal, ``/dev/stdout``) is written in place: a
    rename would replace the device or pipe with a file."""
    real = Path(os.path.realpath(target))
    if real.exists() and not real.is_file() and not real.is_dir():
        with real.open("wb") as handle:
            handle.write(data)
        return
    tmp = real.with_name(f".{real.name}.{os.getpid()}.{secrets.token_hex(6)}.tmp")
    # O_EXCL: a new file, never one already there (nor a link's); its mode as umask says
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    try:
        with os.fdopen(os.open(tmp, flags, 0o666), "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        tmp.replace(real)
    except BaseException:
        tmp.unlink(missing_ok=True)  # no stray file (a target that is a folder; a kill)
        raise


def _slowest(results: Sequence[BatchResult]) -> list[BatchResult]:
    return sorted(results, key=lambda r: -r.duration_s)[:TOP]


def _blocking(results: Sequence[BatchResult]) -> list[BatchResult]:
    """The tasks that blocked the event loop the longest (`BatchResult.blocked_s`)."""
    return [r for r in sorted(results, key=lambda r: -r.blocked_s)[:TOP] if r.blocked_s > 0]


def _blocked_row(r: BatchResult) -> dict[str, Any]:
    return {"id": r.id, "ok": r.ok, "error_kind": r.error_kind, "blocked_s": r.blocked_s}


def _blocked_warning(results: Sequence[BatchResult]) -> str:
    """A paragraph naming the tasks that blocked the event loop, if any."""
    count = sum(1 for r in results if r.blocked_s > 0)
    if not count:
        return ""
    worst = ", ".join(f"{escape(r.id)} ({r.blocked_s:.1f} s)" for r in _blocking(results))
    were = "s" if count != 1 else ""
    return (
        f'<p class="bad" id="blocked" data-count="{count}">{count} task{were} blocked the '
        f"event loop with synchronous code (no other session ran meanwhile, and a time "
        f"limit held only once it yielded): {worst}</p>"
    )


def _costliest(results: Sequence[BatchResult]) -> list[BatchResult]:
    return [r for r in sorted(results, key=lambda r: -r.cost_usd)[:TOP] if r.cost_usd > 0]


# ------------------------------------------------------------------------ charts


@dataclass(frozen=True)
class _Series:
    """One chart's values: a name per bar, and one or more stacked parts."""

    name: str
    unit: str
    parts: tuple[str, ...]
    values: Callable[[BatchResult], tuple[float, ...]]
    fmt: Callable[[float], str]


def _bars(results: Sequence[BatchResult], series: _Series) -> str:
    """One bar per task (stacked parts), labelled by task id."""
    totals = [sum(series.values(r)) for r in results]
    top = max(totals, default=0.0) or 1.0
    height = _ROW * len(results) + 30
    label_w = _WIDTH - _BAR_AREA - 90
    rows = []
    for i, result in enumerate(results):
        y = 10 + i * _ROW
        x = float(label_w)
        parts = series.values(result)
        total = sum(parts)
        rects = []
        for part, value in zip(series.parts, parts, strict=True):
            w = _BAR_AREA * (value / top)  # (value first: 1e308 times the area overflows)
            colour = _PALETTE.get(part, "#4c78a8")
            tip = f"{result.id}: {series.fmt(value)}" + (f" {part}" if len(parts) > 1 else "")
            rects.append(
                f'<rect class="bar" data-id="{escape(result.id)}" data-part="{part}" '
                f'data-value="{value!r}" x="{x:.1f}" y="{y}" width="{w:.2f}" '
                f'height="{_ROW - 4}" fill="{colour}"><title>{escape(tip)}</title></rect>'
            )
            x += w
        ok = "" if result.ok else ' class="failed"'
        rows.append(
            f'<g class="row" data-id="{escape(result.id)}" data-total="{total!r}">'
            f'<text{ok} x="{label_w - 6}" y="{y + _ROW - 7}" text-anchor="end">'
            f"{escape(_short(result.id))}</text>{''.join(rects)}"
            f'<text class="value" x="{x + 4:.1f}" y="{y + _ROW - 7}">{series.fmt(total)}</text>'
            "</g>"
        )
    return _svg(series, height, "".join(rows))


def _histogram(results: Sequence[BatchResult], series: _Series) -> str:
    """Tasks counted by value, in equal bins (for batches too big for a bar each)."""
    totals = [sum(series.values(r)) for r in results]
    low, high = min(totals, default=0.0), max(totals, default=0.0)
    step = (high - low) / _BINS or 1.0
    counts = [0] * _BINS
    for value in totals:
        counts[min(_BINS - 1, int((value - low) / step))] += 1
    top = max(counts, default=0) or 1
    height = 200
    col = (_WIDTH - 60) / _BINS
    cols = []
    for i, count in enumerate(counts):
        h = (height - 50) * count / top
        lo, hi = low + i * step, low + (i + 1) * step
        tip = f"{count} tasks from {series.fmt(lo)} to {series.fmt(hi)}"
        cols.append(
            f'<rect class="bin" data-count="{count}" data-low="{lo!r}" data-high="{hi!r}" '
            f'x="{40 + i * col:.1f}" y="{height - 30 - h:.1f}" width="{col - 2:.1f}" '
            f'height="{h:.1f}" fill="#4c78a8"><title>{escape(tip)}</title></rect>'
        )
    axis = (
        f'<text x="40" y="{height - 12}">{series.fmt(low)}</text>'
        f'<text x="{_WIDTH - 20}" y="{height - 12}" text-anchor="end">{series.fmt(high)}</text>'
    )
    return _svg(series, height, "".join(cols) + axis)


def _svg(series: _Series, height: int, body: str) -> str:
    slug = series.name.lower().replace(" ", "-")
    legend = ""
    if len(series.parts) > 1:
        legend = "".join(
            f'<span class="key"><i style="background:{_PALETTE.get(p, "#4c78a8")}"></i>'
            f"{escape(p)}</span>"
            for p in series.parts
        )
    return (
        f'<figure class="chart" id="chart-{slug}"><figcaption>{escape(series.name)} '
        f'<span class="unit">({escape(series.unit)})</span>{legend}</figcaption>'
        f'<svg role="img" aria-label="{escape(series.name)}" width="{_WIDTH}" height="{height}" '
        f'viewBox="0 0 {_WIDTH} {height}">{body}</svg></figure>'
    )


def _kinds(results: Sequence[BatchResult]) -> str:
    """Results by kind: ``ok`` and each kind of failure."""
    counts = Counter("ok" if r.ok else (r.error_kind or "unknown") for r in results)
    ordered = sorted(counts.items(), key=lambda kv: (kv[0] != "ok", -kv[1], kv[0]))
    top = max(counts.values(), default=0) or 1
    rows = []
    for i, (kind, count) in enumerate(ordered):
        y = 10 + i * 24
        w = 500 * count / top
        rows.append(
            f'<g class="kind" data-kind="{escape(kind)}" data-count="{count}">'
            f'<text x="150" y="{y + 15}" text-anchor="end">{escape(kind)}</text>'
            f'<rect class="bar" x="160" y="{y}" width="{w:.1f}" height="20" '
            f'fill="{_KIND_COLOURS.get(kind, "#888")}"><title>{count} {escape(kind)}</title></rect>'
            f'<text class="value" x="{164 + w:.1f}" y="{y + 15}">{count}</text></g>'
        )
    height = 24 * len(ordered) + 20
    return (
        '<figure class="chart" id="chart-kinds"><figcaption>Results by kind</figcaption>'
        f'<svg role="img" aria-label="Results by kind" width="{_WIDTH}" height="{height}">'
        f"{''.join(rows)}</svg></figure>"
    )


_SERIES = (
    _Series("Duration", "seconds, all attempts", ("duration",),
            lambda r: (r.duration_s,), lambda v: f"{v:.2f} s"),
    _Series("Cost", "US dollars", ("cost",), lambda r: (r.cost_usd,), lambda v: f"${v:.4f}"),
    _Series("Tokens", "input and output, last attempt", ("input", "output"),
            lambda r: (float(r.input_tokens), float(r.output_tokens)), lambda v: f"{v:,.0f}"),
    _Series("Tool calls", "last attempt", ("tool_calls",),
            lambda r: (float(r.tool_calls),), lambda v: f"{v:,.0f}"),
)  # fmt: skip


# ------------------------------------------------------------------------- page

_CSS = """
:root { --bg:#fbfbfa; --fg:#1f2328; --muted:#6a737d; --card:#fff; --line:#e3e6ea;
  --ok:#1a7f37; --err:#cf222e; }
@media (prefers-color-scheme: dark) { :root { --bg:#16181c; --fg:#e6e6e6; --muted:#9aa4ad;
  --card:#1e2126; --line:#30353c; } }
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--fg);
  font:15px/1.5 -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; }
main { max-width: 960px; margin: 0 auto; padding: 24px 20px 64px; }
h1 { font-size: 1.35rem; margin: 0 0 4px; } h2 { font-size: 1.1rem; margin: 28px 0 8px; }
.meta { color: var(--muted); font-size: .9rem; }
.totals { display: grid; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr));
  gap: 10px; margin: 16px 0; }
.total { background: var(--card); border: 1px solid var(--line); border-radius: 10px;
  padding: 10px 14px; } .total b { display: block; font-size: 1.3rem; }
.total span { color: var(--muted); font-size: .85rem; }
figure.chart { background: var(--card); border: 1px solid var(--line); border-radius: 10px;
  margin: 14px 0; padding: 12px 10px; overflow-x: auto; }
figcaption { font-weight: 600; margin: 0 0 6px 6px; } .unit { color: var(--muted);
  font-weight: 400; }
.key { font-weight: 400; font-size: .85rem; margin-left: 12px; color: var(--muted); }
.key i { display: inline-block; width: 10px; height: 10px; margin-right: 4px;
  border-radius: 2px; }
svg text { font-size: 11px; fill: var(--fg); } svg text.failed { fill: var(--err); }
svg text.value { fill: var(--muted); }
table { border-collapse: collapse; width: 100%; background: var(--card); font-size: .9rem; }
th, td { border-bottom: 1px solid var(--line); padding: 6px 8px; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.bad { color: var(--err); } .good { color: var(--ok); }
code { font-size: .85em; }
footer { color: var(--muted); font-size: .8rem; margin-top: 30px; }
"""


def _short(text: str, n: int = 22) -> str:
    return text if len(text) <= n else text[: n - 1] + "\u2026"


def _table(title: str, rows: Sequence[BatchResult], links: dict[str, str], css: str) -> str:
    body = []
    for r in rows:
        sid = r.session_id
        if sid is not None and sid in links:
            session = f'<a class="transcript" href="{escape(links[sid])}">{escape(sid[:8])}</a>'
        elif sid is not None:
            session = (
                f'<code title="ccwire show {escape(sid)} --html FILE">{escape(sid[:8])}</code>'
            )
        else:
            session = "\u2014"
        status = '<span class="good">ok</span>' if r.ok else (
            f'<span class="bad">{escape(r.error_kind or "failed")}</span>')  # fmt: skip
        body.append(
            f'<tr data-id="{escape(r.id)}"><td>{escape(r.id)}</td><td>{status}</td>'
            f'<td class="num">{r.duration_s:.2f} s</td><td class="num">{_cost(r)}</td>'
            f'<td class="num">{r.input_tokens + r.output_tokens:,}</td>'
            f'<td class="num">{r.tool_calls}</td><td>{session}</td></tr>'
        )
    return (
        f'<h2>{escape(title)}</h2><table class="{css}"><thead><tr><th>Task</th><th>Result</th>'
        "<th>Duration</th><th>Cost</th><th>Tokens</th><th>Tool calls</th><th>Transcript</th>"
        f"</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


def _cost(result: BatchResult) -> str:
    """A task's cost; ``unknown`` when an attempt ended without saying what it spent."""
    if result.cost_known:
        return f"${result.cost_usd:.4f}"
    if result.cost_usd:
        return f"${result.cost_usd:.4f} + unknown"
    return "unknown"


_TOO_LARGE = "too large to add up"  # a total that overflows a float (`_totals`)


def render_report(
    results: Sequence[BatchResult],
    *,
    source: str,
    links: dict[str, str] | None = None,
    refresh: int | None = None,
    skipped: int = 0,
    superseded: Superseded | None = None,
    unfinished: tuple[int, str] | None = None,
) -> str:
    """The report's HTML (inline CSS and SVG, no script).

    Args:
        results: One result per task.
        source: The results file, named on the page.
        links: Transcript page paths by session id.
        refresh: Reload the page every this many seconds.
        skipped: Lines of the results file that held no readable result.
        superseded: The results later ones replaced: what they cost is named by the
            total cost.
        unfinished: How many tasks of the batch have no result, and why (``the batch
            was terminated (SIGTERM)``): said at the top of the page, which otherwise
            shows a batch cut short as one that ran every task.

    Returns:
        The page's source.
    """
    links = links or {}
    t = _totals(results, superseded)
    cost = t["cost_usd"]
    cost = _TOO_LARGE if cost is None else cost_text(cost, t["cost_unknown_tasks"])
    spent = _TOO_LARGE if t["spent_usd"] is None else f"${t['spent_usd']:.4f}"
    earlier = t["superseded_results"]
    duration = _TOO_LARGE if t["duration_s"] is None else f"{t['duration_s']:,.1f} s"
    totals = [
        ("tasks", f"{t['tasks']:,}", "total"),
        ("succeeded", f"{t['ok']:,}", "ok"),
        ("failed", f"{t['failed']:,}", "failed"),
        ("cost", cost, "cost"),
        *(
            [
                (
                    f"spent, with the {earlier} earlier result{'s' if earlier != 1 else ''} of "
                    "re-run tasks",
                    spent,
                    "spent",
                )
            ]
            if earlier
            else []
        ),
        ("tokens", f"{t['input_tokens'] + t['output_tokens']:,}", "tokens"),
        ("tool calls", f"{t['tool_calls']:,}", "tool-calls"),
        ("retries", f"{t['retries']:,}", "retries"),
        ("task time", duration, "duration"),
    ]
    cards = "".join(
        f'<div class="total" id="total-{key}"><b>{value}</b><span>{label}</span></div>'
        for label, value, key in totals
    )
    draw = _bars if len(results) <= MAX_BARS else _histogram
    charts = "".join(draw(results, s) for s in _SERIES) if results else "<p>No results yet.</p>"
    reload = f'<meta http-equiv="refresh" content="{refresh}">' if refresh else ""
    title = f"Batch report: {Path(source).name}"
    running = " \u00b7 the batch is running; this page reloads" if refresh else ""
    warning = (
        f'<p class="bad" id="skipped" data-count="{skipped}">{_skipped_text(skipped)}: they '
        "hold no readable result and are not counted here</p>"
        if skipped
        else ""
    )
    if unfinished is not None and unfinished[0] > 0:
        count, why = unfinished
        warning += (
            f'<p class="bad" id="unfinished" data-count="{count}">{count:,} task'
            f"{'s' if count != 1 else ''} of the batch {'have' if count != 1 else 'has'} no "
            f"result: {escape(why)}; they are not counted here (running the batch again "
            "runs them)</p>"
        )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; img-src data:\">"
        f"{reload}<title>{escape(title)}</title><style>{_CSS}</style></head>"
        f"<body><main><h1>{escape(title)}</h1>"
        f'<div class="meta">{escape(source)} \u00b7 written '
        f"{escape(time.strftime('%Y-%m-%d %H:%M:%S'))}"
        f"{running}</div>{warning}{_blocked_warning(results)}"
        f'<div class="totals">{cards}</div>'
        f"{_kinds(results) if results else ''}{charts}"
        f"{_table('Slowest tasks', _slowest(results), links, 'slowest')}"
        f"{_table('Most expensive tasks', _costliest(results), links, 'costliest')}"
        "<footer>Written by <code>ccwire batch report</code> from the batch's results "
        "file.</footer></main></body></html>\n"
    )
