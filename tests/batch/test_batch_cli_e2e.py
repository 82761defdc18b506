"""``ccwire batch`` as a user runs it: 60 offline tasks through the real CLI, a Ctrl-C
part-way (running CLIs ended, no half-written line), and a re-run with the live display
that finishes the rest: one result per id. (The same with the fake CLI, and faults of
the disk: ``test_batch_cli_faults.py``.)"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from ccwire._app.main import CliIO, main

TASKS = 60


def command(tasks: Path, results: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "ccwire", "batch", str(tasks), "-o", str(results), "-j", "4",
            "--offline", *extra]  # fmt: skip


def check_results(results: Path) -> list[str]:
    """The ids of a results file whose every line is whole, valid JSON."""
    raw = results.read_bytes()
    assert raw == b"" or raw.endswith(b"\n")
    return [json.loads(line)["id"] for line in raw.decode().splitlines()]


@pytest.mark.timeout(900)
def test_tasks_survive_ctrl_c_and_a_rerun_with_the_live_display(
    cli_path: str, tmp_path: Path
) -> None:
    tasks = tmp_path / "tasks.jsonl"
    lines = (json.dumps({"id": f"task-{i:03d}", "prompt": f"item {i}"}) for i in range(TASKS))
    tasks.write_text("".join(line + "\n" for line in lines))
    results = tmp_path / "results.jsonl"
    env = {**os.environ, "CCWIRE_CLI_PATH": cli_path, "COLUMNS": "120"}

    first = subprocess.Popen(command(tasks, results, "--json"), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)  # fmt: skip
    assert first.stdout is not None
    finished = 0
    for line in first.stdout:
        if json.loads(line)["event"] == "task_finished":
            finished += 1
            if finished == 10:
                break
    clis = psutil.Process(first.pid).children(recursive=True)
    assert clis, "sessions should be running"
    first.send_signal(signal.SIGINT)
    rest, errors = first.communicate(timeout=120)
    assert first.returncode == 130, errors
    assert "ccwire: interrupted:" in errors and "Traceback" not in errors
    summary = json.loads(rest.splitlines()[-1])
    assert summary["event"] == "summary" and summary["interrupted"] is True
    _, alive = psutil.wait_procs(clis, timeout=30)
    assert not alive, f"processes left running after Ctrl-C: {alive}"
    done_first = check_results(results)
    assert 10 <= len(done_first) < TASKS
    assert len(set(done_first)) == len(done_first)

    second = subprocess.run(command(tasks, results, "--live"), capture_output=True, text=True,
                            env=env, cwd=tmp_path, timeout=700)  # fmt: skip
    assert second.returncode == 0, second.stderr
    assert "Traceback" not in second.stderr
    assert f"{TASKS - len(done_first)} of {TASKS - len(done_first)}" in second.stdout
    assert "running 4" in second.stdout and "ETA" in second.stdout  # the live panel was drawn
    ids = check_results(results)
    assert sorted(ids) == sorted(f"task-{i:03d}" for i in range(TASKS))  # one per id
    rows = [json.loads(x) for x in results.read_text().splitlines()]
    assert all(r["ok"] and r["result"] == f"(offline echo) item {int(r['id'][5:])}" for r in rows)


def test_every_session_plays_the_scripted_steps_with_tools_by_reference(
    cli_path: str, tmp_path: Path
) -> None:
    script = tmp_path / "steps.json"
    script.write_text(json.dumps([
        {"tool_use": {"name": "mcp__calc__add", "input": {"a": 2, "b": 40}}},
        {"text": "the sum is {tool_results}"},
    ]))  # fmt: skip
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(json.dumps({"id": f"s{i}", "prompt": f"go {i}"}) + "\n"
                             for i in range(3)))  # fmt: skip
    results = tmp_path / "results.jsonl"
    cli_io = CliIO(io.StringIO(), io.StringIO(), io.StringIO(), {"CCWIRE_CLI_PATH": cli_path})
    code = main(["batch", str(tasks), "-o", str(results), "-j", "3", "--scripted", str(script),
                 "--tools", "tests.batch.calc_tools:server", "--plain"], io=cli_io)  # fmt: skip
    assert code == 0, cli_io.stderr.getvalue()  # type: ignore[attr-defined]
    rows = {r["id"]: r for r in map(json.loads, results.read_text().splitlines())}
    assert set(rows) == {"s0", "s1", "s2"}
    for row in rows.values():
        assert (row["ok"], row["result"], row["tool_calls"], row["num_turns"]) == (
            True, "the sum is 42", 1, 2,
        )  # fmt: skip


def test_a_tool_that_blocks_the_event_loop_is_reported_at_the_end(
    cli_path: str, tmp_path: Path
) -> None:
    script = tmp_path / "steps.json"
    script.write_text(json.dumps([{"tool_use": {"name": "mcp__calc__nap", "input": {}}},
                                  {"text": "done"}]))  # fmt: skip
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"id": "s0", "prompt": "go"}) + "\n")
    results = tmp_path / "results.jsonl"
    cli_io = CliIO(io.StringIO(), io.StringIO(), io.StringIO(), {"CCWIRE_CLI_PATH": cli_path})
    code = main(["batch", str(tasks), "-o", str(results), "--scripted", str(script),
                 "--tools", "tests.batch.calc_tools:server", "--plain"], io=cli_io)  # fmt: skip
    err = cli_io.stderr.getvalue()  # type: ignore[attr-defined]
    assert code == 0, err
    assert "synchronous code blocked the batch's event loop 1 time" in err, err
    assert "calc_tools.py:" in err and "in nap" in err
