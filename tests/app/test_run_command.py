"""``ccwire run`` in-process against the fake CLI of ``fake_run_cli.py``: the ways a run
ends that ``test_cli.py`` and ``test_cli_errors.py`` do not reach (credentials the model
refuses, an error result offline, no result, the verbose report) and ``--spawn``."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ccwire._app.main import CliIO, main
from tests.fixtures.wrappers import python_wrapper

FAKE = Path(__file__).with_name("fake_run_cli.py")


@pytest.fixture
def fake_cli(tmp_path: Path) -> str:
    """An executable running the fake."""
    return python_wrapper(tmp_path / "fake-claude", FAKE)


def run(*args: str, environ: dict[str, str] | None = None) -> tuple[int, str, str]:
    stdout, stderr = io.StringIO(), io.StringIO()
    cli_io = CliIO(io.StringIO(), stdout, stderr, environ or {})
    code = main(["run", *args], io=cli_io)
    return code, stdout.getvalue(), stderr.getvalue()


REAL = {"ANTHROPIC_API_KEY": "sk-ant-test"}  # a real-model run (the fake never checks it)


def test_credentials_the_model_refuses_exit_4(fake_cli: str) -> None:
    code, out, err = run("refuse it", "--cli-path", fake_cli, "--json", environ=REAL)
    assert code == 4
    lines = err.splitlines()
    assert lines[0] == (
        "ccwire: error: the model refused the credentials, saying "
        "Invalid API key · Please run /login"  # shown whole: no word of it taken for a secret
    )
    assert lines[1].startswith("ccwire: hint: ")
    events = [json.loads(line) for line in out.splitlines()]
    assert events[-1]["event"] == "error" and events[-1]["exit_code"] == 4


def test_an_offline_error_result_is_only_an_error_result(fake_cli: str, tmp_path: Path) -> None:
    # offline, the scripted model answers: its words are never about the user's credentials
    env = {"CCWIRE_OFFLINE_DIR": str(tmp_path / "offline")}
    code, out, err = run("refuse it", "--cli-path", fake_cli, "--offline", environ=env)
    assert (code, err) == (1, "")
    assert out.splitlines()[-1] == "error result - 1 turn - 5 ms"
    assert (tmp_path / "offline").is_dir()  # the offline sessions' folder was made


def test_a_cli_ending_without_a_result_is_an_error(fake_cli: str) -> None:
    code, _, err = run("silent please", "--cli-path", fake_cli, environ=REAL)
    assert code == 1
    assert err.splitlines()[0] == (  # its CLI exited 0 with the prompt owed its result
        "ccwire: error: the Claude Code CLI exited before the result of the turn (exit code: 0)"
    )
    assert "Traceback" not in err


def test_verbose_shows_the_trace_the_traceback_and_the_whole_message(fake_cli: str) -> None:
    code, _, err = run("crash now", "--cli-path", fake_cli, "--verbose", environ=REAL)
    assert code == 1
    assert '"subtype":"initialize"' in err  # the protocol trace
    assert "[cli stderr] fatal: out of cheese" in err
    assert "Traceback (most recent call last)" in err
    report = err[err.index("ccwire: error: ") :].splitlines()
    assert report[:4] == [  # the whole message, the stderr only once
        "ccwire: error: the Claude Code CLI exited (exit code: 3)",
        "Error output: starting",
        "loading",
        "fatal: out of cheese",
    ]
    assert report[4].startswith("ccwire: hint: ") and len(report) == 5


def test_a_spawner_starts_the_cli(
    fake_cli: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    monkeypatch.setenv("SPAWN_MARKS", str(marks))
    code, out, _ = run("hello", "--cli-path", fake_cli, "--spawn",
                       "tests.batch.spawners:counting", environ=REAL)  # fmt: skip
    assert code == 0 and "echo: hello" in out
    (mark,) = marks.iterdir()
    assert "--input-format stream-json" in mark.read_text()


class ClosedPipe(io.StringIO):
    """A stdout whose reader has gone (``ccwire run ... | head -1``) after one line."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def write(self, text: str) -> int:
        self.writes += 1
        if self.writes > 1:
            raise BrokenPipeError(32, "Broken pipe")
        return super().write(text)


@pytest.mark.parametrize("mode", ["--plain", "--json"])
def test_a_closed_output_stops_the_run_quietly_with_the_sigpipe_exit_code(
    fake_cli: str, mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    stdout, stderr = ClosedPipe(), io.StringIO()
    code = main(["run", "hello", "--cli-path", fake_cli, mode], io=CliIO(io.StringIO(), stdout,
                stderr, REAL))  # fmt: skip
    assert code == 141  # not 0: the output was lost; as a command that SIGPIPE ended
    assert stderr.getvalue() == "" and caplog.text == ""  # no report, no traceback
    assert stdout.writes == 2  # nothing more was written: the run stopped there


def test_a_closed_stdout_ends_the_process_quietly(tmp_path: Path) -> None:
    read, write = os.pipe()
    os.close(read)  # `ccwire sessions | head -1`, the reader gone before the first line
    try:
        done = subprocess.run(
            [sys.executable, "-m", "ccwire", "sessions", "--offline"],
            stdout=write,
            stderr=subprocess.PIPE,
            env={**os.environ, "CCWIRE_OFFLINE_DIR": str(tmp_path)},
            timeout=60,
            check=False,
        )
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (141, b"")


def test_a_terminal_that_cannot_show_a_character_gets_a_replacement(tmp_path: Path) -> None:
    cli = tmp_path / "fake-claude"  # the fake CLI itself speaks UTF-8, as the real one does
    cli.write_text(f'#!/bin/sh\nPYTHONIOENCODING=utf-8 exec {sys.executable} {FAKE} "$@"\n')
    cli.chmod(0o755)
    done = subprocess.run(
        [sys.executable, "-m", "ccwire", "run", "h\u00e9llo \u2713", "--cli-path", str(cli)],
        capture_output=True,
        env={**os.environ, **REAL, "PYTHONIOENCODING": "ascii"},  # a terminal of ASCII only
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, b"")
    assert done.stdout.splitlines()[0] == b"> h?llo ?"


def test_json_output_keeps_every_character_on_a_terminal_that_cannot_show_them(
    tmp_path: Path,
) -> None:
    """``--json`` is for programs: on an ASCII terminal a character it cannot show is
    escaped (``\\u00e9``), not replaced by ``?``, so the JSON read back is the text."""
    cli = tmp_path / "fake-claude"
    cli.write_text(f'#!/bin/sh\nPYTHONIOENCODING=utf-8 exec {sys.executable} {FAKE} "$@"\n')
    cli.chmod(0o755)
    prompt = "h\u00e9llo \u2713"
    done = subprocess.run(
        [sys.executable, "-m", "ccwire", "run", prompt, "--json", "--cli-path", str(cli)],
        capture_output=True,
        env={**os.environ, **REAL, "PYTHONIOENCODING": "ascii"},
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, b"")
    assert b"?" not in done.stdout
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert prompt in json.dumps(events, ensure_ascii=False)
