"""The transport interface: how the protocol layer moves lines to and from the CLI.

A transport carries whole NDJSON lines. `SubprocessTransport`
runs the real CLI; `MemoryTransport` is an in-memory stand-in
for tests. `StderrCollector` is the stderr handling both share.
"""

from __future__ import annotations

import abc
import contextlib
import json
import logging
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.abc

from .._core.errors import (
    CcwireError,
    CLIConnectionError,
    CLIJSONDecodeError,
    MessageEncodeError,
)
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


_NATIVE_SHAPE = ("start", "send_line", "receive_line", "end_input", "aclose", "exit_info")
_REFERENCE_SHAPE = ("connect", "write", "read_messages", "close", "is_ready", "end_input")


def _overrides(cls: type, name: str) -> bool:
    """Whether ``cls`` has its own ``name`` (not only the base `Transport`'s)."""
    return any(name in vars(klass) for klass in cls.__mro__ if not _is_base(klass))


def _is_base(klass: type) -> bool:
    """Whether ``klass`` is the `Transport` base class itself (not a subclass)."""
    return vars(klass).get("_transport_base", False) is True


class _TransportMeta(abc.ABCMeta):
    """Makes abstract, in each `Transport` class, what is missing from the shape it
    implements (the one of the two with fewer methods missing)."""

    def __new__(
        mcs, name: str, bases: tuple[type, ...], namespace: dict[str, Any], **kwargs: Any
    ) -> _TransportMeta:
        cls = super().__new__(mcs, name, bases, namespace, **kwargs)
        missing_native = {n for n in _NATIVE_SHAPE if not _overrides(cls, n)}
        missing_reference = {n for n in _REFERENCE_SHAPE if not _overrides(cls, n)}
        if not missing_native or not missing_reference:
            missing: set[str] = set()
        elif len(missing_reference) < len(missing_native):
            missing = missing_reference
        else:
            missing = missing_native
        others = {
            n
            for n in getattr(cls, "__abstractmethods__", ())
            if n not in _NATIVE_SHAPE + _REFERENCE_SHAPE
        }
        cls.__abstractmethods__ = frozenset(missing | others)
        return cls


class Transport(metaclass=_TransportMeta):
    """A bidirectional line channel to one CLI process.

    A subclass implements one of two shapes, and gets the other from this class:

    * ccwire's: `start()`, `send_line()`, `receive_line()`, `end_input()`,
      `aclose()` and `exit_info` (optionally `launch()`);
      `send_line` may be called from many tasks at once (writes never interleave),
      ``receive_line`` from one task only;
    * ``claude-agent-sdk``'s: `connect()`, `write()`, `read_messages()`,
      `close()`, `is_ready()` and `end_input()`, so a custom transport written for
      it plugs into ``ClaudeSDKClient(options, transport)`` unchanged.

    A class that implements neither shape completely cannot be instantiated (its
    missing methods are abstract).
    """

    _transport_base = True  # this class, not a subclass: see `_overrides`

    # ----------------------------------------------------------- ccwire's shape

    async def launch(self) -> None:
        """Optional early start: spawn the process now, before `start()`.

        Called (at most once) before the task group and the rest of the session exist,
        so the CLI boots while they are set up. `start()` launches the process
        itself when this was not called; `aclose()` stops a launched process that
        was never started. Raises like `start()`. The default does nothing.
        """

    async def start(self, task_group: anyio.abc.TaskGroup) -> None:
        """Start the process (unless `launch()` did) and its background tasks in
        ``task_group``.

        The default (for a transport of ``claude-agent-sdk``'s shape) awaits
        `connect()` and reads `read_messages()` in ``task_group``.

        Raises:
            CLINotFoundError: The CLI cannot be found.
            CLIConnectionError: It cannot be started or reached.
        """
        await _bridge(self).start(self, task_group)

    async def send_line(self, line: bytes) -> None:
        """Write one complete encoded line (ending in ``b"\\n"``) to the CLI's stdin.

        The default passes the line, as text, to `write()`.

        Raises:
            CLIConnectionError: Input is closed or the pipe broke.
            ProcessError: The process has already died.
        """
        check_line(line)
        try:
            await self.write(line.decode("utf-8"))
        except CcwireError:
            raise
        except Exception as exc:
            raise CLIConnectionError(f"the transport's write() failed: {exc!r}") from exc

    async def receive_line(self) -> bytes | None:
        """Return the next non-blank line from the CLI, without its newline.

        The default returns the next message of `read_messages()`, encoded.

        Returns:
            The line, or ``None`` at a clean end (end of output and exit status 0, or
            the transport was closed by `aclose()`).

        Raises:
            ProcessError: Output ended and the process failed.
        """
        return await _bridge(self).receive()

    async def end_input(self) -> None:
        """Close the CLI's stdin. Idempotent; never raises for an already-closed pipe."""
        raise NotImplementedError  # pragma: no cover - abstract in every concrete shape

    async def aclose(self) -> None:
        """Stop the CLI (bounded, shielded, idempotent) and release every resource.

        The default awaits `close()` (shielded, at most 10 seconds).
        """
        bridge = _bridge(self)
        bridge.closed = True
        bridge.received.close()  # a reader still pumping stops at its next message
        with anyio.CancelScope(shield=True), anyio.move_on_after(_CLOSE_TIMEOUT):
            await self.close()

    @property
    def exit_info(self) -> ProcessExit | None:
        """How the process ended, or ``None`` while it is running (or unknown)."""
        return None

    # -------------------------------------------------- claude-agent-sdk's shape

    async def connect(self) -> None:
        """Connect the transport (``claude-agent-sdk``'s name for starting it).

        ccwire's own transports start inside a session's task group (`start()`):
        pass them to ``ClaudeSDKClient`` or ``query()``, which do it.

        Raises:
            CLIConnectionError: Always, for a transport of ccwire's shape.
        """
        raise CLIConnectionError(
            f"{type(self).__name__} starts with start(task_group): pass it to "
            "ClaudeSDKClient(options, transport) or query(..., transport=...)"
        )

    async def write(self, data: str) -> None:
        """Write raw text (one or more JSON lines) to the CLI.

        Args:
            data: The text; each line is sent with `send_line()`.
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
            ``True`` until the process has ended or the transport was closed.
        """
        bridge = _bridge(self)
        return not bridge.closed and self.exit_info is None


_CLOSE_TIMEOUT = 10.0
"""Seconds the default `aclose()` waits for `close()`."""


async def _read_messages(transport: Transport) -> AsyncIterator[dict[str, Any]]:
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


class _Bridge:
    """The state behind the ccwire-shape methods of a ``claude-agent-sdk``-shaped
    transport: the messages `read_messages()` produced, handed to `receive_line()`."""

    def __init__(self) -> None:
        self.closed = False
        self.send, self.received = anyio.create_memory_object_stream[bytes | BaseException | None](
            16
        )

    async def start(self, transport: Transport, task_group: anyio.abc.TaskGroup) -> None:
        try:
            await transport.connect()
        except CcwireError:
            raise
        except Exception as exc:
            raise CLIConnectionError(f"the transport's connect() failed: {exc!r}") from exc
        task_group.start_soon(self._pump, transport)

    async def _pump(self, transport: Transport) -> None:
        end: bytes | BaseException | None = None
        try:
            try:
                async for message in transport.read_messages():
                    await self.send.send(json.dumps(message).encode("utf-8"))
            except anyio.get_cancelled_exc_class():
                raise
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return  # the reading side is gone: nobody to tell
            except CcwireError as exc:
                end = exc
            except Exception as exc:
                end = CLIConnectionError(f"the transport's read_messages() failed: {exc!r}")
                end.__cause__ = exc
            # the end (None: clean), after every message; waits for the reader like them
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                await self.send.send(end)
        finally:
            self.send.close()

    async def receive(self) -> bytes | None:
        if self.closed:
            return None
        try:
            item = await self.received.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            return None
        if isinstance(item, BaseException):
            raise item
        return item


def _bridge(transport: Transport) -> _Bridge:
    bridge: _Bridge | None = transport.__dict__.get("_ccwire_bridge")
    if bridge is None:
        bridge = _Bridge()
        transport.__dict__["_ccwire_bridge"] = bridge
    return bridge


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
