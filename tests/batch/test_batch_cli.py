"""``ccwire batch`` in-process, against a CLI that cannot start: bad input, error lines,
exit codes, NDJSON progress and the plain summary. No session succeeds here."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from ccwire._app.main import CliIO, main
from tests.fixtures.cli_io import err, make_io, out


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    """Created by the dead CLI when it is started at all."""
    return tmp_path / "cli-was-started"


@pytest.fixture
def dead_cli(tmp_path: Path, marker: Path) -> str:
    path = tmp_path / "dead-cli"
    path.write_text(f"#!/bin/sh\ntouch '{marker}'\necho 'no such luck' >&2\nexit 3\n")
    path.chmod(0o755)
    return str(path)


def tasks_file(tmp_path: Path, *lines: str) -> str:
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join(line + "\n" for line in lines))
    return str(path)


GOOD = ['{"id": "a", "prompt": "x"}', '{"id": "b", "prompt": "y"}']


def batch(*args: str) -> tuple[int, CliIO]:
    cli_io = make_io()
    return main(["batch", *args], io=cli_io), cli_io


def assert_one_error_line(cli_io: CliIO, text: str) -> None:
    lines = err(cli_io).splitlines()
    errors = [x for x in lines if x.startswith("ccwire: error: ")]
    assert len(errors) == 1 and text in errors[0], lines
    assert "Traceback" not in err(cli_io)


def test_strict_rejects_a_malformed_line_before_anything_runs(
    tmp_path: Path, dead_cli: str, marker: Path
) -> None:
    tasks = tasks_file(tmp_path, GOOD[0], "{not json", GOOD[1])
    code, cli_io = batch(tasks, "-o", str(tmp_path / "o.jsonl"), "--strict", "--cli-path",
                         dead_cli, "--offline")  # fmt: skip
    assert code == 2
    assert_one_error_line(cli_io, "line 2: not valid JSON")
    assert "ccwire: hint: " in err(cli_io)
    assert not marker.exists()


def test_malformed_lines_are_reported_and_skipped(tmp_path: Path, dead_cli: str) -> None:
    tasks = tasks_file(tmp_path, GOOD[0], "{not json", '{"id": "c"}', GOOD[1])
    results = tmp_path / "o.jsonl"
    code, cli_io = batch(tasks, "-o", str(results), "--cli-path", dead_cli, "--offline",
                         "--retries", "0", "--plain")  # fmt: skip
    assert code == 1  # both good tasks failed for good (the CLI cannot start)
    warnings = [x for x in err(cli_io).splitlines() if x.startswith("ccwire: warning:")]
    assert len(warnings) == 2
    assert "line 2: not valid JSON" in warnings[0] and warnings[0].endswith("skipped")
    assert "line 3: task 'c': 'prompt' must be a non-empty string" in warnings[1]
    assert sorted(json.loads(x)["id"] for x in results.read_text().splitlines()) == ["a", "b"]
    assert "FAILED a: " in out(cli_io) and "tasks run                2 of 2" in out(cli_io)


def test_duplicate_ids_are_an_error(tmp_path: Path, dead_cli: str, marker: Path) -> None:
    tasks = tasks_file(tmp_path, GOOD[0], GOOD[1], '{"id": "a", "prompt": "again"}')
    code, cli_io = batch(tasks, "-o", str(tmp_path / "o.jsonl"), "--cli-path", dead_cli,
                         "--offline")  # fmt: skip
    assert code == 2
    assert_one_error_line(cli_io, "line 3: duplicate task id 'a' (first seen on line 1)")
    assert not marker.exists()


def test_an_unwritable_output_fails_before_any_task(
    tmp_path: Path, dead_cli: str, marker: Path
) -> None:
    tasks = tasks_file(tmp_path, *GOOD)
    code, cli_io = batch(tasks, "-o", str(tmp_path / "nope" / "o.jsonl"), "--cli-path",
                         dead_cli, "--offline")  # fmt: skip
    assert code == 2
    assert_one_error_line(cli_io, "cannot write the results file")
    assert not marker.exists()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["-j", "0"], "-j must be at least 1"),
        (["--ray", "--sessions-per-actor", "0"], "--sessions-per-actor must be at least 1"),
        (["--tools", "no_such_module_xyz:server"], "cannot import 'no_such_module_xyz'"),
        (["--tools", "tests.batch.calc_tools:not_a_server"], "expected an in-process MCP"),
        (["--retries", "-1"], "--retries must be >= 0"),
        (["--max-turns", "0"], "--max-turns must be at least 1"),  # 0 was: no limit at all
        (["--max-turns", "-2"], "--max-turns must be at least 1"),  # was exit 1, "protocol trace"
        (["--silence-timeout", "0"], "--silence-timeout must be a positive number"),
        (["--silence-timeout", "nan"], "--silence-timeout must be a positive number"),
        (["--report", "/no-such-dir/r.html"], "cannot write the report"),  # was: after all ran
        (["--max-cost-usd", "0"], "--max-cost-usd must be positive"),
        (["--otel-cli"], "--otel-cli needs --otel"),
        (["--num-cpus", "nan"], "--num-cpus must be a number of CPUs"),  # was: ignored, exit 0
        (["--num-cpus", "-1"], "--num-cpus must be a number of CPUs"),
        (["--memory-mb", "0"], "--memory-mb must be at least 1"),
    ],
)
def test_bad_options_fail_before_any_task(
    tmp_path: Path, dead_cli: str, marker: Path, extra: list[str], message: str
) -> None:
    tasks = tasks_file(tmp_path, *GOOD)
    code, cli_io = batch(tasks, "-o", str(tmp_path / "o.jsonl"), "--cli-path", dead_cli,
                         "--offline", *extra)  # fmt: skip
    assert code == 2
    assert_one_error_line(cli_io, message)
    assert not marker.exists()


def test_an_empty_task_file(tmp_path: Path, dead_cli: str, marker: Path) -> None:
    code, cli_io = batch(tasks_file(tmp_path), "-o", str(tmp_path / "o.jsonl"),
                         "--cli-path", dead_cli, "--offline")  # fmt: skip
    assert code == 2
    assert_one_error_line(cli_io, "has no tasks: it is empty")
    assert not marker.exists()


def test_a_missing_task_file(tmp_path: Path, dead_cli: str) -> None:
    code, cli_io = batch(str(tmp_path / "none.jsonl"), "-o", str(tmp_path / "o.jsonl"),
                         "--cli-path", dead_cli)  # fmt: skip
    assert code == 2
    assert_one_error_line(cli_io, "cannot read the task file")


def test_json_progress_events_and_the_exit_code(tmp_path: Path, dead_cli: str) -> None:
    tasks = tasks_file(tmp_path, *GOOD, "[]")
    results = tmp_path / "o.jsonl"
    code, cli_io = batch(tasks, "-o", str(results), "--cli-path", dead_cli, "--offline",
                         "--retries", "1", "--json")  # fmt: skip
    assert code == 1
    events = [json.loads(x) for x in out(cli_io).splitlines()]
    kinds = [e["event"] for e in events]
    assert kinds[0] == "warning" and "line 3" in events[0]["message"]
    assert kinds[1] == "start" and events[1]["total"] == 2
    assert kinds.count("task_started") == 4 and kinds.count("task_retry") == 2
    finished = [e for e in events if e["event"] == "task_finished"]
    assert sorted(e["id"] for e in finished) == ["a", "b"]
    assert all(not e["ok"] and e["attempts"] == 2 for e in finished)
    summary = events[-1]
    assert summary["event"] == "summary"
    assert (summary["failed"], summary["ok"], summary["interrupted"]) == (2, 0, False)

    # a re-run has nothing left to do, but still reports the earlier failures
    code, cli_io = batch(tasks, "-o", str(results), "--cli-path", dead_cli, "--offline",
                         "--json")  # fmt: skip
    assert code == 1
    summary = json.loads(out(cli_io).splitlines()[-1])
    assert (summary["total"], summary["skipped"], summary["previously_failed"]) == (0, 2, 2)


@pytest.mark.skipif(sys.platform == "darwin", reason="a keychain login cannot be ruled out")
def test_a_real_model_batch_needs_credentials(tmp_path: Path, dead_cli: str, marker: Path) -> None:
    # no key, and no login in this HOME: nothing to run with
    cli_io = CliIO(io.StringIO(), io.StringIO(), io.StringIO(), {"HOME": str(tmp_path)})
    argv = ["batch", tasks_file(tmp_path, GOOD[0]), "-o", str(tmp_path / "o.jsonl"),
            "--cli-path", dead_cli]  # fmt: skip
    assert main(argv, io=cli_io) == 4
    assert_one_error_line(cli_io, "ANTHROPIC_API_KEY")
    assert not marker.exists()


def test_more_malformed_lines_than_are_listed(tmp_path: Path, dead_cli: str) -> None:
    tasks = tasks_file(tmp_path, GOOD[0], *(["{nope"] * 1001))
    code, cli_io = batch(tasks, "-o", str(tmp_path / "o.jsonl"), "--cli-path", dead_cli,
                         "--offline", "--retries", "0", "--plain")  # fmt: skip
    assert code == 1
    warnings = [x for x in err(cli_io).splitlines() if x.startswith("ccwire: warning: ")]
    assert len(warnings) == 1001  # the first 1000 by line, then how many more
    assert warnings[-1] == "ccwire: warning: 1 more malformed lines skipped"
    assert "ccwire: 1001 malformed lines were skipped" in err(cli_io)


def test_a_report_onto_a_folder_fails_without_leaving_a_stray_file(tmp_path: Path) -> None:
    results = tmp_path / "o.jsonl"
    results.write_text('{"id": "a", "ok": true}\n')
    folder = tmp_path / "taken"
    folder.mkdir()
    code, cli_io = batch("report", str(results), "--html", str(folder))
    assert code == 1
    assert_one_error_line(cli_io, "IsADirectoryError")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o.jsonl", "taken"]  # no taken.tmp


def test_a_report_of_a_folder_is_a_usage_error_not_an_empty_batch(tmp_path: Path) -> None:
    code, cli_io = batch("report", str(tmp_path), "--html", str(tmp_path / "r.html"))
    assert code == 2  # was: "wrote r.html (0 tasks)", exit 0
    assert_one_error_line(cli_io, "is a directory, not a results file")
    assert not (tmp_path / "r.html").exists()
