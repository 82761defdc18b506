"""``ccwire serve [--drain-timeout S] [--otel] [--http [HOST:]PORT [LIMITS]] MODULE:ATTRIBUTE``.

Loads the target like ``ccwire run --tools`` (the current directory first; ccwire SDK
servers and servers of the official ``mcp`` package alike) and serves it over stdio,
or over Streamable HTTP with ``--http``; with ``--otel`` each request is a span
exported over OTLP (`TracedServer`).  Usage errors raise `UsageError`, which
the command line reports as one ``ccwire: error: ...`` line (exit code 2).
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final

import anyio

from .._mcp.serve import DRAIN_SECONDS, serve_stdio
from .._mcp.threads import abandoned_threads
from .arguments import SERVE_USAGE as USAGE
from .errors import utf8_text
from .io import CliIO, ExitCode
from .loaders import UsageError, load_server
from .otel import exporting, start_otel

__all__ = ["USAGE", "exit_without_abandoned_threads", "parse_http_address", "serve_command"]

_LOOPBACK: Final = "127.0.0.1"
_LIMITS: Final[dict[str, tuple[str, type[int] | type[float]]]] = {
    "--max-body-bytes": ("max_body_bytes", int),
    "--max-sessions": ("max_sessions", int),
    "--max-connections": ("max_connections", int),
    "--idle-timeout": ("idle_timeout", float),
    "--request-timeout": ("request_timeout", float),
    "--resume-timeout": ("resume_timeout", float),
    "--drain-timeout": ("drain_timeout", float),
}


def parse_http_address(value: str) -> tuple[str, int]:
    """``"PORT"``, ``"HOST:PORT"`` or ``"[V6]:PORT"`` as ``(host, port)``."""
    host, sep, port = value.rpartition(":")
    if not sep:
        host, port = _LOOPBACK, value
    host = utf8_text(host.strip("[]"), "serve --http's HOST") or _LOOPBACK
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise UsageError(f"serve --http expects [HOST:]PORT, got {value!r}")
    return host, int(port)


def _parse(argv: Sequence[str]) -> tuple[str, tuple[str, int] | None, dict[str, Any], bool]:
    """The target, the HTTP address, the HTTP limits given (`HttpLimits` fields) and
    whether ``--otel`` was given."""
    args = list(argv)
    http: tuple[str, int] | None = None
    otel = False
    limits: dict[str, float] = {}
    targets: list[str] = []
    while args:
        arg = args.pop(0)
        name = arg.partition("=")[0]
        if name == "--http" or name in _LIMITS:
            value = arg.partition("=")[2] if "=" in arg else (args.pop(0) if args else "")
            if name == "--http":
                if not value:
                    raise UsageError("serve --http expects [HOST:]PORT")
                http = parse_http_address(value)
            else:
                limits[name] = _limit(name, value)
        elif arg in ("-v", "--verbose"):
            continue
        elif arg == "--otel":
            otel = True
        elif arg.startswith("-"):
            raise UsageError(f"serve: unknown option {arg!r} (see `ccwire serve --help`)")
        else:
            targets.append(arg)
    if len(targets) != 1:
        raise UsageError("serve expects one PACKAGE.MODULE:ATTRIBUTE (see `ccwire serve --help`)")
    http_only = [name for name in limits if name != "--drain-timeout"]
    if http_only and http is None:
        raise UsageError(f"serve: {', '.join(http_only)} only apply with --http")
    return targets[0], http, {_LIMITS[name][0]: value for name, value in limits.items()}, otel


def _limit(option: str, value: str) -> float:
    kind = _LIMITS[option][1]
    what = "a positive integer" if kind is int else "a positive number of seconds"
    try:
        number = kind(value)
    except ValueError:
        number = 0
    if not 0 < number < float("inf"):
        raise UsageError(f"serve {option} expects {what}, got {value!r}")
    return number


def serve_command(
    argv: Sequence[str], stdout: Any = None, stderr: Any = None, *, handle_signals: bool = False
) -> int:
    """Run ``ccwire serve``; returns the exit code (raises `UsageError`): 1 when stdin
    ended or the server was stopped (Ctrl-C, SIGTERM) while requests ran that did not
    finish within `DRAIN_SECONDS` (``--drain-timeout``) after it. Stopped cleanly by
    Ctrl-C, the command line reports the interrupt (130), as for every command; by
    SIGTERM, the process ends as that signal ends it (143 in a shell).  On stdio the
    signals are handled only with ``handle_signals`` (the process's own main thread);
    over HTTP uvicorn handles them.  On stdio, a client that closed stdout ends it with
    `BrokenPipeError` (the command line's exit code 141); what tools print goes to
    stderr."""
    target, http, limits, otel = _parse(argv)
    server = load_server(target, option="serve")["instance"]
    if not otel:
        return _serve(server, http, limits, stderr, handle_signals)
    telemetry = start_otel(True, False)  # the global providers, OTLP
    from .serve_telemetry import TracedServer  # OpenTelemetry is there: imported now

    traced = TracedServer(server, "pipe" if http is None else "tcp")
    with exporting(telemetry) as close:  # closed before a signal that stopped it ends it
        return _serve(traced, http, limits, stderr, handle_signals, on_end=close)


def _serve(
    server: Any,
    http: tuple[str, int] | None,
    limits: dict[str, Any],
    stderr: Any,
    handle_signals: bool,
    *,
    on_end: Callable[[], object] | None = None,
) -> int:
    if http is not None:
        try:
            from .._mcp.http import HttpLimits, raise_fd_limit, serve_http
        except ImportError as exc:
            missing = (exc.name or "?").split(".")[0]
            raise UsageError(
                f"serve --http needs the HTTP extra ({missing}): pip install 'ccwire[http]'"
            ) from exc
        host, port = http
        raise_fd_limit()  # room for as many connections as the system allows
        drain = HttpLimits(**limits).drain_timeout
        guard = _StuckGuard(drain, stderr)
        serve = functools.partial(
            serve_http,
            server,
            host,
            port,
            announce=sys.stderr,
            limits=HttpLimits(**limits),
            on_end=guard.then(on_end),
            on_drain=guard.arm,
        )
        try:
            cut_off = anyio.run(serve)
        except OSError as exc:
            raise UsageError(f"serve --http {host}:{port}: {exc.strerror or exc}") from exc
        finally:
            guard.disarm()
        return _cut_off("stopped", cut_off, drain, stderr)

    # Stopped cleanly by Ctrl-C, KeyboardInterrupt is raised here: the command line
    # reports it (exit code 130); stdin is read without a thread (`read_fd`), so
    # nothing is left waiting on it.
    drain = limits.get("drain_timeout", DRAIN_SECONDS)
    guard = _StuckGuard(drain, stderr)
    with _protocol_stdio() as (stdin_fd, stdout_fd):
        serve = functools.partial(
            serve_stdio, server, stdin=stdin_fd, stdout=stdout_fd, drain_seconds=drain,
            handle_signals=handle_signals, announce=stderr or sys.stderr,
            on_end=guard.then(on_end), on_drain=guard.arm,
        )  # fmt: skip
        try:
            cut_off = anyio.run(serve)
        finally:
            guard.disarm()
    return _cut_off("stopped (end of stdin or a signal)", cut_off, drain, stderr)


STUCK_SECONDS = 5.0
"""How long the calls cut off at the end of the drain get to end, after it: a tool that
ignores its cancellation never ends, and the process exits without it (exit code 1)."""


class _StuckGuard:
    """Exits the process (`_exit_stuck`) when serving has not ended ``drain`` +
    `STUCK_SECONDS` after the drain began (`arm`): a task that ignores its cancellation
    cannot be left, and would hold the process for ever."""

    def __init__(self, drain: float, stderr: Any) -> None:
        self._drain, self._stderr = drain, stderr
        self._timer: threading.Timer | None = None

    def arm(self) -> None:
        """The drain began (called in the event loop's thread)."""
        if self._timer is None:
            self._timer = threading.Timer(
                self._drain + STUCK_SECONDS, _exit_stuck, (self._drain, self._stderr)
            )
            self._timer.daemon = True
            self._timer.start()

    def disarm(self) -> None:
        """Serving ended."""
        if self._timer is not None:
            self._timer.cancel()

    def then(self, on_end: Callable[[], object] | None) -> Callable[[], object]:
        """``on_end``, once disarmed (serving ended: what ``on_end`` does may take long)."""

        def ended() -> object:
            self.disarm()
            return None if on_end is None else on_end()

        return ended


def _exit_stuck(drain: float, stderr: Any) -> None:
    stream = stderr or sys.stderr
    with contextlib.suppress(Exception):
        stream.write(
            f"ccwire: error: stopped, but tool calls cut off after the drain ({drain:g} s) "
            f"had not ended {STUCK_SECONDS:g} s later (a tool that ignores its "
            "cancellation): exiting without them\n"
        )
        stream.flush()
    os._exit(ExitCode.ERROR)


def _cut_off(stopped: str, cut_off: int, drain: float, stderr: Any) -> int:
    """The exit code of a server that stopped with ``cut_off`` requests cut off (1 if
    any, said on ``stderr``, else 0)."""
    if not cut_off:
        return ExitCode.OK
    (stderr or sys.stderr).write(
        f"ccwire: error: {stopped} while {cut_off} request(s) ran; cut off, not finished "
        f"{drain:g} s later (or at once by a second signal), each was answered with an error\n"
    )
    return ExitCode.ERROR


@contextlib.contextmanager
def _protocol_stdio() -> Iterator[tuple[int, int]]:
    """The protocol's own copies of file descriptors 0 and 1 (not inherited by child
    processes); meanwhile 1 is stderr and 0 is ``/dev/null``, so what a tool prints
    (``print()``, a child process it starts) goes to stderr instead of corrupting
    the stream of messages, and what it reads is not the client's messages.  Put
    back as they were after."""
    sys.stdout.flush()
    try:
        os.fstat(2)
    except OSError:  # started with stderr closed: what is printed goes nowhere
        sink = os.open(os.devnull, os.O_WRONLY)
        if sink != 2:
            os.dup2(sink, 2)
            os.close(sink)
    stdin, stdout = os.dup(0), os.dup(1)
    try:
        nothing = os.open(os.devnull, os.O_RDONLY)
        try:
            os.dup2(nothing, 0)
        finally:
            os.close(nothing)
        os.dup2(2, 1)
        yield stdin, stdout
    finally:
        with contextlib.suppress(OSError, ValueError):  # printed: on its way to stderr
            sys.stdout.flush()
        os.dup2(stdin, 0)
        os.dup2(stdout, 1)
        os.close(stdin)
        os.close(stdout)


def exit_without_abandoned_threads(code: int, io: CliIO) -> None:
    """End the process with ``code`` now if plain ``def`` handlers abandoned by the
    end of serving (Ctrl-C, or calls cut off once stdin ended) still run in threads:
    Python would wait for them at exit, forever for one that never returns.  Says so
    on stderr first.  Returns when there are none."""
    stuck = sorted(abandoned_threads().values())
    if not stuck:
        return
    io.stderr.write(
        f"ccwire: warning: exiting without waiting for {len(stuck)} tool call(s) still "
        f"running in a thread ({', '.join(stuck)})\n"
    )
    for stream in (io.stdout, io.stderr):
        stream.flush()
    os._exit(code)
