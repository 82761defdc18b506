"""The `ccwire` command line: `run`, `batch`, `demo`, `doctor`, `sessions`, `show`, `serve`
and `compat`.

Every failure is reported as one line (`ccwire: error: <cause>`), the CLI's stderr tail
when there is one, and an optional `ccwire: hint: <fix>` line; with `--json` it is also
the last NDJSON event (`{"type": "error", ...}`). Exception groups from task groups are
unwrapped to the real cause. `--verbose` adds the traceback and, for `run`, the
protocol trace. Exit codes are listed in `EXIT_CODES` and in `ccwire --help`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from collections.abc import Callable, Mapping, Sequence

from .._batch.errors import (
    BatchConfigError,
    BatchInputError,
    BatchProcessLostError,
    DuplicateTaskIdError,
    ResultsWriteError,
    TaskFileChangedError,
)
from .._core.errors import (
    CcwireError,
    CLINotFoundError,
    ControlTimeoutError,
    OptionsError,
    ProcessError,
)
from .._core.groups import leaves
from .._transport.discovery import (
    ENV_VAR,
    INSTALL_COMMAND,
    PINNED_CLI_VERSION,
    cli_version_output,
    find_cli,
)
from .._version import __version__
from . import commands
from .arguments import SERVE_USAGE, batch_report_parser, build_parser
from .errors import (
    AUTH_HINT,
    AuthMissingError,
    DropInError,
    ReportWriteError,
    SessionsCommandError,
    Terminated,
    UsageError,
)
from .io import EXIT_CODES, CliIO, ExitCode

__all__ = [
    "EXIT_CODES",
    "CliIO",
    "ExitCode",
    "classify",
    "main",
    "report_error",
    "root_cause",
    "version_report",
]

_STDERR_TAIL_LINES = 10


def main(argv: Sequence[str] | None = None, *, io: CliIO | None = None) -> int:
    """Entry point of `ccwire` and `python -m ccwire`; returns the exit code.

    Args:
        argv: The arguments (default: `sys.argv[1:]`).
        io: The streams and environment (default: the process's own).

    Returns:
        The exit code, one of `ExitCode`.
    """
    io = io or CliIO.system()
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:2] == ["batch", "report"]:
        return _guarded(
            lambda: _batch_report(args_list[2:], io), io, verbose=False, as_json=False,
            name="batch report",
        )  # fmt: skip
    if args_list[:1] == ["serve"]:
        verbose = any(a in ("--verbose", "-v") for a in args_list[1:])
        code = _guarded(
            lambda: _serve(args_list[1:], io), io, verbose=verbose, as_json=False, name="serve"
        )
        if io.handle_signals and "ccwire._app.serve" in sys.modules:  # it served: ours to end
            commands.exit_without_abandoned_threads(code, io)
        return code
    parser = build_parser()
    try:
        args = parser.parse_args(args_list)
        if args.version:
            io.stdout.write(version_report(io.environ))
            return ExitCode.OK
        if args.command is None:
            parser.error(
                "a COMMAND is required (run, batch, demo, doctor, sessions, show, serve, compat)"
            )
    except SystemExit as exc:  # --help, or a usage error already printed by argparse
        return exc.code if isinstance(exc.code, int) else ExitCode.USAGE
    verbose = bool(getattr(args, "verbose", False))
    as_json = bool(getattr(args, "json", False)) and args.command != "doctor"
    return _guarded(
        lambda: _command(args, io),
        io,
        verbose=verbose,
        as_json=as_json,
        name=args.command,
    )


def _command(args: argparse.Namespace, io: CliIO) -> int:
    if io.handle_signals:
        _terminate_as_interrupted()
    return int(_COMMANDS[args.command](args, io))


def _guarded(
    command: Callable[[], int], io: CliIO, *, verbose: bool, as_json: bool, name: str
) -> int:
    """Run `command`; turn any failure into its one-line report and exit code, and each
    warning into a ``ccwire: warning: <message>`` line (not Python's file:line form)."""
    try:
        with io.warnings_as_lines(verbose=verbose):
            return command()
    except (SystemExit, GeneratorExit):
        raise
    except BaseException as exc:  # every failure of a command is reported, none escapes
        cause = root_cause(exc)
        if isinstance(cause, (SystemExit, GeneratorExit)):
            raise
        if isinstance(cause, BrokenPipeError):
            return _output_closed(io)
        if isinstance(cause, KeyboardInterrupt) and io.handle_signals:
            _ignore_further_interrupts()
        if verbose:
            io.stderr.write("".join(traceback.format_exception(exc)))
        code, hint = classify(cause, name)
        return report_error(io, cause, code, hint, verbose=verbose, as_json=as_json)


def _output_closed(io: CliIO) -> int:
    """The reader of the output has gone (``ccwire sessions | head -1``): end quietly with
    the exit code of a command that SIGPIPE ended, and nothing more on the closed pipe."""
    if io.handle_signals:  # this process's stdout: the interpreter's last flush must not fail
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    return ExitCode.OUTPUT_CLOSED


def _terminate_as_interrupted() -> None:
    """SIGTERM (``kill``, ``timeout``, a service manager) stops a command as Ctrl-C does:
    `Terminated` (a `KeyboardInterrupt`) is raised, the command's cleanup runs (its CLI
    is stopped) and it is reported with exit code 143; not the default action, which
    ended the process at once and left its CLI running. The commands that wait on the
    event loop take the signal there themselves (``run``, ``batch``); a SIGTERM that is
    ignored, or handled by whoever started ccwire in-process, is left as it is."""
    import signal
    import threading

    def terminate(signum: int, frame: object) -> None:
        raise Terminated

    main_thread = threading.current_thread() is threading.main_thread()
    if main_thread and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, terminate)


def _ignore_further_interrupts() -> None:
    """Ctrl-C (or SIGTERM) stopped the command and it is ending: a second signal (people
    press Ctrl-C twice) must not interrupt the report or the interpreter's exit with a
    traceback."""
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)


def _is_cancellation(exc: BaseException) -> bool:
    name = type(exc).__name__
    return name in ("CancelledError", "Cancelled") and not isinstance(exc, Exception)


def root_cause(exc: BaseException) -> BaseException:
    """The real failure inside `exc`: exception groups (from task groups) are unwrapped.

    A `KeyboardInterrupt` anywhere wins; then the first ccwire error; then the first
    other exception that is not a cancellation.

    Args:
        exc: What the command raised.

    Returns:
        The leaf exception to report.
    """
    found = leaves(exc)
    for wanted in (KeyboardInterrupt, CcwireError):
        for leaf in found:
            if isinstance(leaf, wanted):
                return leaf
    for leaf in found:
        if not _is_cancellation(leaf):
            return leaf
    return found[0]


def classify(exc: BaseException, command: str = "run") -> tuple[ExitCode, str]:
    """The exit code and the hint for a failure.

    Args:
        exc: The failure (already unwrapped by `root_cause`).
        command: The subcommand that failed, for the usage hint.

    Returns:
        `(exit code, hint)`; the hint may be empty.
    """
    if isinstance(exc, Terminated):
        return ExitCode.TERMINATED, ""
    if isinstance(exc, KeyboardInterrupt):
        return ExitCode.INTERRUPTED, ""
    if isinstance(exc, (UsageError, OptionsError)):  # options come from the arguments
        return ExitCode.USAGE, f"see `ccwire {command} --help`"
    if isinstance(exc, TaskFileChangedError):
        return ExitCode.ERROR, (
            "every result written before is kept; leave the task file as it is while its batch runs"
        )
    if isinstance(exc, DuplicateTaskIdError):
        return ExitCode.USAGE, "every task needs its own id; fix the task file and run again"
    if isinstance(exc, BatchInputError):
        return ExitCode.USAGE, "fix the line, or drop --strict to skip malformed lines"
    if isinstance(exc, BatchConfigError):
        return ExitCode.USAGE, "nothing ran; see `ccwire batch --help`"
    if isinstance(exc, BatchProcessLostError):
        return ExitCode.ERROR, "every result written before is kept"
    if isinstance(exc, ResultsWriteError):
        return ExitCode.ERROR, (
            "every result written before is kept; fix the cause, then run the same command "
            "again to run the rest"
        )
    if isinstance(exc, ReportWriteError):
        return ExitCode.ERROR, exc.hint
    if isinstance(exc, CLINotFoundError):
        return ExitCode.CLI_NOT_FOUND, (
            f"install it with `{INSTALL_COMMAND}` or set {ENV_VAR} to the executable; "
            "`ccwire doctor` shows where ccwire looked"
        )
    if isinstance(exc, AuthMissingError):
        return ExitCode.AUTH_MISSING, AUTH_HINT
    if isinstance(exc, ProcessError):
        return ExitCode.ERROR, (
            "the Claude Code CLI stopped; `ccwire doctor` checks it, --verbose shows the trace"
        )
    if isinstance(exc, ControlTimeoutError):
        return ExitCode.ERROR, "the CLI did not answer in time; `ccwire doctor` checks the setup"
    if isinstance(exc, CcwireError):
        return ExitCode.ERROR, "rerun with --verbose for the protocol trace"
    if isinstance(exc, OSError):
        return ExitCode.ERROR, "rerun with --verbose for the traceback"
    return ExitCode.ERROR, "this looks like a bug in ccwire: rerun with --verbose for the traceback"


def _describe(exc: BaseException) -> tuple[str, str]:
    """`(cause, stderr tail)` of a failure: the cause is one line."""
    if isinstance(exc, Terminated):
        return "terminated (SIGTERM)", ""
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted (Ctrl-C)", ""
    stderr = getattr(exc, "stderr", "") if isinstance(exc, ProcessError) else ""
    text = str(exc)  # a ProcessError's stderr follows its first line: the tail shows it
    first = text.strip().splitlines()[0] if text.strip() else ""
    if not isinstance(exc, CcwireError):
        first = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
    tail = "\n".join(str(stderr).strip().splitlines()[-_STDERR_TAIL_LINES:]) if stderr else ""
    return first, tail


def report_error(
    io: CliIO, exc: BaseException, code: int, hint: str, *, verbose: bool, as_json: bool
) -> int:
    """Write the failure as `ccwire: error: <cause>` (the whole message when verbose), the
    CLI's stderr tail, the hint, and with `as_json` a final `{"type": "error"}` event.

    Args:
        io: Where to write.
        exc: The failure.
        code: Its exit code.
        hint: What to do about it (may be empty).
        verbose: Write the whole message, not only its first line.
        as_json: Also write the NDJSON error event to stdout.

    Returns:
        `code`.
    """
    message, tail = _describe(exc)
    if verbose and not isinstance(exc, KeyboardInterrupt) and str(exc).strip():
        message = str(exc).strip()
        tail = ""  # already in the whole message
    io.stderr.write(f"ccwire: error: {message}\n")
    if tail:
        io.stderr.write("ccwire: the CLI's stderr ended with:\n")
        io.stderr.write("".join(f"  | {line}\n" for line in tail.splitlines()))
    if hint:
        io.stderr.write(f"ccwire: hint: {hint}\n")
    io.stderr.flush()
    if as_json:
        event = {
            "type": "error",
            "event": "error",
            "message": message,
            "hint": hint,
            "exit_code": int(code),
            "stderr": tail or None,
        }
        try:
            io.stdout.write(json.dumps(event) + "\n")
            io.stdout.flush()
        except OSError:  # stdout cannot take it (a full disk): the error is on stderr
            return code
    return code


def version_report(environ: Mapping[str, str]) -> str:
    """What `ccwire --version` prints: ccwire's version, the pinned and the found CLI.

    Args:
        environ: The environment used to find the CLI (`CCWIRE_CLI_PATH`, `PATH`).

    Returns:
        Three lines of text.
    """
    import subprocess

    try:
        cli = find_cli(None, environ=environ)
    except CcwireError:
        found = "not found"
    else:
        try:
            shown = cli_version_output(cli)[1].splitlines()
            found = f"{shown[0] if shown else '?'} ({cli})"
        except (OSError, subprocess.SubprocessError) as exc:
            found = f"{cli} (`--version` failed: {exc})"
    return (
        f"ccwire {__version__}\n"
        f"Claude Code CLI pinned: {PINNED_CLI_VERSION}\n"
        f"Claude Code CLI found: {found}\n"
    )


def _sessions(args: argparse.Namespace, io: CliIO) -> int:
    command = commands.sessions_command if args.command == "sessions" else commands.show_command
    try:
        return command(args, io.stdout, io.environ)
    except SessionsCommandError as exc:
        return report_error(io, exc, ExitCode.ERROR, exc.hint, verbose=False, as_json=False)


def _batch_report(argv: Sequence[str], io: CliIO) -> int:
    if io.handle_signals:
        _terminate_as_interrupted()
    try:
        args = batch_report_parser().parse_args(list(argv))
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else ExitCode.USAGE
    return commands.report_command(args, io.stdout, io.stderr)


def _compat(args: argparse.Namespace, io: CliIO) -> int:
    try:
        return commands.compat_command(args, io)
    except DropInError as exc:
        return report_error(io, exc, ExitCode.ERROR, exc.hint, verbose=False, as_json=False)


def _serve(argv: Sequence[str], io: CliIO) -> int:
    if any(a in ("-h", "--help") for a in argv):
        io.stdout.write(SERVE_USAGE)
        return ExitCode.OK
    return commands.serve_command(argv, io.stdout, io.stderr, handle_signals=io.handle_signals)


_COMMANDS: Mapping[str, Callable[[argparse.Namespace, CliIO], int]] = {
    "run": lambda args, io: commands.run_command(args, io),
    "batch": lambda args, io: commands.batch_command(args, io),
    "demo": lambda args, io: commands.demo_command(args, io),
    "doctor": lambda args, io: commands.doctor_command(args, io),
    "sessions": _sessions,
    "show": _sessions,
    "compat": _compat,
}
