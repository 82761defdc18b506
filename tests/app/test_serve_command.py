"""``ccwire serve`` in-process: its options, its usage errors (exit code 2, one
``ccwire: error:`` line), ``--http`` on an address that cannot be bound, and serving
on the process's own stdin/stdout."""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from ccwire._app.loaders import UsageError
from ccwire._app.main import CliIO, ExitCode, main
from ccwire._app.serve import USAGE, parse_http_address, serve_command
from tests.fixtures.jsonrpc import initialize, line, tools_call

TARGET = "tests.fixtures.mcp_serve_server:server"


@pytest.fixture(autouse=True)
def _keep_sys_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "path", list(sys.path))  # load_server() prepends to it


def run(*args: str) -> tuple[int, str, str]:
    cli_io = CliIO(stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO(), environ={})
    code = main(["serve", *args], io=cli_io)
    assert isinstance(cli_io.stdout, io.StringIO) and isinstance(cli_io.stderr, io.StringIO)
    return code, cli_io.stdout.getvalue(), cli_io.stderr.getvalue()


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_is_written_to_the_given_stdout(flag: str) -> None:
    code, written, _ = run(TARGET, flag)
    assert code == 0 and written == USAGE


@pytest.mark.parametrize(
    ("value", "address"),
    [
        ("8080", ("127.0.0.1", 8080)),
        ("0", ("127.0.0.1", 0)),
        ("0.0.0.0:80", ("0.0.0.0", 80)),
        ("localhost:65535", ("localhost", 65535)),
        ("[::1]:9000", ("::1", 9000)),
        (":7", ("127.0.0.1", 7)),
        ("[]:7", ("127.0.0.1", 7)),
    ],
)
def test_http_addresses(value: str, address: tuple[str, int]) -> None:
    assert parse_http_address(value) == address


@pytest.mark.parametrize("value", ["", "x", "h:", "h:y", "65536", "h:-1", "h:1.5", "[::1]"])
def test_bad_http_addresses(value: str) -> None:
    with pytest.raises(UsageError, match=r"serve --http expects \[HOST:\]PORT"):
        parse_http_address(value)


def test_a_host_that_is_not_utf8_is_a_usage_error() -> None:
    # it failed at the bind: "TypeError: encoding of hostname failed", exit code 1
    with pytest.raises(UsageError, match=r"serve --http's HOST is not valid UTF-8 .*0xff"):
        parse_http_address("h\udcff:8080")


@pytest.mark.parametrize(
    ("args", "words"),
    [
        ((), "one PACKAGE.MODULE:ATTRIBUTE"),
        ((TARGET, TARGET), "one PACKAGE.MODULE:ATTRIBUTE"),
        (("tests.fixtures.mcp_serve_server:nothing",), "nothing"),
        (("tests.fixtures.mcp_serve_server:SUM_SCHEMA",), "expected an MCP server"),
        (("no_colon_here",), "package.module:attribute"),
        (("no_such_module_xyz:server",), "no_such_module_xyz"),
        (("--http", "nope", TARGET), "--http expects [HOST:]PORT, got 'nope'"),
        (("--http=nope", TARGET), "--http expects [HOST:]PORT, got 'nope'"),
        ((TARGET, "--http"), "--http expects [HOST:]PORT"),
        (("--http=", TARGET), "--http expects [HOST:]PORT"),
        (("--bogus", TARGET), "unknown option '--bogus'"),
        (("--http", "0", "--max-sessions", "0", TARGET), "--max-sessions expects a positive"),
        (("--http", "0", "--max-body-bytes=1.5", TARGET), "--max-body-bytes expects a positive"),
        (("--http", "0", "--idle-timeout", "inf", TARGET), "--idle-timeout expects a positive"),
        (("--http", "0", "--idle-timeout", "nan", TARGET), "--idle-timeout expects a positive"),
        (("--http", "0", "--request-timeout", "-1", TARGET), "--request-timeout expects"),
        (("--http", "0", TARGET, "--max-sessions"), "--max-sessions expects a positive"),
        (("--max-sessions", "5", TARGET), "--max-sessions only apply with --http"),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(args: tuple[str, ...], words: str) -> None:
    code, written, error = run(*args)
    assert code == ExitCode.USAGE
    assert written == ""
    assert error.startswith("ccwire: error: serve") and words in error.splitlines()[0], error


def test_verbose_flags_are_not_targets() -> None:
    for flag in ("-v", "--verbose"):
        with pytest.raises(UsageError, match=r"serve expects one PACKAGE\.MODULE:ATTRIBUTE"):
            serve_command([flag])


def test_http_on_an_address_in_use_is_a_usage_error() -> None:
    """The port is taken: the OS error becomes one usage line naming the address."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        args = ["--http", f"127.0.0.1:{port}", "--max-sessions", "3", TARGET]
        with pytest.raises(UsageError, match=rf"serve --http 127\.0\.0\.1:{port}: .*in use"):
            serve_command(args)
        code, _, error = run(*args)
    assert code == ExitCode.USAGE
    assert error.startswith(f"ccwire: error: serve --http 127.0.0.1:{port}:")


def test_serves_on_stdin_and_stdout(capfd: pytest.CaptureFixture[str]) -> None:
    """Without --http the server answers on file descriptors 0 and 1 until stdin ends;
    -v is accepted and ignored."""
    saved = os.dup(0)
    read_end, write_end = os.pipe()
    try:
        init, call = initialize(), tools_call(1, "add", {"a": 2, "b": 3.5})
        os.write(write_end, line(init) + line(call))
        os.close(write_end)
        write_end = -1
        os.dup2(read_end, 0)
        assert serve_command(["-v", TARGET]) == 0
    finally:
        os.dup2(saved, 0)
        for fd in (saved, read_end, write_end):
            if fd >= 0:
                os.close(fd)
    answers = {m["id"]: m for m in map(json.loads, capfd.readouterr().out.splitlines())}
    assert sorted(answers) == [0, 1]
    assert answers[0]["result"]["serverInfo"]["name"] == "fixture"
    assert answers[1]["result"]["structuredContent"] == {"sum": 5.5}


def test_what_a_tool_prints_goes_to_stderr_not_into_the_messages(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """A tool that prints, or starts a child process that prints, writes to stderr: the
    messages on stdout stay one JSON-RPC message per line; it reads no client message."""
    saved = os.dup(0)
    read_end, write_end = os.pipe()
    try:
        calls = [tools_call(1, "noisy", {}), tools_call(2, "add", {"a": 1, "b": 2})]
        os.write(write_end, b"".join(map(line, [initialize(), *calls])))
        os.close(write_end)
        write_end = -1
        os.dup2(read_end, 0)
        assert serve_command(["tests.fixtures.mcp_serve_server:noisy_server"]) == 0
    finally:
        os.dup2(saved, 0)
        for fd in (saved, read_end, write_end):
            if fd >= 0:
                os.close(fd)
    out, err = capfd.readouterr()
    answers = {m["id"]: m for m in map(json.loads, out.splitlines())}  # only messages
    assert sorted(answers) == [0, 1, 2]
    assert answers[1]["result"]["content"][0]["text"] == "read from stdin: b''"
    assert answers[2]["result"]["structuredContent"] == {"sum": 3}
    assert "printed by noisy" in err and "printed by a child of noisy" in err


def test_started_with_stderr_closed_what_a_tool_prints_goes_nowhere() -> None:
    """A process whose stderr is closed: what a tool prints is dropped (the tool does
    not fail on it), the messages on stdout are whole."""
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-m", "ccwire", "serve", "tests.fixtures.mcp_serve_server:noisy_server"],
        input=line(initialize()) + line(tools_call(1, "noisy", {})), stdout=subprocess.PIPE,
        cwd=root, env={**os.environ, "PYTHONPATH": os.pathsep.join([str(root / "src"), str(root)])},
        preexec_fn=lambda: os.close(2), timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0
    answers = {m["id"]: m for m in map(json.loads, done.stdout.splitlines())}
    assert answers[1]["result"]["content"][0]["text"] == "read from stdin: b''"
