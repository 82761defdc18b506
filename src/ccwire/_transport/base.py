"""The transport interfaces: how the protocol layer moves lines to and from the CLI.

`Transport` is ``claude-agent-sdk``'s interface (six methods: `connect()`, `write()`,
`read_messages()`, `close()`, `is_ready()`, `end_input()`), for custom transports.
`LineTransport` is the one ccwire's protocol layer drives: whole NDJSON lines, started
in a task group. `SubprocessTransport` runs the real CLI and `MemoryTransport` is an
in-memory stand-in for tests; both are `LineTransport`\\ s. Any other object with the
six methods (a `Transport` subclass, a subclass of the reference's own class, or an
object that merely has them) is driven through `ReferenceTransportAdapter`:
`as_line_transport()` picks. `StderrCollector` is the stderr handling the
transports share.
"""

from __future__ import annotations

import abc
import contextlib
import json
import logging
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.abc

from .._core.cancel import raised_by_callback
from .._core.errors import (
    CcwireError,
    CLIConnectionError,
    CLIJSONDecodeError,
    MessageEncodeError,
    OptionsError,
)
from .._wire.framing import LineDecoder

__all__ = [
    "REFERENCE_METHODS",
    "LineTransport",
    "ProcessExit",
    "ReferenceTransportAdapter",
    "StderrCollector",
    "Transport",
    "as_line_transport",
    "check_line",
]

logger = logging.getLogger("ccwire")

CLI_EXITED = "the Claude Code CLI exited"
"""Message of the `ProcessError` raised when the CLI's output ends badly."""

REFERENCE_METHODS = ("connect", "write", "read_messages", "close", "is_ready", "end_input")
"""The methods of ``claude-agent-sdk``'s transport interface."""

_CLOSE_TIMEOUT = 10.0
"""Seconds `ReferenceTransportAdapter.aclose()` waits for the wrapped ``close()``."""


@dataclass(frozen=True)
class ProcessExit:
    """How the CLI process ended.

    ``returncode`` is the exit status (negative: killed by that signal; ``None``: it could
    not be collected); ``stderr_tail`` the last part of what it wrote to stderr.
    """

    returncode: int | None
    stderr_tail: str


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
    """A custom way of reaching the CLI: ``claude-agent-sdk``'s transport interface.

    Implement the six methods and pass an instance to ``ClaudeSDKClient(options,
    transport)`` or ``query(..., transport=...)``; a transport written for
    ``claude-agent-sdk`` plugs in unchanged. So does any object that has the six
    methods without deriving from this class (the reference accepts those too).

    ccwire calls `connect()` once, then reads `read_messages()` in a background task
    while it `write()`\\ s JSON lines; `end_input()` closes the CLI's input and
    `close()` (awaited shielded from cancellation, at most 10 seconds) releases
    everything. An exception from a method reaches the caller as a
    `CLIConnectionError`.
    """

    @abc.abstractmethod
    async def connect(self) -> None:
        """Connect the transport (start the process, open the connection)."""

    @abc.abstractmethod
    async def write(self, data: str) -> None:
        """Write raw text to the CLI: one or more JSON lines, each ending in a newline.

        Args:
            data: The text.
        """

    @abc.abstractmethod
    def read_messages(self) -> AsyncIterator[dict[str, Any]]:
        """The CLI's output as decoded JSON objects, until it ends.

        Returns:
            An async iterator of the messages.
        """

    @abc.abstractmethod
    async def close(self) -> None:
        """Close the transport and release its resources (bound your own waits)."""

    @abc.abstractmethod
    def is_ready(self) -> bool:
        """Whether the transport can send and receive now.

        Returns:
            ``True`` while connected.
        """

    @abc.abstractmethod
    async def end_input(self) -> None:
        """End the CLI's input (close its stdin)."""


class LineTransport(Transport):
    """A bidirectional line channel to one CLI process: the interface ccwire drives.

    A subclass implements `start()`, `send_line()`, `receive_line()`,
    `end_input()`, `aclose()` and `exit_info` (optionally `launch()`);
    `send_line` may be called from many tasks at once (writes never interleave),
    ``receive_line`` from one task only. The `Transport` methods are derived from
    them, except `connect()`: a line transport starts in a session's task group.
    """

    async def launch(self) -> None:
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

        Raises:
            CLINotFoundError: The CLI cannot be found.
            CLIConnectionError: It cannot be started or reached.
        """

    @abc.abstractmethod
    async def send_line(self, line: bytes) -> None:
        """Write one complete encoded line (ending in ``b"\\n"``) to the CLI's stdin.

        Raises:
            CLIConnectionError: Input is closed or the pipe broke.
            ProcessError: The process has already died.
        """

    @abc.abstractmethod
    async def receive_line(self) -> bytes | None:
        """Return the next non-blank line from the CLI, without its newline.

        Returns:
            The line, or ``None`` at a clean end (end of output and exit status 0, or
            the transport was closed by `aclose()`).

        Raises:
            ProcessError: Output ended and the process failed.
        """

    @abc.abstractmethod
    async def end_input(self) -> None:
        """Close the CLI's stdin. Idempotent; never raises for an already-closed pipe."""

    @abc.abstractmethod
    async def aclose(self) -> None:
        """Stop the CLI (bounded, shielded, idempotent) and release every resource."""

    async def terminate(self) -> None:
        """Stop a CLI that does not end once its input is closed (it lingers, or a
        process it started holds its output open) the way `aclose()` stops it after its
        grace: SIGTERM, a grace, then SIGKILL (bounded, shielded). Unlike `aclose()`,
        what the CLI wrote stays readable: `receive_line()` returns it, then ends
        (``None``: a stop asked for is no failure). `aclose()` still follows. The
        default calls `kill()`."""
        self.kill()

    def kill(self) -> None:
        """Stop the CLI now, without the graces `aclose()` gives it to exit by itself:
        for a CLI that answers nothing (stopped, wedged, its link frozen), which would
        not use them. `aclose()` still follows, to reap it and release everything.
        The default does nothing (`aclose()` stops the CLI as usual)."""

    @property
    @abc.abstractmethod
    def exit_info(self) -> ProcessExit | None:
        """How the process ended, or ``None`` while it is running (or unknown)."""

    # ------------------------------------------- the Transport methods, derived

    async def connect(self) -> None:
        """Not for a line transport: it starts with `start()`, in a session.

        Raises:
            CLIConnectionError: Always.
        """
        raise CLIConnectionError(
            f"{type(self).__name__} starts with start(task_group): pass it to "
            "ClaudeSDKClient(options, transport) or query(..., transport=...)"
        )

    async def write(self, data: str) -> None:
        """Write raw text (one or more JSON lines) to the CLI.

        Args:
            data: The text; each non-blank line is sent with `send_line()`.
        """
        for line in data.splitlines():
            if line.strip():
                await self.send_line(line.encode("utf-8") + b"\n")

    def read_messages(self) -> AsyncIterator[dict[str, Any]]:
        """The CLI's output as decoded JSON objects, until it ends.

        Returns:
            An async iterator of the messages (each line of `receive_line()`,
            decoded).
        """
        return _read_messages(self)

    async def close(self) -> None:
        """Close the transport and release its resources (awaits `aclose()`)."""
        await self.aclose()

    def is_ready(self) -> bool:
        """Whether the transport can send and receive now.

        Returns:
            ``True`` until the process has ended.
        """
        return self.exit_info is None


async def _read_messages(transport: LineTransport) -> AsyncIterator[dict[str, Any]]:
    while True:
        line = await transport.receive_line()
        if line is None:
            return
        try:
            value = json.loads(line)
        except ValueError as exc:
            raise CLIJSONDecodeError(line[:200].decode("utf-8", "replace"), exc) from exc
        if isinstance(value, dict):
            yield value


def as_line_transport(transport: object) -> LineTransport:
    """``transport`` as the `LineTransport` ccwire drives.

    A `LineTransport` is used as it is; any other object with the six methods of
    `Transport` (a subclass or not) is wrapped in a `ReferenceTransportAdapter`.

    Args:
        transport: What the caller passed as ``transport``.

    Returns:
        The transport to drive.

    Raises:
        OptionsError: ``transport`` lacks some of the six methods (also a `TypeError`).
    """
    if isinstance(transport, LineTransport):
        return transport
    missing = [name for name in REFERENCE_METHODS if not callable(getattr(transport, name, None))]
    if missing:
        raise OptionsError(
            "transport must have the methods connect(), write(), read_messages(), "
            f"close(), is_ready() and end_input(); {type(transport).__name__} lacks "
            + ", ".join(f"{name}()" for name in missing)
        )
    return ReferenceTransportAdapter(transport)


@contextlib.contextmanager
def _failures_of(method: str) -> Iterator[None]:
    """Turn an exception of the wrapped transport's ``method`` into a
    `CLIConnectionError` (ccwire's own errors pass as they are)."""
    try:
        yield
    except CcwireError:
        raise
    except Exception as exc:
        raise CLIConnectionError(f"the transport's {method}() failed: {exc!r}") from exc


class ReferenceTransportAdapter(LineTransport):
    """Drives an object with ``claude-agent-sdk``'s six transport methods as a
    `LineTransport` (composition: the object is held, not extended).

    `start()` awaits ``connect()``; `send_line()` passes the line, as text, to
    ``write()``; `receive_line()` takes the next message of ``read_messages()``,
    re-encoded, one at a time (nothing is read ahead), and the first only once the
    first line was written, as the reference reads them; `aclose()` awaits
    ``close()`` (shielded, at most 10 seconds). A failure of the wrapped object is a
    `CLIConnectionError`.
    """

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self._closed = False
        self._messages: AsyncIterator[Any] | None = None
        self._wrote: anyio.Event | None = None

    def __repr__(self) -> str:
        return f"<ReferenceTransportAdapter of {self.inner!r}>"

    async def start(self, task_group: anyio.abc.TaskGroup) -> None:
        """Connect the wrapped transport."""
        if self._messages is not None or self._closed:
            raise CLIConnectionError("this transport was already started")
        self._wrote = anyio.Event()
        with _failures_of("connect"):
            await self.inner.connect()
        with _failures_of("read_messages"):
            self._messages = aiter(self.inner.read_messages())

    async def send_line(self, line: bytes) -> None:
        """Pass one encoded line, as text, to the wrapped ``write()``."""
        check_line(line)
        wrote = self._wrote
        if wrote is None:
            raise CLIConnectionError("the transport is not started")
        try:
            with _failures_of("write"):
                await self.inner.write(line.decode("utf-8"))
        finally:
            wrote.set()

    async def receive_line(self) -> bytes | None:
        """The next message of the wrapped ``read_messages()``, encoded as a line."""
        messages, wrote = self._messages, self._wrote
        if messages is None or wrote is None:
            return None
        await wrote.wait()
        if self._closed:
            return None
        try:
            message = await anext(messages)
        except StopAsyncIteration:
            return None
        except CcwireError:
            raise
        except Exception as exc:
            if self._closed:
                return None  # closing ended the stream
            raise CLIConnectionError(f"the transport's read_messages() failed: {exc!r}") from exc
        return json.dumps(message).encode("utf-8")

    async def end_input(self) -> None:
        """Await the wrapped ``end_input()``."""
        with _failures_of("end_input"):
            await self.inner.end_input()

    async def terminate(self) -> None:
        """Stop a CLI that lingers: the wrapped ``close()`` is the only stop a transport
        of this interface has (`aclose()`); the messages then end."""
        await self.aclose()

    async def aclose(self) -> None:
        """Await the wrapped ``close()`` (shielded, at most 10 seconds). Idempotent."""
        if self._closed:
            return
        self._closed = True
        if self._wrote is not None:
            self._wrote.set()  # a reader waiting for the first write ends
        with anyio.CancelScope(shield=True), anyio.move_on_after(_CLOSE_TIMEOUT):
            await self.inner.close()
            await self._close_messages()

    async def _close_messages(self) -> None:
        """Close the wrapped ``read_messages()`` iterator, unless a read is inside it (it
        ends as the transport closed); left open, an async generator is finalized by the
        garbage collector (trio warns)."""
        close = getattr(self._messages, "aclose", None)
        if close is None or getattr(self._messages, "ag_running", False):
            return  # (a reader is inside it: the iterator ends with the transport)
        try:
            await close()
        except Exception:  # the transport's own cleanup: it is closed all the same
            logger.warning("ccwire: the transport's read_messages() failed to close", exc_info=True)

    @property
    def exit_info(self) -> ProcessExit | None:
        """Always ``None``: a custom transport reports no process exit."""
        return None

    def is_ready(self) -> bool:
        """The wrapped ``is_ready()``."""
        return bool(self.inner.is_ready())


class StderrCollector:
    """Split stderr bytes into text lines, forward them to a callback, keep a bounded tail.

    The tail holds at most ``tail_bytes`` bytes of whole lines (a single longer line is
    cut to its end). An exception from ``callback`` (its own cancellation exception
    too) is logged once on the ``ccwire`` logger and otherwise ignored, so the stream
    keeps draining. An unfinished line longer than ``max_line_bytes`` is passed on in
    pieces so memory stays bounded.
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
        except BaseException as exc:
            # the callback's own cancellation exception is its failure, not a cancellation
            # of the drain (which would stop the whole connection)
            if not isinstance(exc, Exception) and not raised_by_callback(exc):
                raise
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
