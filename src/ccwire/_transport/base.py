"""The transport interface: how the protocol layer moves lines to and from the CLI.

A transport carries whole NDJSON lines. `SubprocessTransport`
runs the real CLI; `MemoryTransport` is an in-memory stand-in
for tests. `StderrCollector` is the stderr handling both share.
"""

from __future__ import annotations

import abc
import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import anyio.abc

from .._core.errors import MessageEncodeError
from .._core.public import publish
from .._wire.framing import LineDecoder

__all__ = ["ProcessExit", "StderrCollector", "Transport", "check_line"]

logger = logging.getLogger("ccwire")

CLI_EXITED = "the Claude Code CLI exited"
"""Message of the `ProcessError` raised when the CLI's output ends badly."""


@dataclass(frozen=True)
class ProcessExit:
    """How the CLI process ended.

    ``returncode`` is the exit status (negative: killed by that signal; ``None``: it could
    not be collected); ``stderr_tail`` the last part of what it wrote to stderr.
    """

    returncode: int | None
    stderr_tail: str


def pin_async_library() -> None:
    """Record, for the current task and the tasks it starts, which async library runs it.

    anyio asks sniffio for the library whenever it creates an event or a cancel scope;
    unless the program was started with ``anyio.run`` (which records it), sniffio then
    inspects the running loop every time, several times per tool call. Setting
    sniffio's context variable (its documented way to say it) in a task of ccwire's own
    makes that a variable read; only that task and the tasks it starts see it.
    """
    try:
        import sniffio
    except ImportError:  # pragma: no cover
        return
    if sniffio.current_async_library_cvar.get() is not None:
        return
    try:
        name = sniffio.current_async_library()
    except sniffio.AsyncLibraryNotFoundError:  # pragma: no cover
        return
    sniffio.current_async_library_cvar.set(name)


def check_line(line: bytes) -> None:
    """Check that ``line`` is exactly one complete line: one ``b"\\n"``, at its end.

    Raises `MessageEncodeError` otherwise (before anything is written): a
    line without its newline would be glued to the next one, and the CLI exits on the
    first line that is not JSON.
    """
    if not isinstance(line, bytes):
        raise MessageEncodeError(f"a line must be bytes, not {type(line).__name__}")
    if not line.endswith(b"\n") or line.find(b"\n") != len(line) - 1:
        raise MessageEncodeError(
            "send_line() takes exactly one complete line ending in a single b'\\n'; "
            "nothing was written"
        )


class Transport(abc.ABC):
    """A bidirectional line channel to one CLI process.

    ``send_line`` may be called from many tasks at once (writes never interleave);
    ``receive_line`` from one task only.
    """

    async def launch(self) -> None:  # noqa: B027 - optional; the default does nothing
        """Optional early start: spawn the process now, before `start()`.

        Called (at most once) before the task group and the rest of the session exist,
        so the CLI boots while they are set up. `start()` launches the process
        itself when this was not called; `aclose()` stops a launched process that
        was never started. Raises like `start()`. The default does nothing.
        """

    @abc.abstractmethod
    async def start(self, task_group: anyio.abc.TaskGroup) -> None:
        """Start the process (unless `launch()` did) and its background tasks in
        ``task_group``.

        Raises `CLINotFoundError` or `CLIConnectionError`.
        """

    @abc.abstractmethod
    async def send_line(self, line: bytes) -> None:
        """Write one complete encoded line (ending in ``b"\\n"``) to the CLI's stdin.

        Raises `CLIConnectionError` if input is closed or the pipe broke,
        or `ProcessError` if the process has already died.
        """

    @abc.abstractmethod
    async def receive_line(self) -> bytes | None:
        """Return the next non-blank line from the CLI, without its newline.

        ``None`` at a clean end (end of output and exit status 0, or the transport was
        closed by `aclose()`). Raises `ProcessError` when output ended
        and the process failed.
        """

    def push_lines(self, handler: Callable[[list[bytes]], None]) -> list[bytes] | None:
        """Optional fast path: deliver every further batch of lines by calling ``handler``.

        A transport that supports it returns the lines it already holds (to be handled
        first, in order) and from then on calls ``handler(lines)`` with the lines of
        each read, in order, from the task that reads the CLI's output: no hand-over
        between tasks per line. The handler may empty the list as it goes (so a huge
        line can be freed before the next is parsed) and must not block.
        `receive_line()` then only reports the end (``None`` or the error). The
        default returns ``None``: not supported, keep calling `receive_line()`.
        """
        return None

    @abc.abstractmethod
    async def end_input(self) -> None:
        """Close the CLI's stdin. Idempotent; never raises for an already-closed pipe."""

    @abc.abstractmethod
    async def aclose(self) -> None:
        """Stop the CLI (bounded, shielded, idempotent) and release every resource."""

    @property
    @abc.abstractmethod
    def exit_info(self) -> ProcessExit | None:
        """How the process ended, or ``None`` while it is running."""


class StderrCollector:
    """Split stderr bytes into text lines, forward them to a callback, keep a bounded tail.

    The tail holds at most ``tail_bytes`` bytes of whole lines (a single longer line is
    cut to its end). An exception from ``callback`` is logged once on the ``ccwire``
    logger and otherwise ignored, so the stream keeps draining. An unfinished line longer
    than ``max_line_bytes`` is passed on in pieces so memory stays bounded.
    """

    def __init__(
        self,
        callback: Callable[[str], None] | None = None,
        *,
        tail_bytes: int = 64 * 1024,
        max_line_bytes: int = 1024 * 1024,
    ) -> None:
        self._callback = callback
        self._tail_bytes = max(0, tail_bytes)
        self._max_line = max(1, max_line_bytes)
        self._decoder = LineDecoder()
        self._tail: deque[bytes] = deque()
        self._tail_size = 0
        self._callback_failed = False

    def feed(self, chunk: bytes) -> None:
        """Process a chunk of stderr output."""
        for line in self._decoder.feed(chunk):
            self._line(line)
        if self._decoder.pending_bytes > self._max_line:
            self.flush()

    def flush(self) -> None:
        """Process the unfinished last line (call at end of stream)."""
        rest = self._decoder.flush()
        if rest is not None:
            self._line(rest)

    def write_text(self, text: str) -> None:
        """Process ``text`` as if it had been written to stderr (a complete write)."""
        self.feed(text.encode("utf-8", "surrogateescape"))
        self.flush()

    @property
    def tail(self) -> str:
        """The last lines written to stderr, joined with ``"\\n"``."""
        return b"\n".join(self._tail).decode("utf-8", "replace")

    def _line(self, raw: bytes) -> None:
        raw = raw.rstrip()
        self._remember(raw)
        if self._callback is None:
            return
        try:
            self._callback(raw.decode("utf-8", "replace"))
        except Exception:
            if not self._callback_failed:
                self._callback_failed = True
                logger.exception("the stderr callback raised; further errors are not reported")

    def _remember(self, raw: bytes) -> None:
        if self._tail_bytes == 0:
            return
        if len(raw) >= self._tail_bytes:
            self._tail.clear()
            self._tail.append(raw[-self._tail_bytes :])
            self._tail_size = len(self._tail[0])
            return
        self._tail.append(raw)
        self._tail_size += len(raw) + 1
        while self._tail_size > self._tail_bytes and len(self._tail) > 1:
            self._tail_size -= len(self._tail.popleft()) + 1


publish(Transport)
