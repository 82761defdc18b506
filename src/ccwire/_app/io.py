"""What every ``ccwire`` subcommand shares: its streams (`CliIO`) and exit codes."""

from __future__ import annotations

import codecs
import contextlib
import enum
import json
import logging
import os
import sys
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import IO, Any

__all__ = ["EXIT_CODES", "CliIO", "ExitCode", "json_for", "watch_signals"]


class ExitCode(enum.IntEnum):
    """Exit codes of the ``ccwire`` command."""

    OK = 0
    ERROR = 1
    USAGE = 2
    CLI_NOT_FOUND = 3
    AUTH_MISSING = 4
    INTERRUPTED = 130
    OUTPUT_CLOSED = 141
    TERMINATED = 143


EXIT_CODES: Mapping[ExitCode, str] = {
    ExitCode.OK: "success",
    ExitCode.ERROR: "the run ended with an error result, or a runtime error",
    ExitCode.USAGE: "usage error (bad arguments; --tools or --scripted that cannot be loaded)",
    ExitCode.CLI_NOT_FOUND: "the Claude Code CLI was not found",
    ExitCode.AUTH_MISSING: "no credentials for the real model (set ANTHROPIC_API_KEY or --offline)",
    ExitCode.INTERRUPTED: "interrupted (Ctrl-C)",
    ExitCode.OUTPUT_CLOSED: "the output was closed before the end (its reader, e.g. head, quit)",
    ExitCode.TERMINATED: "terminated (SIGTERM)",
}


@dataclass
class CliIO:
    """Where the command reads and writes (replaced by fakes in tests)."""

    stdin: IO[str]
    stdout: IO[str]
    stderr: IO[str]
    environ: Mapping[str, str]
    handle_signals: bool = False
    """Turn SIGINT and SIGTERM into a clean stop with exit code 130 or 143 (only for the
    real process)."""

    @classmethod
    def system(cls) -> CliIO:
        """The process's own streams and environment. A character the terminal's
        encoding cannot show is written as ``?`` (it failed the command)."""
        for stream in (sys.stdout, sys.stderr):
            reconfigure = getattr(stream, "reconfigure", None)  # a text stream's
            if reconfigure is not None:
                reconfigure(errors="replace")
        return cls(sys.stdin, sys.stdout, sys.stderr, os.environ, handle_signals=True)

    @contextlib.contextmanager
    def warnings_as_lines(
        self,
        around: Callable[[], AbstractContextManager[object]] | None = None,
        *,
        verbose: bool = False,
    ) -> Iterator[None]:
        """Show each warning raised inside as one ``ccwire: warning: <message>`` line on
        stderr, not in Python's ``file:line: Category`` form, and each record of the
        ``ccwire`` loggers (WARNING and above; with ``verbose`` also the tracebacks of
        the tools that raised, logged at DEBUG) as ``ccwire: <level>: <message>``;
        ``around`` (a live display's ``suspended``) is entered around each line. Nested,
        the inner one takes over (keeping the outer's ``verbose``)."""

        def write(text: str) -> None:
            with around() if around is not None else contextlib.nullcontext():
                self.stderr.write(text)
                self.stderr.flush()

        def show(message: Warning | str, *args: object, **kwargs: object) -> None:
            write(f"ccwire: warning: {message}\n")

        root = logging.getLogger("ccwire")
        outer = [h for h in root.handlers if isinstance(h, _LogLines)]
        verbose = verbose or any(h.verbose for h in outer)
        handler = _LogLines(write, verbose=verbose)
        tools = logging.getLogger("ccwire.tools")
        tools_level = tools.level
        for old in outer:
            root.removeHandler(old)
        root.addHandler(handler)
        if verbose and not tools.isEnabledFor(logging.DEBUG):
            tools.setLevel(logging.DEBUG)
        try:
            with warnings.catch_warnings():
                warnings.showwarning = show
                yield
        finally:
            tools.setLevel(tools_level)
            root.removeHandler(handler)
            for old in outer:
                root.addHandler(old)

    async def ask(self, question: str) -> str:
        """Write ``question`` to stderr and read one line; ``EOFError`` at end of input.

        The answer is read from stdin's file descriptor without a thread (see
        `read_fd`), so a cancellation (Ctrl-C) ends the wait at once and nothing is
        left reading stdin when the program exits. Bytes typed after the line's end
        are dropped (a terminal hands over one line per read). A stdin without a file
        descriptor (a `StringIO` in tests) is read directly.
        """
        self.stderr.write(question)
        self.stderr.flush()
        try:
            fd = self.stdin.fileno()
        except (OSError, ValueError):  # io.UnsupportedOperation is both
            line = self.stdin.readline()
        else:
            line = await _read_line(fd, getattr(self.stdin, "encoding", None) or "utf-8")
        if not line:
            raise EOFError
        return line.rstrip("\r\n")


class _LogLines(logging.Handler):
    """Writes each ``ccwire`` log record as ``ccwire: <level>: <message>`` (and its
    traceback, indented), through ``write``."""

    def __init__(self, write: Callable[[str], None], *, verbose: bool) -> None:
        super().__init__(logging.DEBUG if verbose else logging.WARNING)
        self.write = write
        self.verbose = verbose

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage().removeprefix("ccwire: ")
            text = f"ccwire: {record.levelname.lower()}: {message}\n"
            if record.exc_info:
                trace = record.exc_text or logging.Formatter().formatException(record.exc_info)
                text += "".join(f"  {line}\n" for line in trace.splitlines())
            self.write(text)
        except Exception:  # a record that cannot be shown must not fail the command
            self.handleError(record)


async def _read_line(fd: int, encoding: str) -> str:
    """One line from ``fd`` (with its newline; ``""`` at end of input)."""
    from .._core.fdread import read_fd

    data = b""
    while b"\n" not in data:
        chunk = await read_fd(fd, 4096)
        if not chunk:
            break
        data += chunk
    return data.split(b"\n", 1)[0].decode(encoding, errors="replace") + (
        "\n" if b"\n" in data else ""
    )


def json_for(out: IO[str], value: Any, **options: Any) -> str:
    """``value`` as JSON text to write on ``out``: non-ASCII characters as they are
    where ``out`` is UTF-8, else as ``\\uXXXX`` escapes, so that a terminal whose encoding
    cannot show them (an ASCII or Latin-1 one, whose writes replace them by ``?``)
    still gets every character of the JSON.
    """
    encoding = getattr(out, "encoding", None) or "utf-8"
    try:
        utf8 = codecs.lookup(encoding).name == "utf-8"
    except LookupError:
        utf8 = False
    return json.dumps(value, ensure_ascii=not utf8, **options)


async def watch_signals(on_signal: Callable[[int], None]) -> None:
    """Call ``on_signal`` with each Ctrl-C (SIGINT) or SIGTERM until cancelled; return at
    once where signals cannot be received (not the main thread, Windows)."""
    import signal

    import anyio  # loaded by the commands that run anything

    try:
        receiver = anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM)
    except (NotImplementedError, RuntimeError, ValueError):
        return
    with receiver as signals:
        async for signum in signals:
            on_signal(int(signum))
