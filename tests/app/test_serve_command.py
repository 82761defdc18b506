"""``ccwire serve``'s command line in process: its help, its usage errors (one line,
and a hint, exit code 2) and a port that cannot be bound.  Serving itself is tested in
tests/mcp (test_serve.py over stdio, test_serve_http*.py over HTTP)."""

from __future__ import annotations

import io
import socket

import pytest

from ccwire._app.main import CliIO, ExitCode, main
from ccwire._app.serve import USAGE, parse_http_address

TARGET = "tests.fixtures.mcp_serve_server:server"


def run(*args: str) -> tuple[int, str, str]:
    """``ccwire serve ARGS``: its exit code, stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    code = main(["serve", *args], io=CliIO(stdin=io.StringIO(), stdout=out, stderr=err, environ={}))
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_is_the_usage_and_loads_nothing(flag: str) -> None:
    assert run("no_such_module_xyz:server", flag) == (0, USAGE, "")


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
        (("--http", "127.0.0.1:65536", TARGET), "--http expects [HOST:]PORT"),
        ((TARGET, "--http"), "--http expects [HOST:]PORT"),
        (("--http=", TARGET), "--http expects [HOST:]PORT"),
        (("--bogus", TARGET), "unknown option '--bogus'"),
        (("--http", "0", "--max-sessions", "0", TARGET), "--max-sessions expects a positive int"),
        (("--http", "0", "--max-body-bytes=1.5", TARGET), "--max-body-bytes expects a positive"),
        (("--http", "0", "--idle-timeout", "inf", TARGET), "--idle-timeout expects a positive num"),
        (("--http", "0", "--idle-timeout", "nan", TARGET), "--idle-timeout expects a positive"),
        (("--http", "0", "--request-timeout", "-1", TARGET), "--request-timeout expects"),
        (("--http", "0", TARGET, "--request-timeout"), "--request-timeout expects"),
        (("--max-sessions", "5", "--idle-timeout=9", TARGET),
         "--max-sessions, --idle-timeout only apply with --http"),
    ],
)  # fmt: skip
def test_usage_errors_are_one_line_and_exit_2(args: tuple[str, ...], words: str) -> None:
    code, out, err = run(*args)
    assert code == ExitCode.USAGE, err
    assert out == ""
    line, *hints = err.splitlines()
    assert line.startswith("ccwire: error: serve") and words in line, line
    assert all(hint.startswith("ccwire: hint: ") for hint in hints), err


def test_addresses_name_a_port_and_a_host_defaulting_to_loopback() -> None:
    assert parse_http_address("8000") == ("127.0.0.1", 8000)
    assert parse_http_address(":0") == ("127.0.0.1", 0)
    assert parse_http_address("0.0.0.0:80") == ("0.0.0.0", 80)
    assert parse_http_address("[::1]:65535") == ("::1", 65535)


def test_a_port_in_use_is_a_usage_error_naming_it() -> None:
    """The limits given are accepted (``-v`` too); binding fails before anything is
    served, and the error names the address and the reason."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, _, err = run(
            "--verbose", "--http", f"127.0.0.1:{port}", "--max-sessions=3",
            "--max-body-bytes", "10",
            "--idle-timeout", "0.5", "--request-timeout=2", TARGET,
        )  # fmt: skip
    assert code == ExitCode.USAGE, err
    error = f"ccwire: error: serve --http 127.0.0.1:{port}: Address already in use"
    assert error in err.splitlines(), err  # after the traceback --verbose asks for
