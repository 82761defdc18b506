"""`ccwire batch report RESULTS.jsonl --html OUT.html` in a real headless Chromium: the page
renders offline, its charts carry the numbers of the results file (bar lengths
included), and the slowest and most expensive tasks link to their transcript pages."""

from __future__ import annotations

import io
import json
import os
import re
import stat
import threading
import tracemalloc
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from ccwire._app.batch_report import (
    MAX_BARS,
    SUMMARY_KEYS,
    SUMMARY_VERSION,
    render_report,
    summarize,
    write_report,
)
from ccwire._app.main import CliIO, main
from ccwire.batch import BatchResult

from .conftest import Captured
from .test_show_html import _shot, browser_page  # noqa: F401 (a fixture)


def results_file(path: Path, captured: Captured) -> list[BatchResult]:
    """A results file with successes, failures of three kinds, and a task that failed
    once and then succeeded (the later line counts). Returns the results that count."""
    rows: list[BatchResult] = []
    for i in range(9):
        rows.append(BatchResult(
            id=f"task-{i}", ok=True, result=f"answer {i}", duration_s=1.0 + i * 0.5,
            cost_usd=0.001 * (i + 1), tool_calls=i % 4, num_turns=1 + i % 4,
            usage={"input_tokens": 100 * (i + 1), "cache_read_input_tokens": 10,
                   "output_tokens": 20 * (i + 1)},
        ))  # fmt: skip
    rows.append(BatchResult(id="slow", ok=True, duration_s=42.5, cost_usd=0.002, tool_calls=3,
                            session_id=captured.multi_turn,
                            usage={"input_tokens": 900, "output_tokens": 300}))  # fmt: skip
    rows.append(BatchResult(id="pricey", ok=True, duration_s=3.0, cost_usd=0.75, tool_calls=1,
                            session_id=captured.subagent,
                            usage={"input_tokens": 5000, "output_tokens": 800}))  # fmt: skip
    rows.append(BatchResult(id="rate", ok=False, is_error=True, error="API Error: 429",
                            error_kind="api", attempts=4, duration_s=9.0))  # fmt: skip
    rows.append(BatchResult(id="died", ok=False, is_error=True, error="the CLI died",
                            error_kind="crash", duration_s=0.5))  # fmt: skip
    rows.append(BatchResult(id="turns", ok=False, is_error=True, error="max turns",
                            error_kind="model", duration_s=2.0, cost_usd=0.004))  # fmt: skip
    retried = BatchResult(id="again", ok=False, error_kind="crash", duration_s=1.0)
    final = BatchResult(id="again", ok=True, duration_s=1.5, cost_usd=0.003, tool_calls=2)
    lines = [*rows[:3], retried, *rows[3:], final]
    path.write_text("".join(json.dumps(r.to_json()) + "\n" for r in lines))
    return [*rows, final]


def test_the_report_renders_the_results_in_chromium(
    captured: Captured,
    tmp_path: Path,
    browser_page: Any,  # noqa: F811
) -> None:
    results = tmp_path / "results.jsonl"
    expected = {r.id: r for r in results_file(results, captured)}
    out = tmp_path / "report.html"
    cli_io = CliIO(io.StringIO(), io.StringIO(), io.StringIO(), environ={})
    code = main(["batch", "report", str(results), "--html", str(out)], io=cli_io)
    assert isinstance(cli_io.stdout, io.StringIO) and isinstance(cli_io.stderr, io.StringIO)
    assert code == 0, cli_io.stderr.getvalue()
    assert cli_io.stdout.getvalue() == f"wrote {out} (15 tasks, 2 transcript pages)\n"
    html = out.read_text()
    assert "http://" not in html and "https://" not in html and "<script" not in html

    requests: list[str] = []
    page = browser_page
    page.on("request", lambda r: requests.append(r.url))
    page.goto(out.as_uri())
    assert page.title() == "Batch report: results.jsonl"
    card = page.locator("#total-total b")
    assert card.inner_text() == "15"
    assert page.locator("#total-failed b").inner_text() == "3"
    total_cost = sum(r.cost_usd for r in expected.values())
    assert page.locator("#total-cost b").inner_text() == f"${total_cost:.4f}"

    # every per-task chart: one bar per task with its value, lengths in proportion
    for chart, value in (
        ("duration", lambda r: r.duration_s),
        ("cost", lambda r: r.cost_usd),
        ("tool-calls", lambda r: float(r.tool_calls)),
    ):
        bars = page.locator(f"#chart-{chart} rect.bar")
        assert bars.count() == len(expected)
        seen = {}
        for i in range(bars.count()):
            bar = bars.nth(i)
            task = expected[bar.get_attribute("data-id")]
            assert float(bar.get_attribute("data-value")) == pytest.approx(value(task))
            box = bar.bounding_box()
            assert box is not None
            seen[task.id] = box["width"]
        top = max(expected.values(), key=value)
        for task_id, width in seen.items():
            assert width == pytest.approx(
                seen[top.id] * value(expected[task_id]) / value(top), abs=0.6
            ), (chart, task_id)
        assert page.locator(f"#chart-{chart} svg").is_visible()
    tokens = page.locator("#chart-tokens g.row")
    assert tokens.count() == len(expected)
    pricey = page.locator('#chart-tokens g.row[data-id="pricey"]')
    parts = {
        pricey.locator("rect").nth(i).get_attribute("data-part"): float(
            pricey.locator("rect").nth(i).get_attribute("data-value")
        )
        for i in range(2)
    }
    assert parts == {"input": 5000.0, "output": 800.0}

    kinds = {
        g.get_attribute("data-kind"): int(g.get_attribute("data-count"))
        for g in page.locator("#chart-kinds g.kind").all()
    }
    assert kinds == {"ok": 12, "api": 1, "crash": 1, "model": 1}
    hover = page.locator('#chart-duration rect.bar[data-id="slow"] title')
    assert hover.text_content() == "slow: 42.50 s"
    _shot(page, tmp_path, "batch-report.png")

    slowest = page.locator("table.slowest tbody tr")
    assert slowest.nth(0).get_attribute("data-id") == "slow"
    assert page.locator("table.costliest tbody tr").nth(0).get_attribute("data-id") == "pricey"
    assert all(url.startswith("file://") for url in requests)

    slowest.nth(0).locator("a.transcript").click()  # the session's own page
    page.wait_for_load_state()
    assert page.title() == "Where were we?"
    assert page.locator("details.tool").count() == 3


def test_a_results_file_that_does_not_exist_is_an_error(tmp_path: Path) -> None:
    cli_io = CliIO(stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO(), environ={})
    out = tmp_path / "report.html"
    missing = tmp_path / "typo.jsonl"
    code = main(["batch", "report", str(missing), "--html", str(out)], io=cli_io)
    assert code == 2
    stderr = cli_io.stderr.getvalue()  # type: ignore[attr-defined]
    assert stderr.startswith(f"ccwire: error: batch report: the results file '{missing}' does")
    assert not out.exists()  # no empty report that looks like a batch of nothing


def test_a_report_to_a_pipe_or_a_link_writes_through_it_and_never_replaces_it(
    tmp_path: Path,
) -> None:
    # a rename over the target replaced a device or a FIFO with a file (as root,
    # `--html /dev/full` put a file in place of the device), and a link with a file
    results = [BatchResult(id="t1", ok=True)]
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    read: list[bytes] = []
    reader = threading.Thread(target=lambda: read.append(fifo.read_bytes()), daemon=True)
    reader.start()
    write_report(results, fifo, source="r.jsonl")
    reader.join(timeout=10)
    assert stat.S_ISFIFO(fifo.lstat().st_mode)  # still the pipe
    assert read and read[0].startswith(b"<!DOCTYPE html>")
    assert not (tmp_path / "pipe.tmp").exists()

    real = tmp_path / "pages" / "report.html"
    real.parent.mkdir()
    real.write_text("old")
    link = tmp_path / "latest.html"
    link.symlink_to(real)
    write_report(results, link, source="r.jsonl")
    assert link.is_symlink()  # the link stays, its file is rewritten whole
    assert real.read_bytes().startswith(b"<!DOCTYPE html>")


def test_a_page_is_written_through_a_new_file_of_its_own_never_one_already_there(
    tmp_path: Path,
) -> None:
    # the page went through a fixed "report.html.tmp": a file of that name already
    # there (here a link to the user's notes) was written through, then renamed into
    # the page's place; two writers of one page shared it, and renamed each other's
    # half-written file into place
    notes = tmp_path / "notes.txt"
    notes.write_text("mine")
    (tmp_path / "report.html.tmp").symlink_to(notes)
    target = tmp_path / "report.html"
    write_report([BatchResult(id="t1", ok=True)], target, source="r.jsonl")
    assert notes.read_text() == "mine"
    assert not target.is_symlink() and target.read_bytes().startswith(b"<!DOCTYPE html>")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt", "report.html",
                                                          "report.html.tmp"]  # fmt: skip


def test_a_big_batch_is_drawn_as_histograms() -> None:
    results = [BatchResult(id=f"t{i}", ok=i % 7 != 0, duration_s=float(i % 50), cost_usd=0.01)
               for i in range(MAX_BARS * 3)]  # fmt: skip
    html = render_report(results, source="big.jsonl")
    assert 'class="bar"' not in html.split('id="chart-kinds"')[1].split("</figure>", 1)[1]
    counts = [int(c) for c in re.findall(r'class="bin" data-count="(\d+)"', html)]
    assert len(counts) == 4 * 20 and sum(counts) == 4 * len(results)


def run_report(*args: str) -> tuple[int, str, str]:
    cli_io = CliIO(stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO(), environ={})
    code = main(["batch", "report", *args], io=cli_io)
    return code, cli_io.stdout.getvalue(), cli_io.stderr.getvalue()  # type: ignore[attr-defined]


def test_an_odd_results_file_is_reported_with_its_unreadable_lines_counted_and_escaped(
    tmp_path: Path,
) -> None:
    evil = "<script>alert(1)</script>\u2603"
    rows = [
        BatchResult(id=evil, ok=False, error_kind="api", error="<img src=x onerror=alert(1)>",
                    duration_s=2.0, cost_usd=0.5).to_json(),
        {"id": "old", "ok": True},  # an older writer: no cost, usage, duration...
        {"id": "nulled", "ok": True, "cost_usd": None},  # a field of the wrong type
        {"id": "nan", "ok": True, "cost_usd": float("nan")},
    ]  # fmt: skip
    results = tmp_path / "results.jsonl"
    lines = [json.dumps(r) for r in rows] + ["not json", "[]", "{}", ""]
    results.write_text("\n".join(lines) + "\n")
    out = tmp_path / "report.html"

    code, stdout, stderr = run_report(str(results), "--html", str(out))
    assert code == 0 and stderr == ""
    assert stdout.splitlines() == [
        f"wrote {out} (2 tasks, 0 transcript pages)",
        f"ccwire: 5 unreadable lines skipped in {results}",
    ]
    html = out.read_text()
    assert "<script" not in html and "<img" not in html and "onerror=alert(1)>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;\u2603" in html
    assert 'id="skipped" data-count="5"' in html

    code, stdout, stderr = run_report(str(results), "--json")  # JSON alone on stdout
    assert code == 0 and stderr == f"ccwire: 5 unreadable lines skipped in {results}\n"
    summary = json.loads(stdout)
    assert tuple(summary) == SUMMARY_KEYS and summary["version"] == SUMMARY_VERSION
    assert (summary["tasks"], summary["ok"], summary["failed"]) == (2, 1, 1)
    assert summary["skipped_lines"] == 5 and summary["by_kind"] == {"ok": 1, "api": 1}
    assert summary["cost_usd"] == 0.5 and summary["slowest"][0]["id"] == evil
    assert summary["percentiles"]["duration_s"] == {
        "min": 0.0, "p50": 1.0, "p90": 1.8, "p95": 1.9, "p99": pytest.approx(1.98), "max": 2.0,
    }  # fmt: skip

    assert run_report(str(results))[0] == 2  # neither --html nor --json


@pytest.mark.parametrize(
    "line",
    [
        '{"id": "t", "ok": true, "duration_s": NaN}',
        '{"id": "t", "ok": true, "duration_s": -1.5}',
        '{"id": "t", "ok": true, "usage": {"input_tokens": Infinity}}',
        '{"id": "t", "ok": true, "usage": {"output_tokens": NaN}}',
        '{"id": "t", "ok": true, "usage": {"cache_read_input_tokens": -7}}',
        '{"id": "t", "ok": true, "tool_calls": -1}',
        '{"id": "t", "ok": true, "attempts": -2}',
    ],
)
def test_a_duration_token_count_or_count_that_is_not_a_finite_amount_is_an_unreadable_line(
    tmp_path: Path, line: str
) -> None:
    # Python's json reads NaN and Infinity: summed, they crashed the report (int(inf)) or
    # made --json print NaN, which no strict JSON parser reads, and the page say "nan s"
    results = tmp_path / "results.jsonl"
    results.write_text(line + "\n" + json.dumps({"id": "fine", "ok": True}) + "\n")
    code, stdout, stderr = run_report(str(results), "--json", "--html", str(tmp_path / "r.html"))
    assert code == 0 and stderr.endswith(f"ccwire: 1 unreadable line skipped in {results}\n")

    def strict(constant: str) -> None:
        raise ValueError(f"not JSON: {constant}")

    summary = json.loads(stdout, parse_constant=strict)
    assert (summary["tasks"], summary["skipped_lines"]) == (1, 1)
    assert "nan" not in (tmp_path / "r.html").read_text().lower()


@pytest.mark.parametrize("count", [0, 1])
def test_the_json_summary_of_an_empty_or_one_task_file(tmp_path: Path, count: int) -> None:
    results = tmp_path / "results.jsonl"
    only = BatchResult(id="only", ok=False, error_kind="crash", duration_s=3.5)
    results.write_text(json.dumps(only.to_json()) + "\n" if count else "")
    code, stdout, _ = run_report(str(results), "--json", "--html", str(tmp_path / "r.html"))
    assert code == 0
    summary = json.loads(stdout)
    assert summary["tasks"] == count and summary["skipped_lines"] == 0
    spread = summary["percentiles"]["duration_s"]
    if count == 0:
        assert spread is None and summary["slowest"] == [] and summary["by_kind"] == {}
    else:  # every percentile of one value is that value
        assert set(spread.values()) == {3.5} and summary["by_kind"] == {"crash": 1}
    assert summary["costliest"] == []


def test_the_cost_of_a_task_that_crashed_is_unknown_not_zero() -> None:
    results = [BatchResult(id="fine", ok=True, cost_usd=0.5),
               BatchResult(id="boom", ok=False, error_kind="crash", cost_known=False),
               BatchResult(id="lost", ok=False, error_kind="lost", cost_usd=0.25,
                           cost_known=False)]  # fmt: skip
    html = render_report(results, source="r.jsonl")
    total = html.split('id="total-cost"')[1].split("</b>")[0]
    assert "$0.7500 + unknown (2 tasks crashed, lost or timed out)" in total
    rows = {m[0]: m[1] for m in re.findall(r'<tr data-id="(\w+)">(.*?)</tr>', html)}
    assert '<td class="num">unknown</td>' in rows["boom"]
    assert '<td class="num">$0.2500 + unknown</td>' in rows["lost"]
    assert '<td class="num">$0.5000</td>' in rows["fine"]
    summary = summarize(results, source="r.jsonl")  # --json says so too
    assert (summary["cost_usd"], summary["cost_unknown_tasks"]) == (0.75, 2)


def test_the_retries_the_results_file_records_are_counted(tmp_path: Path) -> None:
    # the attempts of each task were in the results file, in no total of the report
    results = tmp_path / "results.jsonl"
    rows = [BatchResult(id="once", ok=True), BatchResult(id="thrice", ok=True, attempts=3),
            BatchResult(id="gave-up", ok=False, error_kind="api", attempts=4)]  # fmt: skip
    results.write_text("".join(json.dumps(r.to_json()) + "\n" for r in rows))
    code, stdout, _ = run_report(str(results), "--json", "--html", str(tmp_path / "r.html"))
    assert code == 0
    summary = json.loads(stdout)
    assert (summary["attempts"], summary["retries"], summary["retried_tasks"]) == (8, 5, 2)
    page = (tmp_path / "r.html").read_text()
    assert '<div class="total" id="total-retries"><b>5</b>' in page
    empty = summarize([], source="r.jsonl")
    assert (empty["attempts"], empty["retries"], empty["retried_tasks"]) == (0, 0, 0)


def test_what_the_earlier_results_of_re_run_tasks_cost_is_counted_as_spent(
    tmp_path: Path,
) -> None:
    # --rerun-failed appends a task's new result: the report counts its last one (as a
    # resume does), and said nothing of what the earlier ones had cost, which the
    # budget of the batch counts: the report's cost was less than was spent
    results = tmp_path / "results.jsonl"
    rows = [BatchResult(id="a", ok=False, error_kind="api", cost_usd=0.25),
            BatchResult(id="b", ok=True, cost_usd=0.5),
            BatchResult(id="a", ok=False, error_kind="model", cost_usd=0.125),
            BatchResult(id="a", ok=True, cost_usd=1.0)]  # fmt: skip
    results.write_text("".join(json.dumps(r.to_json()) + "\n" for r in rows))
    code, stdout, _ = run_report(str(results), "--json", "--html", str(tmp_path / "r.html"))
    assert code == 0
    summary = json.loads(stdout)
    assert (summary["tasks"], summary["by_kind"], summary["cost_usd"]) == (2, {"ok": 2}, 1.5)
    assert (summary["superseded_results"], summary["spent_usd"]) == (2, 1.875)
    page = (tmp_path / "r.html").read_text()
    assert (
        '<div class="total" id="total-spent"><b>$1.8750</b><span>spent, with the 2 '
        "earlier results of re-run tasks</span>"
    ) in page
    once = summarize(rows[1:2], source="r.jsonl")  # nothing re-run: what was spent is the cost
    assert (once["superseded_results"], once["spent_usd"]) == (0, 0.5)
    assert 'id="total-spent"' not in render_report(rows[1:2], source="r.jsonl")


def test_a_last_line_still_being_written_is_not_an_unreadable_one(tmp_path: Path) -> None:
    # a report of a running batch read its results file as a line was being appended:
    # it said "1 unreadable line skipped", in red, of a result that was only half there
    results = tmp_path / "results.jsonl"
    whole = json.dumps(BatchResult(id="done", ok=True, cost_usd=0.5).to_json())
    results.write_text(whole + "\n" + whole.replace("done", "next")[:25])
    code, stdout, stderr = run_report(str(results), "--json")
    assert code == 0 and stderr == ""
    assert (json.loads(stdout)["tasks"], json.loads(stdout)["skipped_lines"]) == (1, 0)
    results.write_text(whole + "\nnot json")  # no newline, but no result either
    assert json.loads(run_report(str(results), "--json")[1])["skipped_lines"] == 1


def test_a_task_id_utf8_cannot_carry_is_escaped_not_a_crash(tmp_path: Path) -> None:
    # ccwire batch writes a task id with a lone surrogate (a "\ud800" escape in the task
    # file) escaped; the report failed on it: "UnicodeEncodeError ... looks like a bug"
    results = tmp_path / "results.jsonl"
    results.write_text('{"id": "a\\ud800b", "ok": true, "cost_usd": 0.5}\n')
    page = tmp_path / "r.html"
    code, stdout, stderr = run_report(str(results), "--json", "--html", str(page))
    assert code == 0 and "error" not in stderr
    stdout.encode("utf-8")  # a terminal or pipe takes it (it showed "a?b")
    assert json.loads(stdout)["slowest"][0]["id"] == "a\ud800b"  # the same id
    assert '<tr data-id="a\\ud800b">' in page.read_text()


def test_a_huge_results_file_is_read_one_line_at_a_time(tmp_path: Path) -> None:
    # the report held every result whole (answers, outputs): a results file of long
    # answers took its size in memory, and more; what it shows is a few numbers a task
    results = tmp_path / "results.jsonl"
    answer = "x" * 100_000
    with results.open("w") as handle:
        for i in range(60):
            row = BatchResult(id=f"t{i}", ok=True, result=answer, output={"echo": answer},
                              duration_s=1.0, cost_usd=0.01,
                              usage={"input_tokens": 10, "output_tokens": 5})  # fmt: skip
            handle.write(json.dumps(row.to_json()) + "\n")
    size = results.stat().st_size
    tracemalloc.start()
    try:
        code, stdout, _ = run_report(str(results), "--json")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert code == 0
    summary = json.loads(stdout)
    assert (summary["tasks"], summary["input_tokens"], summary["output_tokens"]) == (60, 600, 300)
    assert peak < size / 8, (peak, size)  # about two lines' worth, not the file's


class _Clock:
    """A monotonic clock that moves one second each time it is read."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


def _page_tasks(page: Path) -> int:
    return int(page.read_text().split('id="total-total"><b>')[1].split("<")[0])


def test_the_live_report_adds_each_result_without_reading_the_file_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # each rewrite read the whole results file again, in the batch's event loop (seconds
    # for a big batch, every five seconds): now the file is read once, at the start
    from ccwire._app import batch as batch_app
    from ccwire.batch import BatchEvent

    clock = _Clock()
    monkeypatch.setattr(batch_app, "time", SimpleNamespace(monotonic=clock))  # its clock only
    results, page = tmp_path / "results.jsonl", tmp_path / "live.html"
    earlier = BatchResult(id="earlier", ok=True, duration_s=1.0, cost_usd=0.5)
    results.write_text(json.dumps(earlier.to_json()) + "\n" + "not json\n")
    live = batch_app.LiveReport(str(page), str(results))
    live.start()  # the clock reads 1 then 2: next page from 2 + max(5, 20 * 1) = 22
    assert _page_tasks(page) == 1 and 'id="skipped" data-count="1"' in page.read_text()
    results.unlink()  # (the batch only appends to it: it is not read again)

    for i in range(19):  # at 3 ... 21: not yet due
        live.on_event(BatchEvent("finished", f"t{i}", result=BatchResult(id=f"t{i}", ok=True)))
        assert _page_tasks(page) == 1
    live.on_event(BatchEvent("finished", "t19", result=BatchResult(id="t19", ok=True)))  # 22
    assert _page_tasks(page) == 21 and 'http-equiv="refresh"' in page.read_text()
    live.on_event(BatchEvent("started", "t20"))  # not a result
    again = BatchResult(id="earlier", ok=False, error_kind="api")  # a task run again
    live.on_event(BatchEvent("finished", "earlier", result=again))
    live.finish()  # the last page: always written, no longer reloading
    text = page.read_text()
    assert _page_tasks(page) == 21 and 'http-equiv="refresh"' not in text
    assert 'id="total-failed"><b>1<' in text and 'id="skipped" data-count="1"' in text


def test_a_total_too_large_for_a_float_is_null_with_the_reason_never_infinity(
    tmp_path: Path,
) -> None:
    # each cost and duration is finite, but two of 1e308 add up to inf: --json printed
    # `Infinity`, which no strict JSON parser reads, and the page "$inf"
    rows = [BatchResult(id=f"t{i}", ok=True, cost_usd=1e308, duration_s=1e308)
            for i in range(2)]  # fmt: skip
    results = tmp_path / "results.jsonl"
    results.write_text("".join(json.dumps(r.to_json()) + "\n" for r in rows))
    code, stdout, _ = run_report(str(results), "--json", "--html", str(tmp_path / "r.html"))
    assert code == 0

    def strict(constant: str) -> None:
        raise ValueError(f"not JSON: {constant}")

    summary = json.loads(stdout, parse_constant=strict)
    assert list(summary) == list(SUMMARY_KEYS)
    assert (summary["cost_usd"], summary["duration_s"]) == (None, None)
    assert summary["overflowed"] == ["cost_usd", "duration_s"]
    assert summary["percentiles"]["cost_usd"]["max"] == 1e308  # each value is kept
    page = (tmp_path / "r.html").read_text()
    assert "inf" not in page.replace("info", "").lower()
    assert page.count("too large to add up") == 2
    fine = summarize(rows[:1], source="r.jsonl")
    assert (fine["cost_usd"], fine["overflowed"]) == (1e308, [])
