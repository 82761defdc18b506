"""The ``ccwire`` entry point in-process: how a failure is found inside exception groups,
how it is reported, and the subcommands' own argument errors (``--version`` and each
failure's exit code and hint: ``test_cli_version.py``)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ccwire import CcwireError, ProcessError
from ccwire._app.main import _guarded, main, report_error, root_cause
from tests.fixtures.cli_io import err, make_io, out

if sys.version_info < (3, 11):  # anyio's dependency there
    from exceptiongroup import (  # type: ignore[import-not-found,unused-ignore]
        BaseExceptionGroup,
        ExceptionGroup,
    )


# ------------------------------------------------------------------ finding the failure


def test_the_failure_inside_exception_groups() -> None:
    cancelled = asyncio.CancelledError()
    bug = ValueError("a bug")
    ours = CcwireError("ours")
    interrupt = KeyboardInterrupt()
    # a ccwire error wins over another failure, however deep
    assert root_cause(ExceptionGroup("g", [bug, ExceptionGroup("h", [ours])])) is ours
    # Ctrl-C wins over everything
    assert root_cause(BaseExceptionGroup("g", [ours, ExceptionGroup("h", [bug]), interrupt])) is (
        interrupt
    )
    # a cancellation is only the echo of the failure
    assert root_cause(BaseExceptionGroup("g", [cancelled, bug])) is bug
    assert root_cause(BaseExceptionGroup("g", [cancelled])) is cancelled  # nothing else
    assert root_cause(bug) is bug


# ----------------------------------------------------------------------- the one report


def test_a_bug_is_one_line_with_the_exception_type() -> None:
    def bug() -> int:
        raise ExceptionGroup("task group", [KeyError("k")])

    cli_io = make_io()
    assert _guarded(bug, cli_io, verbose=False, as_json=False, name="run") == 1
    assert err(cli_io).splitlines() == [
        "ccwire: error: KeyError: 'k'",
        "ccwire: hint: this looks like a bug in ccwire: rerun with --verbose for the traceback",
    ]

    def nameless() -> int:
        raise RuntimeError

    cli_io = make_io()
    assert _guarded(nameless, cli_io, verbose=False, as_json=True, name="run") == 1
    assert err(cli_io).splitlines()[0] == "ccwire: error: RuntimeError"
    assert '"message": "RuntimeError"' in out(cli_io)


def test_ccwire_log_records_are_lines_on_the_commands_stderr() -> None:
    """A tool that raised (logged on ``ccwire.tools``) is shown by every command, once,
    on its own stderr and around the live display; its traceback only with --verbose."""
    suspended: list[str] = []

    @contextlib.contextmanager
    def around() -> Iterator[None]:
        suspended.append("display")
        yield

    def command() -> int:
        with cli_io.warnings_as_lines(around):  # `ccwire run`'s, inside main's
            logging.getLogger("ccwire.tools").warning("ccwire: tool 'div' raised X: y")
            try:
                _ = 1 / 0
            except ZeroDivisionError as exc:
                logging.getLogger("ccwire.tools").debug("the traceback:", exc_info=exc)
            logging.getLogger("ccwire.other").info("not shown")
        return 0

    cli_io = make_io()
    assert _guarded(command, cli_io, verbose=False, as_json=False, name="run") == 0
    assert err(cli_io) == "ccwire: warning: tool 'div' raised X: y\n"
    assert suspended == ["display"]
    cli_io = make_io()
    assert _guarded(command, cli_io, verbose=True, as_json=False, name="run") == 0
    lines = err(cli_io).splitlines()
    assert lines[:3] == [
        "ccwire: warning: tool 'div' raised X: y",
        "ccwire: debug: the traceback:",
        "  Traceback (most recent call last):",
    ]
    assert lines[-1] == "  ZeroDivisionError: division by zero"
    assert not logging.getLogger("ccwire.tools").isEnabledFor(logging.DEBUG)  # restored
    assert not [h for h in logging.getLogger("ccwire").handlers if type(h).__name__ == "_LogLines"]


def test_an_exit_is_never_reported_as_a_failure() -> None:
    def exits() -> int:
        raise SystemExit(7)

    def exits_in_a_group() -> int:
        raise BaseExceptionGroup("g", [asyncio.CancelledError(), SystemExit(8)])

    for command, code in ((exits, 7), (exits_in_a_group, None)):
        cli_io = make_io()
        with pytest.raises((SystemExit, BaseExceptionGroup)) as raised:
            _guarded(command, cli_io, verbose=False, as_json=False, name="run")
        if code is not None:
            assert isinstance(raised.value, SystemExit) and raised.value.code == code
        assert err(cli_io) == ""


def test_the_clis_stderr_is_shown_once_under_the_first_line() -> None:
    exc = ProcessError("the Claude Code CLI exited", exit_code=3, stderr="a\nb\nfatal")
    cli_io = make_io()
    report_error(cli_io, exc, 1, "", verbose=False, as_json=True)
    assert err(cli_io).splitlines() == [
        "ccwire: error: the Claude Code CLI exited (exit code: 3)",
        "ccwire: the CLI's stderr ended with:",
        "  | a",
        "  | b",
        "  | fatal",
    ]
    assert '"stderr": "a\\nb\\nfatal"' in out(cli_io)


# ------------------------------------------------------------------------- subcommands


def test_batch_report_argument_errors_exit_2() -> None:
    cli_io = make_io()
    assert main(["batch", "report", "results.jsonl"], io=cli_io) == 2  # no --html, no --json
    assert "--html OUT.html, --json, or both" in err(cli_io)


def test_batch_report_that_cannot_be_written(tmp_path: Path) -> None:
    results = tmp_path / "o.jsonl"
    results.write_text('{"id": "a", "ok": true}\n')
    (tmp_path / "taken").write_text("")  # a file where the report's folder would be
    cli_io = make_io()
    code = main(["batch", "report", str(results), "--html", str(tmp_path / "taken" / "r.html")],
                io=cli_io)  # fmt: skip
    assert code == 1
    lines = err(cli_io).splitlines()
    assert lines[0].startswith("ccwire: error: NotADirectoryError: ") and len(lines) == 2
    assert lines[1] == "ccwire: hint: rerun with --verbose for the traceback"


def test_demo_without_a_cli_exits_3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    cli_io = make_io(env={"PATH": str(tmp_path), "HOME": str(tmp_path)})
    assert main(["demo"], io=cli_io) == 3
    assert err(cli_io).startswith("ccwire: error: ")


def test_ctrl_c_reported_from_another_thread_leaves_the_signals_alone() -> None:
    """`main` run from a thread (an embedding program): the report cannot touch SIGINT."""
    import signal
    import threading

    def interrupted() -> int:
        raise KeyboardInterrupt

    before = signal.getsignal(signal.SIGINT)
    cli_io = make_io()
    cli_io.handle_signals = True
    codes: list[int] = []
    thread = threading.Thread(
        target=lambda: codes.append(
            _guarded(interrupted, cli_io, verbose=False, as_json=False, name="run")
        )
    )
    thread.start()
    thread.join(30)
    assert codes == [130] and err(cli_io) == "ccwire: error: interrupted (Ctrl-C)\n"
    assert signal.getsignal(signal.SIGINT) is before
