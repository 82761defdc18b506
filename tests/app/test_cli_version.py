"""`ccwire --version` (ccwire's version, the pinned CLI, the CLI found and what it says
of itself) and the exit code and hint each kind of failure maps to."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from ccwire import CcwireError, ControlTimeoutError, __version__
from ccwire._app.main import CliIO, ExitCode, classify, main
from ccwire._transport.discovery import PINNED_CLI_VERSION
from ccwire.batch import (
    BatchConfigError,
    BatchInputError,
    DuplicateTaskIdError,
    ResultsWriteError,
)


def version(environ: dict[str, str]) -> tuple[int, str]:
    stdout = io.StringIO()
    cli_io = CliIO(stdin=io.StringIO(), stdout=stdout, stderr=io.StringIO(), environ=environ)
    code = main(["--version"], io=cli_io)
    return code, stdout.getvalue()


def script(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def test_version_names_ccwire_the_pinned_and_the_found_cli(tmp_path: Path) -> None:
    cli = script(tmp_path / "claude", 'echo "9.9.9 (Claude Code)"\n')
    code, shown = version({"CCWIRE_CLI_PATH": str(cli)})
    assert code == ExitCode.OK
    assert shown == (
        f"ccwire {__version__}\n"
        f"Claude Code CLI pinned: {PINNED_CLI_VERSION}\n"
        f"Claude Code CLI found: 9.9.9 (Claude Code) ({cli})\n"
    )


def test_version_without_a_cli_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no node_modules/.bin/claude above it either
    code, shown = version({"PATH": str(tmp_path / "bin"), "HOME": str(tmp_path)})
    assert code == ExitCode.OK
    assert shown.endswith("Claude Code CLI found: not found\n")


def test_version_of_a_cli_that_says_nothing_or_cannot_run(tmp_path: Path) -> None:
    silent = script(tmp_path / "silent", "exit 3\n")
    assert version({"CCWIRE_CLI_PATH": str(silent)})[1].endswith(f"found: ? ({silent})\n")
    broken = script(tmp_path / "broken", "")
    broken.write_bytes(b"\x7fELF not really")  # executable, but not a program
    shown = version({"CCWIRE_CLI_PATH": str(broken)})[1]
    assert shown.startswith(f"ccwire {__version__}\n")
    assert f"found: {broken} (`--version` failed: " in shown
    garbled = script(tmp_path / "garbled", "printf '\\377\\376 2.1.330'\n")
    code, shown = version({"CCWIRE_CLI_PATH": str(garbled)})  # raised UnicodeDecodeError
    assert code == ExitCode.OK and shown.endswith(f" 2.1.330 ({garbled})\n")


@pytest.mark.parametrize(
    ("exc", "code", "hint"),
    [
        (KeyboardInterrupt(), ExitCode.INTERRUPTED, ""),
        (DuplicateTaskIdError("a"), ExitCode.USAGE, "every task needs its own id"),
        (BatchConfigError("x"), ExitCode.USAGE, "nothing ran"),
        (BatchInputError("bad", line=2), ExitCode.USAGE, "drop --strict"),
        (
            ResultsWriteError("out.jsonl", OSError(28, "No space left")),
            ExitCode.ERROR,
            "every result written before is kept",
        ),
        (ControlTimeoutError("initialize", 60), ExitCode.ERROR, "did not answer in time"),
        (CcwireError("x"), ExitCode.ERROR, "--verbose for the protocol trace"),
        (OSError("x"), ExitCode.ERROR, "--verbose for the traceback"),
        (RuntimeError("x"), ExitCode.ERROR, "looks like a bug in ccwire"),
    ],
)
def test_each_failure_has_its_exit_code_and_hint(
    exc: BaseException, code: ExitCode, hint: str
) -> None:
    got_code, got_hint = classify(exc, "batch")
    assert got_code == code
    assert hint in got_hint and bool(got_hint) == bool(hint)
