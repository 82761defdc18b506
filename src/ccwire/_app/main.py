"""The ``ccwire`` command line: ``run``, ``batch``, ``demo``, ``doctor`` and ``serve``.

Errors are reported as one line (``ccwire: error: ...``) plus a hint line; ``--verbose``
shows the whole message and, for ``run``, the protocol trace. Exit codes are listed in
`EXIT_CODES` and in ``ccwire --help``.
"""

from __future__ import annotations

import argparse
import enum
import importlib
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import IO

from .._core.errors import (
    CcwireError,
    CLINotFoundError,
    ControlTimeoutError,
    ProcessError,
)

__all__ = ["EXIT_CODES", "CliIO", "ExitCode", "main"]


class ExitCode(enum.IntEnum):
    """Exit codes of the ``ccwire`` command."""

    OK = 0
    ERROR = 1
    USAGE = 2
    CLI_NOT_FOUND = 3
    AUTH_MISSING = 4
    INTERRUPTED = 130


EXIT_CODES: Mapping[ExitCode, str] = {
    ExitCode.OK: "success",
    ExitCode.ERROR: "the run ended with an error result, or a runtime error",
    ExitCode.USAGE: "usage error (bad arguments; --tools or --scripted that cannot be loaded)",
    ExitCode.CLI_NOT_FOUND: "the Claude Code CLI was not found",
    ExitCode.AUTH_MISSING: "no credentials for the real model (set ANTHROPIC_API_KEY or --offline)",
    ExitCode.INTERRUPTED: "interrupted (Ctrl-C)",
}

_EPILOG = "exit codes:\n" + "\n".join(f"  {int(c):<4} {text}" for c, text in EXIT_CODES.items())


@dataclass
class CliIO:
    """Where the command reads and writes (replaced by fakes in tests)."""

    stdin: IO[str]
    stdout: IO[str]
    stderr: IO[str]
    environ: Mapping[str, str]
    handle_signals: bool = False
    """Turn SIGINT into a clean stop with exit code 130 (only for the real process)."""

    @classmethod
    def system(cls) -> CliIO:
        """The process's own streams and environment."""
        return cls(sys.stdin, sys.stdout, sys.stderr, os.environ, handle_signals=True)

    def ask(self, question: str) -> str:
        """Write ``question`` to stderr and read one line; ``EOFError`` at end of input."""
        self.stderr.write(question)
        self.stderr.flush()
        line = self.stdin.readline()
        if not line:
            raise EOFError
        return line.rstrip("\n")


def _parser() -> argparse.ArgumentParser:
    from .batch import add_batch_arguments
    from .run import add_run_arguments

    parser = argparse.ArgumentParser(
        prog="ccwire",
        description="Drive the Claude Code CLI from Python, with in-process tools.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
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
        "finish, and a re-run skips the ids already there.",
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
    sub.add_parser(
        "serve",
        add_help=False,
        help="serve package.module:server over MCP stdio (`ccwire serve --help`)",
    )
    return parser


def main(argv: Sequence[str] | None = None, *, io: CliIO | None = None) -> int:
    """Entry point of ``ccwire`` and ``python -m ccwire``; returns the exit code."""
    io = io or CliIO.system()
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["serve"]:
        return _serve(args_list[1:], io)
    try:
        args = _parser().parse_args(args_list)
    except SystemExit as exc:  # --help, or a usage error already printed by argparse
        return exc.code if isinstance(exc.code, int) else ExitCode.USAGE
    verbose = bool(getattr(args, "verbose", False))
    as_json = bool(getattr(args, "json", False)) and args.command != "doctor"
    try:
        return int(_COMMANDS[args.command](args, io))
    except KeyboardInterrupt:
        io.stderr.write("ccwire: interrupted\n")
        return ExitCode.INTERRUPTED
    except CcwireError as exc:
        code, hint = classify(exc, args.command)
        return report_error(io, exc, code, hint, verbose=verbose, as_json=as_json)


def classify(exc: CcwireError, command: str = "run") -> tuple[ExitCode, str]:
    """The exit code and the hint for an error."""
    from .._batch.errors import BatchConfigError, BatchInputError, DuplicateTaskIdError
    from .doctor import AUTH_HINT, AuthMissingError
    from .loaders import UsageError

    if isinstance(exc, UsageError):
        return ExitCode.USAGE, f"see `ccwire {command} --help`"
    if isinstance(exc, DuplicateTaskIdError):
        return ExitCode.USAGE, "every task needs its own id; fix the task file and run again"
    if isinstance(exc, BatchInputError):
        return ExitCode.USAGE, "fix the line, or drop --strict to skip malformed lines"
    if isinstance(exc, BatchConfigError):
        return ExitCode.USAGE, "nothing ran; see `ccwire batch --help`"
    if isinstance(exc, CLINotFoundError):
        return ExitCode.CLI_NOT_FOUND, (
            "install it with `npm install @anthropic-ai/claude-code` (here: `make cli`) or set "
            "CCWIRE_CLI_PATH; `ccwire doctor` shows where ccwire looked"
        )
    if isinstance(exc, AuthMissingError):
        return ExitCode.AUTH_MISSING, AUTH_HINT
    if isinstance(exc, ProcessError):
        return ExitCode.ERROR, "the CLI stopped; rerun with --verbose for its stderr and the trace"
    if isinstance(exc, ControlTimeoutError):
        return ExitCode.ERROR, "the CLI did not answer in time; `ccwire doctor` checks the setup"
    return ExitCode.ERROR, "rerun with --verbose for the protocol trace"


def report_error(
    io: CliIO, exc: BaseException, code: int, hint: str, *, verbose: bool, as_json: bool
) -> int:
    """Write the error (one line unless verbose) and its hint; return ``code``."""
    text = str(exc) or type(exc).__name__
    message = text if verbose else text.splitlines()[0]
    io.stderr.write(f"ccwire: error: {message}\n")
    if hint:
        io.stderr.write(f"ccwire: hint: {hint}\n")
    io.stderr.flush()
    if as_json:
        event = {"event": "error", "message": message, "hint": hint, "exit_code": int(code)}
        io.stdout.write(json.dumps(event) + "\n")
        io.stdout.flush()
    return code


def _run(args: argparse.Namespace, io: CliIO) -> int:
    from .run import run_command

    return run_command(args, io)


def _batch(args: argparse.Namespace, io: CliIO) -> int:
    from .batch import batch_command

    return batch_command(args, io)


def _demo(args: argparse.Namespace, io: CliIO) -> int:
    from .demo import demo_command

    return demo_command(args, io)


def _doctor(args: argparse.Namespace, io: CliIO) -> int:
    import anyio

    from .doctor import (
        check_auth,
        check_cli_version,
        check_packages,
        check_python,
        doctor_exit_code,
        locate_cli,
        print_checks,
        probe_protocol,
    )

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


def _serve(argv: Sequence[str], io: CliIO) -> int:
    try:
        serve_main = importlib.import_module("ccwire._mcp.serve").serve_main
    except ImportError as exc:
        if exc.name == "ccwire._mcp.serve":
            return report_error(
                io,
                exc.__class__("`ccwire serve` is not available in this version of ccwire"),
                ExitCode.ERROR,
                "upgrade ccwire",
                verbose=False,
                as_json=False,
            )
        return report_error(
            io,
            exc,
            ExitCode.ERROR,
            "install the MCP extra: pip install 'ccwire[mcp]'",
            verbose=False,
            as_json=False,
        )
    try:
        return int(serve_main(argv))
    except KeyboardInterrupt:
        return ExitCode.INTERRUPTED


_COMMANDS: Mapping[str, Callable[[argparse.Namespace, CliIO], int]] = {
    "run": _run,
    "batch": _batch,
    "demo": _demo,
    "doctor": _doctor,
}
