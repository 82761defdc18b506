"""``ccwire batch`` as a separate process with the fake CLI: a disk that fills up mid-batch,
Ctrl-C, then the same command again; and what the command says about a task file
with bad bytes, malformed lines or no task at all."""

from __future__ import annotations

import io
import json
import os
import resource
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from ccwire._app.main import CliIO, main
from ccwire._batch import session as batch_session

from .conftest import Holds, fake_cli_processes, fake_cli_wrapper

TASKS = 40


def write_tasks(path: Path, count: int = TASKS) -> Path:
    path.write_text("".join(json.dumps({"id": f"t{i:03d}", "prompt": f"echo {i}"}) + "\n"
                            for i in range(count)))  # fmt: skip
    return path


def ids_on_disk(path: Path) -> list[str]:
    raw = path.read_bytes()
    assert raw == b"" or raw.endswith(b"\n"), "a torn last line"
    return [json.loads(line)["id"] for line in raw.decode().splitlines()]


def command(holds: Holds, tmp_path: Path, tasks: Path, results: Path) -> list[str]:
    return [sys.executable, "-m", "ccwire", "batch", str(tasks), "-o", str(results), "-j", "4",
            "--offline", "--cli-path", fake_cli_wrapper(tmp_path, holds), "--json"]  # fmt: skip


def finished(stdout: str) -> list[str]:
    events = [json.loads(line) for line in stdout.splitlines()]
    return [e["id"] for e in events if e["event"] == "task_finished"]


def test_a_disk_that_fills_up_mid_batch_fails_the_command_and_keeps_every_result(
    tmp_path: Path, holds: Holds
) -> None:
    tasks = write_tasks(tmp_path / "tasks.jsonl")
    results = tmp_path / "results.jsonl"
    _, hard = resource.getrlimit(resource.RLIMIT_FSIZE)

    def small_disk() -> None:  # in the child: no file may grow past 4 kB (EFBIG)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, hard))

    first = subprocess.run(command(holds, tmp_path, tasks, results), capture_output=True, text=True,
                           timeout=120, preexec_fn=small_disk)  # fmt: skip
    assert first.returncode == 1, first.stderr
    errors = [x for x in first.stderr.splitlines() if x.startswith("ccwire: error: ")]
    assert len(errors) == 1, first.stderr
    assert f"cannot write the results file '{results}'" in errors[0]
    assert "File too large" in errors[0] and "Traceback" not in first.stderr
    on_disk = ids_on_disk(results)  # whole lines only: the failed write was undone
    assert 0 < len(on_disk) < TASKS
    assert set(finished(first.stdout)) <= set(on_disk)  # every reported result is on disk
    assert fake_cli_processes(holds) == []

    again = subprocess.run(command(holds, tmp_path, tasks, results), capture_output=True, text=True,
                           timeout=120)  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert sorted(finished(again.stdout)) == sorted(
        {f"t{i:03d}" for i in range(TASKS)} - set(on_disk)
    )
    assert sorted(ids_on_disk(results)) == [f"t{i:03d}" for i in range(TASKS)]


def test_a_report_page_that_cannot_be_written_mid_batch_fails_the_command_after_its_summary(
    tmp_path: Path, holds: Holds
) -> None:
    # the page is written through a link; once the batch runs, the link is made to name
    # /dev/full (a full disk): the batch goes on, and the command says the page is lost
    tasks = tmp_path / "tasks.jsonl"
    lines = [{"id": "e", "prompt": "echo e"}, {"id": "h", "prompt": "hold h"}]
    tasks.write_text("".join(json.dumps(x) + "\n" for x in lines))
    results, page, link = tmp_path / "results.jsonl", tmp_path / "page.html", tmp_path / "r.html"
    link.symlink_to(page)
    proc = subprocess.Popen([*command(holds, tmp_path, tasks, results), "--report", str(link)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        holds.wait_for(1)  # the first page is written
        link.unlink()
        link.symlink_to("/dev/full")
        holds.release(forever=True)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait(10)
    assert proc.returncode == 1, err
    errors = [x for x in err.splitlines() if x.startswith("ccwire: error: ")]
    assert errors == [
        f"ccwire: error: cannot write the report '{link}': No space left on device; "
        "the page is not up to date"
    ], err  # was: a bare OSError, logged twice with its traceback, and no summary
    assert f"`ccwire batch report {results} --html {link}`" in err and "Traceback" not in err
    events = [json.loads(x) for x in out.splitlines()]
    assert [e["event"] for e in events[-2:]] == ["summary", "error"]
    assert sorted(ids_on_disk(results)) == ["e", "h"]  # the batch went on
    assert "<html" in page.read_text()  # the last page written stays
    assert fake_cli_processes(holds) == []


@pytest.mark.parametrize("style", ["--json", "--plain"])
def test_progress_that_cannot_be_written_loses_no_result_of_the_report_page(
    tmp_path: Path, holds: Holds, style: str
) -> None:
    # standard output on a full disk: the batch goes on, the page lists every task, and
    # the command says once, typed, that its progress was lost (it logged a traceback per
    # event, left the failed tasks off the page, and with --json failed again reporting it)
    tasks = tmp_path / "tasks.jsonl"
    lines = [{"id": "ok1", "prompt": "echo 1"}, {"id": "bad", "prompt": "crash now"},
             {"id": "ok2", "prompt": "echo 2"}]  # fmt: skip
    tasks.write_text("".join(json.dumps(x) + "\n" for x in lines))
    results, page = tmp_path / "results.jsonl", tmp_path / "page.html"
    argv = [*command(holds, tmp_path, tasks, results)[:-1], style, "--report", str(page)]
    with open("/dev/full", "w") as full:
        proc = subprocess.run(argv, stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    errors = [x for x in proc.stderr.splitlines() if x.startswith("ccwire: error: ")]
    assert errors == [
        "ccwire: error: cannot write the progress to standard output: No space left on "
        "device; it was not written from then on"
    ], proc.stderr
    assert f"every result is in {results}" in proc.stderr
    assert sorted(ids_on_disk(results)) == ["bad", "ok1", "ok2"]
    drawn = page.read_text()
    assert all(f">{task}<" in drawn for task in ("bad", "ok1", "ok2")), drawn
    assert fake_cli_processes(holds) == []


def test_ctrl_c_keeps_every_finished_result_and_the_same_command_finishes_the_rest(
    tmp_path: Path, holds: Holds
) -> None:
    tasks = tmp_path / "tasks.jsonl"
    lines = [{"id": f"t{i:03d}", "prompt": f"echo {i}"} for i in range(8)]
    lines += [{"id": f"h{i}", "prompt": f"hold {i}"} for i in range(4)]
    tasks.write_text("".join(json.dumps(x) + "\n" for x in lines))
    results = tmp_path / "results.jsonl"
    proc = subprocess.Popen(command(holds, tmp_path, tasks, results), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        holds.wait_for(4)  # the echoes are done or running; four sessions wait
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait(10)  # reaped: a test that failed leaves no zombie behind
    assert proc.returncode == 130, err
    assert "ccwire: interrupted:" in err and "Traceback" not in err
    summary = json.loads(out.splitlines()[-1])
    assert summary["event"] == "summary" and summary["interrupted"] is True
    on_disk = ids_on_disk(results)
    assert set(finished(out)) <= set(on_disk)
    assert not any(i.startswith("h") for i in on_disk)  # interrupted, not failed
    assert fake_cli_processes(holds) == []

    holds.release(forever=True)
    again = subprocess.run(command(holds, tmp_path, tasks, results), capture_output=True, text=True,
                           timeout=120)  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert sorted(finished(again.stdout)) == sorted({x["id"] for x in lines} - set(on_disk))
    assert sorted(ids_on_disk(results)) == sorted(x["id"] for x in lines)


def test_the_report_of_a_terminated_batch_says_how_many_tasks_have_no_result(
    tmp_path: Path, holds: Holds
) -> None:
    # the last page of a batch killed with SIGTERM showed "1 task, 1 succeeded", as if
    # the batch had run its one task: nothing said that four had no result
    tasks = tmp_path / "tasks.jsonl"
    lines = [{"id": "e", "prompt": "echo e"}, {"id": "h1", "prompt": "hold 1"},
             {"id": "h2", "prompt": "hold 2"}, {"id": "later1", "prompt": "echo 1"},
             {"id": "later2", "prompt": "echo 2"}]  # fmt: skip
    tasks.write_text("".join(json.dumps(x) + "\n" for x in lines))
    results, page = tmp_path / "results.jsonl", tmp_path / "page.html"
    argv = [*command(holds, tmp_path, tasks, results), "-j", "2", "--report", str(page)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        holds.wait_for(2)  # "e" is done; both slots hold a waiting session
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait(10)
    assert proc.returncode == 143, err
    assert ids_on_disk(results) == ["e"]
    html = page.read_text()
    assert '<div class="total" id="total-total"><b>1</b>' in html
    assert (
        '<p class="bad" id="unfinished" data-count="4">4 tasks of the batch have no result: '
        "the batch was terminated (SIGTERM)"
    ) in html
    assert 'http-equiv="refresh"' not in html  # the last page
    assert fake_cli_processes(holds) == []


def test_sigterm_stops_the_batch_like_ctrl_c_ends_every_cli_and_exits_143(
    tmp_path: Path, holds: Holds
) -> None:
    tasks = tmp_path / "tasks.jsonl"
    lines = [{"id": "e", "prompt": "echo e"}] + [
        {"id": f"h{i}", "prompt": f"hold {i}"} for i in range(2)
    ]
    results = tmp_path / "results.jsonl"
    tasks.write_text(json.dumps(lines[0]) + "\n")  # a first run records "e"
    first = subprocess.run(command(holds, tmp_path, tasks, results), capture_output=True,
                           text=True, timeout=120)  # fmt: skip
    assert first.returncode == 0, first.stderr
    tasks.write_text("".join(json.dumps(x) + "\n" for x in lines))
    proc = subprocess.Popen(command(holds, tmp_path, tasks, results), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        holds.wait_for(2)
        proc.send_signal(signal.SIGTERM)  # a service manager, `timeout`, `kill`
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait(10)
    assert proc.returncode == 143, err
    assert "ccwire: terminated (SIGTERM):" in err and "Traceback" not in err
    # it said "0 results saved" of a file that held one
    assert f"0 results saved in {results} this run (and 1 from before);" in err
    summary = json.loads(out.splitlines()[-1])
    assert summary["event"] == "summary" and summary["interrupted"] is True
    on_disk = ids_on_disk(results)
    assert set(finished(out)) <= set(on_disk) == {"e"}  # the held ones: stopped, not failed
    assert fake_cli_processes(holds) == []


# ------------------------------------------------------------------ the task file


def batch_in_process(
    tmp_path: Path, tasks: Path, *extra: str, display: str = "--plain"
) -> tuple[int, str, str]:
    """``ccwire batch --plain`` (or `display`) in this process, with the fake CLI."""
    cli_io = CliIO(io.StringIO(), io.StringIO(), io.StringIO(), dict(os.environ))
    holds = Holds()
    args = ["batch", str(tasks), "-o", str(tmp_path / "out.jsonl"), "--offline",
            "--cli-path", fake_cli_wrapper(tmp_path, holds), display, *extra]  # fmt: skip
    try:
        code = main(args, io=cli_io)
    finally:
        holds.close()
    return code, cli_io.stdout.getvalue(), cli_io.stderr.getvalue()  # type: ignore[attr-defined]


GOOD = b'{"id": "a", "prompt": "echo a"}\n'


def test_bad_bytes_in_a_line_are_reported_with_the_line_number_and_never_rewritten(
    tmp_path: Path,
) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_bytes(GOOD + b'{"id": "b\xff", "prompt": "echo \xfe b"}\n')
    code, out, err = batch_in_process(tmp_path, tasks)
    assert code == 1, err
    assert "line 2: not valid UTF-8" in err and "skipped" in err
    rows = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [r["id"] for r in rows] == ["a"]  # no 'b\ufffd' ran
    assert "malformed lines skipped  1" in out

    code, _, err = batch_in_process(tmp_path, tasks, "--strict")
    assert code == 2
    assert "ccwire: error: line 2: not valid UTF-8" in err


def test_skipped_lines_are_counted_and_make_the_exit_code_non_zero(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_bytes(GOOD + b"{oops\n[1]\n" + b'{"id": "x"}\n' + b"42\n")
    code, out, err = batch_in_process(tmp_path, tasks)
    assert code == 1, err
    assert "tasks run                1 of 1" in out
    assert "malformed lines skipped  4" in out
    assert "4 malformed lines were skipped" in err

    (tmp_path / "out.jsonl").unlink()
    code, out, err = batch_in_process(tmp_path, tasks, "--allow-skipped")
    assert code == 0, err
    assert "malformed lines skipped  4" in out


def test_results_of_tasks_of_other_files_do_not_count_for_this_one(tmp_path: Path) -> None:
    (tmp_path / "out.jsonl").write_text(  # a results file shared with another task file
        json.dumps({"id": "other-ok", "ok": True}) + "\n"
        + json.dumps({"id": "other-failed", "ok": False, "error": "boom"}) + "\n"
    )  # fmt: skip
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_bytes(GOOD)
    code, out, err = batch_in_process(tmp_path, tasks)
    assert code == 0, err  # every task of this file succeeded
    assert "tasks run                1 of 1" in out  # was "1 of -1"
    assert "skipped (already done)   0 (0 had failed)" in out


def test_tasks_a_budget_interrupts_are_told_apart_from_those_not_run(tmp_path: Path) -> None:
    # the two held sessions ran until the echo spent the budget: "3 tasks not run" said
    # nothing of what they had spent meanwhile
    # (the first task runs alone: no cost is known yet; then the three next ones start)
    tasks = tmp_path / "tasks.jsonl"  # nobody releases the held sessions
    tasks.write_bytes(GOOD + b'{"id": "h1", "prompt": "hold 1"}\n'
                      b'{"id": "h2", "prompt": "hold 2"}\n{"id": "p", "prompt": "pay 0.01 p"}\n'
                      b'{"id": "later", "prompt": "echo later"}\n')  # fmt: skip
    code, _, err = batch_in_process(tmp_path, tasks, "-j", "3", "--max-cost-usd", "0.005",
                                    "--on-budget", "interrupt")  # fmt: skip
    assert code == 1, err
    assert [json.loads(x)["id"] for x in (tmp_path / "out.jsonl").open()] == ["a", "p"]
    assert "; 1 tasks not run and 2 interrupted (what they spent is not known" in err


def test_a_spent_budget_is_in_the_summary_for_scripts_and_in_the_table(tmp_path: Path) -> None:
    # `--json`'s summary said nothing of a budget: a script saw exit code 1 and no
    # reason (the reason was a line of text on stderr only)
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_bytes(
        GOOD + b'{"id": "p", "prompt": "pay 0.01 p"}\n'
        b'{"id": "b", "prompt": "echo b"}\n{"id": "c", "prompt": "echo c"}\n'
    )
    code, out, err = batch_in_process(tmp_path, tasks, "-j", "1", "--max-cost-usd", "0.005",
                                      display="--json")  # fmt: skip
    assert code == 1 and "budget spent" in err, err
    summary = json.loads(out.splitlines()[-1])
    assert summary["event"] == "summary"
    budget = summary["budget"]
    spent = sum(json.loads(x)["cost_usd"] for x in (tmp_path / "out.jsonl").open())
    assert budget == {"max_cost_usd": 0.005, "spent_usd": pytest.approx(spent), "spent": True,
                      "not_run": 2, "interrupted": 0,
                      "overshoot_usd": pytest.approx(spent - 0.005)}  # fmt: skip
    code, out, err = batch_in_process(tmp_path, tasks, "--max-cost-usd", "1")  # room: the rest
    assert code == 0, err
    spent = sum(json.loads(x)["cost_usd"] for x in (tmp_path / "out.jsonl").open())
    assert f"budget                   ${spent:.4f} recorded of $1.0000\n" in out
    assert "budget spent" not in err


def test_a_budget_spent_before_the_run_counts_only_the_tasks_without_a_result(
    tmp_path: Path,
) -> None:
    # the tasks of the file after the one the budget stopped at were all counted as not
    # run, those with a result included (6 said, 3 true); and what an earlier run without
    # a budget spent was called this run's overshoot, by "model calls that crossed caps"
    every = [json.dumps({"id": f"t{i}", "prompt": f"pay 0.01 t{i}"}) + "\n" for i in range(6)]
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(every[3:]))  # an earlier run of the last three, no budget
    code, _, err = batch_in_process(tmp_path, tasks, "-j", "1")
    assert code == 0, err
    tasks.write_text("".join(every))
    code, out, err = batch_in_process(tmp_path, tasks, "--max-cost-usd", "0.02", display="--json")
    assert code == 1, err
    assert "budget spent: $0.0300 recorded of $0.0200; 3 tasks not run (not in" in err, err
    assert "overshot" not in err
    budget = json.loads(out.splitlines()[-1])["budget"]
    assert (budget["not_run"], budget["overshoot_usd"]) == (3, 0)


def test_a_budget_its_last_task_spent_asks_for_no_run_again(tmp_path: Path) -> None:
    # every task ran (exit code 0), yet stderr said "budget spent ...; 0 tasks not run
    # ...; run again with a higher --max-cost-usd (or none) to run them"
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_bytes(b'{"id": "a", "prompt": "pay 0.01 a"}\n{"id": "b", "prompt": "pay 0.01 b"}\n')
    code, out, err = batch_in_process(tmp_path, tasks, "-j", "1", "--max-cost-usd", "0.02")
    assert code == 0, err
    assert err == ""
    assert "budget                   $0.0200 recorded of $0.0200: spent, 0 tasks not run" in out


def test_a_hung_cli_is_stopped_by_the_silence_timeout_and_the_batch_goes_on(
    tmp_path: Path,
) -> None:
    tasks = tmp_path / "tasks.jsonl"  # nobody releases the held session: it hangs
    tasks.write_bytes(GOOD + b'{"id": "hung", "prompt": "hold forever"}\n')
    code, _, err = batch_in_process(tmp_path, tasks, "--silence-timeout", "2")
    assert code == 1, err
    rows = {json.loads(x)["id"]: json.loads(x) for x in (tmp_path / "out.jsonl").open()}
    assert rows["a"]["ok"] is True
    assert rows["hung"]["ok"] is False and "wrote nothing for 2 s" in rows["hung"]["error"]


def test_a_task_past_its_time_limit_is_counted_as_timed_out_and_the_batch_goes_on(
    tmp_path: Path, holds: Holds, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the held fake ignores the interrupt: its turn's 3 s to stop would only be waited out
    monkeypatch.setattr(batch_session, "_STOP_TURN_SECONDS", 0.3)
    tasks = tmp_path / "tasks.jsonl"  # nobody releases the held sessions: they hang
    tasks.write_bytes(GOOD + b'{"id": "hung", "prompt": "hold forever"}\n'
                      b'{"id": "own", "prompt": "hold on", "timeout": 1.5}\n'
                      b'{"id": "b", "prompt": "echo b"}\n')  # fmt: skip
    out = tmp_path / "out.jsonl"
    cli_io = CliIO(io.StringIO(), io.StringIO(), io.StringIO(), dict(os.environ))
    args = ["batch", str(tasks), "-o", str(out), "--offline", "--json", "-j", "2",
            "--cli-path", fake_cli_wrapper(tmp_path, holds), "--task-timeout", "2"]  # fmt: skip
    code = main(args, io=cli_io)
    err = cli_io.stderr.getvalue()  # type: ignore[attr-defined]
    assert code == 1, err
    events = [json.loads(x) for x in cli_io.stdout.getvalue().splitlines()]  # type: ignore[attr-defined]
    ended = {e["id"]: e for e in events if e["event"] == "task_finished"}
    assert {i: (e["ok"], e.get("error_kind")) for i, e in ended.items()} == {
        "a": (True, None), "hung": (False, "timeout"), "own": (False, "timeout"), "b": (True, None),
    }  # fmt: skip
    assert ended["hung"]["error"] == "the task did not finish within its time limit of 2 s"
    assert ended["own"]["error"] == "the task did not finish within its time limit of 1.5 s"
    summary = events[-1]
    assert (summary["event"], summary["failed"], summary["timed_out"]) == ("summary", 2, 2)
    # both were cut mid-turn (their CLIs had started, as they do within 1.5 s unless the
    # machine is very busy); the fake, holding, ignores the interrupt (a wedged CLI), so
    # no result said what the turns spent
    assert summary["cost_unknown_tasks"] == len(holds.arrived) == 2
    assert fake_cli_processes(holds) == []  # their CLIs were ended
    report = CliIO(io.StringIO(), io.StringIO(), io.StringIO(), dict(os.environ))
    assert main(["batch", "report", str(out), "--json"], io=report) == 0
    by_kind = json.loads(report.stdout.getvalue())["by_kind"]  # type: ignore[attr-defined]
    assert by_kind == {"ok": 2, "timeout": 2}
    for bad in ("0", "-1", "nan", "inf"):
        refused = CliIO(io.StringIO(), io.StringIO(), io.StringIO(), dict(os.environ))
        assert main([*args[:-1], bad], io=refused) == 2
        assert "--task-timeout must be a positive number of seconds" in (
            refused.stderr.getvalue()  # type: ignore[attr-defined]
        )


def test_a_task_file_from_a_pipe_is_read_once_and_every_task_runs(tmp_path: Path) -> None:
    fifo = tmp_path / "tasks.fifo"  # as `ccwire batch /dev/stdin` or `<(...)` give it
    os.mkfifo(fifo)
    lines = GOOD + b'{"id": "b", "prompt": "echo b"}\n'
    writer = threading.Thread(target=fifo.write_bytes, args=(lines,))
    writer.start()
    try:
        code, out, err = batch_in_process(tmp_path, fifo)
    finally:
        writer.join(10)
    assert code == 0, err  # was 1: the second reading found the pipe empty, nothing ran
    assert "tasks run                2 of 2" in out
    assert sorted(ids_on_disk(tmp_path / "out.jsonl")) == ["a", "b"]


def test_a_results_file_that_is_the_task_file_is_refused(tmp_path: Path) -> None:
    tasks = tmp_path / "out.jsonl"  # batch_in_process writes to out.jsonl
    tasks.write_bytes(GOOD)
    code, _, err = batch_in_process(tmp_path, tasks)
    assert code == 2, err
    assert "is the task file" in err
    assert tasks.read_bytes() == GOOD  # the results were appended to the tasks


@pytest.mark.parametrize("page", ["out.jsonl", "tasks.jsonl", "link.html"])
def test_a_report_page_that_is_the_results_or_the_task_file_is_refused(
    tmp_path: Path, page: str
) -> None:
    # the page replaced the file: every result gone (exit code 0), or the tasks
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_bytes(GOOD)
    results = tmp_path / "out.jsonl"  # batch_in_process writes to out.jsonl
    results.write_bytes(b'{"id": "old", "ok": true}\n')
    (tmp_path / "link.html").symlink_to(results)
    before = results.read_bytes()
    code, _, err = batch_in_process(tmp_path, tasks, "--report", str(tmp_path / page))
    assert code == 2, err
    assert "writing the page would replace it" in err
    assert (tasks.read_bytes(), results.read_bytes()) == (GOOD, before)
    report = CliIO(io.StringIO(), io.StringIO(), io.StringIO(), {})
    assert main(["batch", "report", str(results), "--html", str(tmp_path / page)], io=report) == (
        0 if page == "tasks.jsonl" else 2
    )
    assert results.read_bytes() == before


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "has no tasks"),
        (b"\n  \n", "has no tasks"),
        (b"{oops\n[1]\n", "has no well-formed task (2 malformed lines)"),
    ],
)
def test_a_file_without_a_task_is_an_error(tmp_path: Path, content: bytes, message: str) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_bytes(content)
    code, _, err = batch_in_process(tmp_path, tasks)
    assert code == 2, err
    errors = [x for x in err.splitlines() if x.startswith("ccwire: error: ")]
    assert len(errors) == 1 and message in errors[0], err
    assert not (tmp_path / "out.jsonl").exists() or not (tmp_path / "out.jsonl").read_text()


def ctrl_c_as_from_a_terminal() -> None:
    """In the child: SIGINT as a terminal leaves it. A run started in the background
    (``make test &``) ignores SIGINT, and Python then raises no KeyboardInterrupt."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_ctrl_c_in_a_program_is_a_keyboard_interrupt_with_every_result_on_disk(
    tmp_path: Path, holds: Holds, backend: str
) -> None:
    out = tmp_path / "out.jsonl"
    program = Path(__file__).with_name("batch_program.py")
    proc = subprocess.Popen([sys.executable, str(program), backend,
                             fake_cli_wrapper(tmp_path, holds), str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=ctrl_c_as_from_a_terminal)  # fmt: skip
    try:
        holds.wait_for(3)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait(10)  # reaped: a test that failed leaves no zombie behind
    lines = [json.loads(x) for x in stdout.splitlines()]
    if backend == "asyncio" and sys.version_info < (3, 11):
        # anyio's asyncio runner on 3.10 turns Ctrl-C into CancelledError for any
        # program (its tasks cannot be uncancelled there); the results still hold
        assert lines[-1]["raised"] == "CancelledError", stderr
        assert proc.returncode == 1
    else:
        assert lines[-1]["raised"] == "KeyboardInterrupt", stderr  # not a cancellation
        assert proc.returncode == -signal.SIGINT
    assert sorted(x["result"] for x in lines[:-1]) == sorted(ids_on_disk(out))
    assert sorted(ids_on_disk(out)) == [f"e{i}" for i in range(6)]
    assert fake_cli_processes(holds) == []
