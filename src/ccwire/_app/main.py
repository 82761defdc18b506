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
import subprocess
import sys
import traceback
from collections.abc import Callable, Mapping, Sequence

from .._batch.errors import (
    BatchConfigError,
    BatchInputError,
    BatchProcessLostError,
    DuplicateTaskIdError,
    ResultsWriteError,
)
from .._core.errors import (
    CcwireError,
    CLINotFoundError,
    ControlTimeoutError,
    OptionsError,
    ProcessError,
)
from .._transport.discovery import ENV_VAR, INSTALL_COMMAND, PINNED_CLI_VERSION, find_cli
from .._version import __version__
from .batch import add_batch_arguments, batch_command
from .batch_report import add_report_arguments, report_command
from .compat import DropInError, add_compat_arguments, compat_command
from .demo import demo_command
from .doctor import (
    AUTH_HINT,
    AuthMissingError,
    check_auth,
    check_cli_version,
    check_packages,
    check_python,
    doctor_exit_code,
    locate_cli,
    print_checks,
    probe_protocol,
)
from .io import EXIT_CODES, CliIO, ExitCode
from .loaders import UsageError
from .run import add_run_arguments, run_command
from .serve import exit_without_abandoned_threads, serve_command
from .sessions import (
    SessionsCommandError,
    add_sessions_arguments,
    add_show_arguments,
    sessions_command,
    show_command,
)

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


_EPILOG = "exit codes:\n" + "\n".join(f"  {int(c):<4} {text}" for c, text in EXIT_CODES.items())


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ccwire",
        description="Drive the Claude Code CLI from Python, with in-process tools.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--version",
        action="store_true",
        help="print ccwire's version, the pinned and the found Claude Code CLI version",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    run = sub.add_parser(
        "run",
        help="run one prompt, streamed live (offline with --offline/--scripted)",
        description="Run one prompt through the Claude Code CLI and stream the conversation.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_run_arguments(run)
    demo = sub.add_parser(
        "demo",
        help="the calculator demo (offline unless ANTHROPIC_API_KEY is set)",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    demo.add_argument(
        "--offline", action="store_true", help="use the scripted model even with an API key"
    )
    out = demo.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print NDJSON events")
    out.add_argument("--plain", action="store_true", help="plain lines, no live status line")
    demo.add_argument("--verbose", "-v", action="store_true", help="print the protocol trace")
    batch = sub.add_parser(
        "batch",
        help="run every task of a JSONL file, resumably, with live progress (or on Ray)",
        description="Run one session per task of TASKS.jsonl; results go to -o as they "
        "finish, and a re-run skips the ids already there. `ccwire batch report RESULTS.jsonl "
        "--html OUT.html` draws a results file as a web page.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_batch_arguments(batch)
    doctor = sub.add_parser(
        "doctor",
        help="check Python, the CLI, the protocol and credentials; print fixes",
        epilog="exit codes: 0 no problems, 1 a check failed, 3 the CLI was not found",
    )
    doctor.add_argument("--cli-path", metavar="PATH", help="check this claude executable")
    doctor.add_argument("--quick", action="store_true", help="skip the offline round trip")
    doctor.add_argument("--json", action="store_true", help="print the report as JSON")

    add_sessions_arguments(
        sub.add_parser("sessions", help="list past sessions (from the CLI's transcripts)")
    )
    add_show_arguments(sub.add_parser("show", help="show one past session (--html: as a web page)"))
    sub.add_parser(
        "serve",
        add_help=False,
        help="serve package.module:server over MCP stdio or HTTP (`ccwire serve --help`)",
    )
    add_compat_arguments(
        sub.add_parser(
            "compat",
            help="install, remove or check the claude_agent_sdk drop-in in this environment",
            description="Make code that imports claude_agent_sdk (and cannot be edited) "
            "run on ccwire: `install` writes a claude_agent_sdk package answered by ccwire "
            "and a claude-agent-sdk distribution into this Python's site-packages.",
        )
    )
    return parser


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
        if io.handle_signals:  # this process is ours to end
            exit_without_abandoned_threads(code, io)
        return code
    parser = _parser()
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
        lambda: int(_COMMANDS[args.command](args, io)),
        io,
        verbose=verbose,
        as_json=as_json,
        name=args.command,
    )


def _guarded(
    command: Callable[[], int], io: CliIO, *, verbose: bool, as_json: bool, name: str
) -> int:
    """Run `command`; turn any failure into its one-line report and exit code, and each
    warning into a ``ccwire: warning: <message>`` line (not Python's file:line form)."""
    try:
        with io.warnings_as_lines():
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


def _ignore_further_interrupts() -> None:
    """Ctrl-C was pressed and the command is ending: a second Ctrl-C (people press it
    twice) must not interrupt the report or the interpreter's exit with a traceback."""
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


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
    leaves: list[BaseException] = []

    def walk(e: BaseException) -> None:
        inner = getattr(e, "exceptions", None)
        if isinstance(e, BaseException) and isinstance(inner, tuple) and inner:
            for sub in inner:
                walk(sub)
        else:
            leaves.append(e)

    walk(exc)
    for wanted in (KeyboardInterrupt, CcwireError):
        for leaf in leaves:
            if isinstance(leaf, wanted):
                return leaf
    for leaf in leaves:
        if not _is_cancellation(leaf):
            return leaf
    return leaves[0] if leaves else exc


def classify(exc: BaseException, command: str = "run") -> tuple[ExitCode, str]:
    """The exit code and the hint for a failure.

    Args:
        exc: The failure (already unwrapped by `root_cause`).
        command: The subcommand that failed, for the usage hint.

    Returns:
        `(exit code, hint)`; the hint may be empty.
    """
    if isinstance(exc, KeyboardInterrupt):
        return ExitCode.INTERRUPTED, ""
    if isinstance(exc, (UsageError, OptionsError)):  # options come from the arguments
        return ExitCode.USAGE, f"see `ccwire {command} --help`"
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
        io.stdout.write(json.dumps(event) + "\n")
        io.stdout.flush()
    return code


def version_report(environ: Mapping[str, str]) -> str:
    """What `ccwire --version` prints: ccwire's version, the pinned and the found CLI.

    Args:
        environ: The environment used to find the CLI (`CCWIRE_CLI_PATH`, `PATH`).

    Returns:
        Three lines of text.
    """
    try:
        cli = find_cli(None, environ=environ)
    except CcwireError:
        found = "not found"
    else:
        try:
            done = subprocess.run(
                [cli, "--version"], capture_output=True, text=True, timeout=30, check=False
            )
            shown = (done.stdout or done.stderr).strip().splitlines()
            found = f"{shown[0] if shown else '?'} ({cli})"
        except (OSError, subprocess.SubprocessError) as exc:
            found = f"{cli} (`--version` failed: {exc})"
    return (
        f"ccwire {__version__}\n"
        f"Claude Code CLI pinned: {PINNED_CLI_VERSION}\n"
        f"Claude Code CLI found: {found}\n"
    )


def _run(args: argparse.Namespace, io: CliIO) -> int:
    return run_command(args, io)


def _batch(args: argparse.Namespace, io: CliIO) -> int:
    return batch_command(args, io)


def _demo(args: argparse.Namespace, io: CliIO) -> int:
    return demo_command(args, io)


def _doctor(args: argparse.Namespace, io: CliIO) -> int:
    import anyio

    checks = [check_python(), *check_packages()]
    found, cli = locate_cli(args.cli_path, io.environ)
    checks.append(found)
    if cli is not None:
        checks.append(check_cli_version(cli))
        if not args.quick:
            checks += anyio.run(probe_protocol, cli)
    checks.append(check_auth(io.environ))
    if not args.json:
        io.stdout.write("ccwire doctor\n")
    print_checks(checks, io.stdout, as_json=args.json)
    return doctor_exit_code(checks)


def _sessions(args: argparse.Namespace, io: CliIO) -> int:
    command = sessions_command if args.command == "sessions" else show_command
    try:
        return command(args, io.stdout, io.environ)
    except SessionsCommandError as exc:
        return report_error(io, exc, ExitCode.ERROR, exc.hint, verbose=False, as_json=False)


def _batch_report(argv: Sequence[str], io: CliIO) -> int:
    parser = argparse.ArgumentParser(
        prog="ccwire batch report",
        description="Draw a batch's results file as one self-contained web page (--html): "
        "durations, cost, tokens and tool calls per task, failures by kind, the slowest and "
        "the most expensive tasks linked to their transcripts; or print its numbers as JSON "
        "(--json).",
    )
    add_report_arguments(parser)
    try:
        args = parser.parse_args(list(argv))
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else ExitCode.USAGE
    return report_command(args, io.stdout, io.stderr)


def _compat(args: argparse.Namespace, io: CliIO) -> int:
    try:
        return compat_command(args, io)
    except DropInError as exc:
        return report_error(io, exc, ExitCode.ERROR, exc.hint, verbose=False, as_json=False)


def _serve(argv: Sequence[str], io: CliIO) -> int:
    return serve_command(argv, io.stdout, io.stderr, handle_signals=io.handle_signals)


_COMMANDS: Mapping[str, Callable[[argparse.Namespace, CliIO], int]] = {
    "run": _run,
    "batch": _batch,
    "demo": _demo,
    "doctor": _doctor,
    "sessions": _sessions,
    "show": _sessions,
    "compat": _compat,
}
